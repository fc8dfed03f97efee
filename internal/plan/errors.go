package plan

import (
	"errors"
	"fmt"
)

// ErrPlan marks an error in what was asked for, as opposed to a failure
// while measuring: errors.Is(err, ErrPlan).
var ErrPlan = errors.New("bad plan")

// Field names one part of a plan or of where it runs. Its value is the
// name of the command's flag that sets it; a command that spells its
// flags otherwise maps them (FieldError.Field).
type Field string

// FieldError is a plan that cannot be measured as given, by the field at
// fault: the command names its flag, and the text says why.
type FieldError struct {
	Field Field
	Err   error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Err.Error()
	}
	return "-" + string(e.Field) + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() error { return e.Err }

// Is makes every FieldError an ErrPlan.
func (e *FieldError) Is(target error) bool { return target == ErrPlan }

// Errorf is a FieldError of field f.
func Errorf(f Field, format string, args ...any) error {
	return &FieldError{Field: f, Err: fmt.Errorf(format, args...)}
}

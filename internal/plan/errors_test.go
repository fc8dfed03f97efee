package plan

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		text string
	}{
		{"a field", Errorf("window", "%s is not a topology of the plan", "nginx-fcgi-tcp"), "-window: nginx-fcgi-tcp is not a topology of the plan"},
		{"no field", Errorf("", "nothing to measure"), "nothing to measure"},
		{"wrapped", fmt.Errorf("resuming: %w", Errorf("budget", "planned without one")), "resuming: -budget: planned without one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.text, tc.err.Error())
			assert.ErrorIs(t, tc.err, ErrPlan)
		})
	}
	var fe *FieldError
	require.True(t, errors.As(fmt.Errorf("x: %w", Errorf("reps", "two")), &fe))
	assert.Equal(t, Field("reps"), fe.Field)
	assert.NotErrorIs(t, errors.New("bad plan"), ErrPlan)
}

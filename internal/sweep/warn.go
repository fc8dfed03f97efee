package sweep

import (
	"fmt"

	"github.com/topobench/topobench/internal/results"
)

// warn prints a warning about the run's set-up and keeps it for the run's
// record (env.json's warnings, which the report lists): what went wrong
// without stopping the sweep.
func (s *sweep) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.Log, "warning: %s\n", msg)
	s.warnings = append(s.warnings, msg)
}

// writeEnv writes env.json with the warnings so far; warnings raised
// before the directory existed are written with the first call after.
func (s *sweep) writeEnv() error {
	s.env.Warnings = s.warnings
	return results.WriteEnv(s.Dir, s.env)
}

package sweep

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WarningsFile holds, one a line, what went wrong with the run's set-up
// without stopping it (a network setting not copied into a namespace, a
// server that did not stop cleanly): printed as it happens and kept with
// the run, so the report's reader sees it too.
//
// For the lead: these belong in env.json as results.Env.Warnings
// ([]string, "warnings"); until that field exists they are kept here.
const WarningsFile = "warnings.txt"

// warn prints a warning and keeps it for the run's record.
func (s *sweep) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(s.Log, "warning: %s\n", msg)
	s.warnings = append(s.warnings, msg)
}

// writeWarnings adds the warnings not yet written to Dir's WarningsFile;
// warnings raised before the directory existed are written with the
// first call after.
func (s *sweep) writeWarnings() error {
	if s.Dir == "" || s.warned == len(s.warnings) {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, WarningsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("recording warnings: %w", err)
	}
	var b strings.Builder
	for _, w := range s.warnings[s.warned:] {
		// One line each: a multi-line error keeps its lines indented.
		b.WriteString(strings.ReplaceAll(strings.TrimRight(w, "\n"), "\n", "\n    ") + "\n")
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording warnings: %w", err)
	}
	s.warned = len(s.warnings)
	return nil
}

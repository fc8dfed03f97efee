package sweep

import (
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// checkOut refuses a results directory that would mix a new run with
// other files: one that holds a run already (finish that with -resume) or
// that holds anything else (a run would overwrite its summary.md). A
// missing or empty directory is fine; "" means results/<time>, always new.
func checkOut(dir string) error {
	if dir == "" {
		return nil
	}
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return &plan.FieldError{Field: plan.Out, Err: err}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && !fi.IsDir() {
		return plan.Errorf(plan.Out, "%s is a file, not a directory", dir)
	}
	if _, err := f.Readdirnames(1); errors.Is(err, io.EOF) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, results.EnvFile)); err == nil {
		return plan.Errorf(plan.Out, "%s holds a run already; finish it with -resume %s, or choose another -out", dir, dir)
	}
	return plan.Errorf(plan.Out, "%s is not empty and holds no topobench run (no %s); choose another -out", dir, results.EnvFile)
}

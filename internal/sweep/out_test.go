package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func TestCheckOut(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files ...string) string {
		dir := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644))
		}
		return dir
	}
	file := filepath.Join(root, "plain")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tt := range []struct {
		name, dir, want string
	}{
		{"default", "", ""},
		{"missing", filepath.Join(root, "new"), ""},
		{"empty", mk("empty"), ""},
		{"a run", mk("run", results.EnvFile, "summary.md"), "holds a run already; finish it with -resume"},
		{"someone's notes", mk("notes", "summary.md"), "is not empty and holds no topobench run (no env.json); choose another -out"},
		{"a file", file, "is a file, not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOut(tt.dir)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), "-out: ")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/results"
)

// TestWarningsAreKept: a warning is printed and kept in env.json, those
// raised before the directory existed too, each once.
func TestWarningsAreKept(t *testing.T) {
	var log bytes.Buffer
	s := &sweep{Options: Options{Log: &log}}
	s.warn("copying network settings into namespace %s: %s", "tb-1-0-srv", "sysctl not found in PATH")
	s.Dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(s.Dir, results.RunsDir), 0o755))
	s.warn("stopping nginx: exit status 1\n    [alert] worker process exited")
	require.NoError(t, s.writeEnv())
	require.NoError(t, s.writeEnv())
	env, _, err := results.Load(s.Dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"copying network settings into namespace tb-1-0-srv: sysctl not found in PATH",
		"stopping nginx: exit status 1\n    [alert] worker process exited"}, env.Warnings)
	assert.Equal(t, "warning: copying network settings into namespace tb-1-0-srv: sysctl not found in PATH\n"+
		"warning: stopping nginx: exit status 1\n    [alert] worker process exited\n", log.String())
}

// TestCopySysctlsWithoutSysctl: a minimal root without procps gets the
// install step named, not ip's exit status.
func TestCopySysctlsWithoutSysctl(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := copySysctls(context.Background(), "tb-0-0-srv", map[string]string{"net.core.somaxconn": "4096"})
	require.Error(t, err)
	assert.Equal(t, "copying network settings into namespace tb-0-0-srv: sysctl not found in PATH (procps: .ci/install-tools)", err.Error())
	assert.NoError(t, copySysctls(context.Background(), "tb-0-0-srv", map[string]string{"fs.file-max": "2097152"}), "nothing per namespace to copy")
}

package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWarningsAreKept: a warning is printed and, once the directory
// exists, on disk too; those raised before it are written with the first
// write after, and none twice.
func TestWarningsAreKept(t *testing.T) {
	var log bytes.Buffer
	s := &sweep{Options: Options{Log: &log}}
	s.warn("copying network settings into namespace %s: %s", "tb-1-0-srv", "sysctl not found in PATH")
	require.NoError(t, s.writeWarnings(), "no directory yet: kept for later")
	s.Dir = t.TempDir()
	s.warn("stopping nginx: exit status 1\n    [alert] worker process exited")
	require.NoError(t, s.writeWarnings())
	require.NoError(t, s.writeWarnings())
	b, err := os.ReadFile(filepath.Join(s.Dir, WarningsFile))
	require.NoError(t, err)
	assert.Equal(t, "copying network settings into namespace tb-1-0-srv: sysctl not found in PATH\n"+
		"stopping nginx: exit status 1\n        [alert] worker process exited\n", string(b))
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

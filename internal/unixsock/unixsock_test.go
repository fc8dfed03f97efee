package unixsock_test

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/unixsock"
)

// staleSocket leaves a socket file behind with nobody listening, as a
// crashed server does.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	require.NoError(t, err)
	l.SetUnlinkOnClose(false)
	require.NoError(t, l.Close())
	fi, err := os.Lstat(path)
	require.NoError(t, err)
	require.Equal(t, os.ModeSocket, fi.Mode().Type())
}

func TestListen(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
		wantErr string // empty: Listen succeeds
		kept    bool   // the file must still be there after a failure
	}{
		{name: "fresh path"},
		{name: "stale socket is replaced", prepare: staleSocket},
		{name: "live socket is left alone", prepare: func(t *testing.T, path string) {
			l, err := net.Listen("unix", path)
			require.NoError(t, err)
			t.Cleanup(func() { l.Close() })
		}, wantErr: "another server is listening on it", kept: true},
		{name: "regular file is refused", prepare: func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("data"), 0o644))
		}, wantErr: "not a socket (regular file)", kept: true},
		{name: "directory is refused", prepare: func(t *testing.T, path string) {
			require.NoError(t, os.Mkdir(path, 0o755))
		}, wantErr: "not a socket (directory)", kept: true},
		{name: "symlink is refused", prepare: func(t *testing.T, path string) {
			target := path + ".real"
			staleSocket(t, target)
			require.NoError(t, os.Symlink(target, path))
		}, wantErr: "not a socket (symbolic link)", kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(testenv.ShortDir(t), "s.sock")
			if tt.prepare != nil {
				tt.prepare(t, path)
			}
			l, err := unixsock.Listen(path, 0o666)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorContains(t, err, tt.wantErr)
				assert.ErrorContains(t, err, path, "the error names the socket")
				_, statErr := os.Lstat(path)
				assert.Equal(t, tt.kept, statErr == nil)
				return
			}
			require.NoError(t, err)
			fi, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())

			// It accepts, and closing it removes the file.
			c, err := net.Dial("unix", path)
			require.NoError(t, err)
			c.Close()
			require.NoError(t, l.Close())
			_, err = os.Lstat(path)
			assert.True(t, os.IsNotExist(err))
		})
	}
}

func TestListenMode(t *testing.T) {
	path := filepath.Join(testenv.ShortDir(t), "s.sock")
	l, err := unixsock.Listen(path, 0o600)
	require.NoError(t, err)
	defer l.Close()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

func TestListenBadInput(t *testing.T) {
	dir := testenv.ShortDir(t)
	_, err := unixsock.Listen("", 0o666)
	assert.ErrorContains(t, err, "empty")

	long := filepath.Join(dir, strings.Repeat("x", 120))
	_, err = unixsock.Listen(long, 0o666)
	assert.ErrorContains(t, err, "longer than the 107")

	_, err = unixsock.Listen(filepath.Join(dir, "s.sock"), os.ModeSetuid|0o666)
	assert.ErrorContains(t, err, "beyond permissions")

	_, err = unixsock.Listen(filepath.Join(dir, "missing", "s.sock"), 0o666)
	assert.ErrorContains(t, err, "missing/s.sock")
}

func TestLiveAndRemove(t *testing.T) {
	dir := testenv.ShortDir(t)
	path := filepath.Join(dir, "s.sock")

	live, err := unixsock.Live(path)
	require.NoError(t, err)
	assert.False(t, live, "no file")

	staleSocket(t, path)
	live, err = unixsock.Live(path)
	require.NoError(t, err)
	assert.False(t, live, "stale")
	require.NoError(t, unixsock.Remove(path))
	_, err = os.Lstat(path)
	assert.True(t, os.IsNotExist(err))
	require.NoError(t, unixsock.Remove(path), "removing a missing socket is fine")

	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	assert.ErrorContains(t, unixsock.Remove(file), "not removing")
	_, err = os.Lstat(file)
	assert.NoError(t, err)
}

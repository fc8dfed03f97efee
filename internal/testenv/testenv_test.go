package testenv_test

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/unixsock"
)

func TestShortDir(t *testing.T) {
	var dir string
	t.Run("holds a socket", func(t *testing.T) {
		dir = testenv.ShortDir(t)
		// Room to spare beyond topology's longest name, go-http.sock.
		path := filepath.Join(dir, "a-socket-name-of-thirty-bytes.sock")
		require.LessOrEqual(t, len(path), unixsock.MaxPath)
		l, err := net.Listen("unix", path)
		require.NoError(t, err)
		require.NoError(t, l.Close())
	})
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "removed when the test ends")
}

func TestFreeAddr(t *testing.T) {
	addr := testenv.FreeAddr(t)
	host, _, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port should still be free")
	require.NoError(t, l.Close())
}

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

func TestEstablished(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	addr := l.Addr().String()
	count := func() int {
		n, err := testenv.Established(addr)
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 0, count(), "a listener is not a connection")
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer c.Close()
		s, err := l.Accept()
		require.NoError(t, err)
		conns = append(conns, s)
	}
	assert.Equal(t, 3, count())
	for _, s := range conns {
		s.Close()
	}
	assert.Equal(t, 0, count(), "closed by the server, whatever the client does")

	for _, bad := range []string{"localhost:80", "[::1]:80", "127.0.0.1"} {
		_, err := testenv.Established(bad)
		assert.ErrorContains(t, err, bad)
	}
}

func TestClientHello(t *testing.T) {
	b, err := testenv.ClientHello()
	require.NoError(t, err)
	require.Greater(t, len(b), 5)
	assert.Equal(t, byte(22), b[0], "a handshake record")
	assert.Equal(t, byte(1), b[5], "a ClientHello")
	assert.Equal(t, len(b)-5, int(b[3])<<8|int(b[4]), "one whole record")
}

package rig

import (
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStandalonePort: the standalone side's port is below the ephemeral
// range, the first free one from 18080.
func TestStandalonePort(t *testing.T) {
	addr, err := standalonePort("127.0.0.1:8080", 18080)
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, port, "18080")
	// Held, it is skipped.
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err)
	defer ln.Close()
	next, err := standalonePort("127.0.0.1:8080", 18080)
	require.NoError(t, err)
	assert.NotEqual(t, addr, next)
	_, err = standalonePort("no port", 18080)
	require.Error(t, err)
	// Go's own TLS listens from 18443.
	tls, err := standalonePort("127.0.0.1:8443", 18443)
	require.NoError(t, err)
	_, port, err = net.SplitHostPort(tls)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, port, "18443")
}

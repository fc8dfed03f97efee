package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/topobench/topobench/internal/results"
)

// TestNginxSizes: nginx holds the plan's most connections at once, the
// default where the plan names none, and each block's keepalive pool.
func TestNginxSizes(t *testing.T) {
	p := Plan{results.Plan{Connections: []int{100, 5000}}}
	assert.Equal(t, 5000, p.NginxConnections())
	assert.Positive(t, Plan{}.NginxConnections())
	h2 := Plan{results.Plan{Connections: []int{100}, Streams: 8}}
	assert.Equal(t, 800, h2.NginxConnections(), "over HTTP/2 each stream in flight is an upstream connection")
	p.UpstreamKeepalive = []results.Keepalive{300, results.KeepaliveAuto}
	assert.Equal(t, 300, p.KeepaliveSize(300))
	assert.Equal(t, results.KeepaliveAuto.Size(5000), p.KeepaliveSize(results.KeepaliveAuto))
}

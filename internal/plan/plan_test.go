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
	p.UpstreamKeepalive = []results.Keepalive{300, results.KeepaliveAuto}
	assert.Equal(t, 300, p.KeepaliveSize(300))
	assert.Equal(t, results.KeepaliveAuto.Size(5000), p.KeepaliveSize(results.KeepaliveAuto))
}

package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// keepaliveSweep is nginx-http at -c5000 with the 2013 pool of 300 and
// with a pool that holds the load: the small pool is slower and opens
// upstream connections all the time; one of its runs met a full listen
// queue.
func keepaliveSweep() (results.Env, []results.Run) {
	plan := results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 6,
		Duration: 15 * time.Second, Threads: 100, UpstreamKeepalive: []results.Keepalive{300, results.KeepaliveAuto}, Isolation: results.IsolateNetns}
	env := results.Env{Plan: plan}
	var runs []results.Run
	for _, c := range plan.Cells() {
		rate, opened := 40000.0, int64(-1)
		switch {
		case c.Topology == "nginx-http" && c.Keepalive == 300:
			rate, opened = 15000+100*float64(c.Rep), 18000 // 80 a 1,000 requests
		case c.Topology == "nginx-http":
			rate, opened = 17500+100*float64(c.Rep), 2
		}
		n := int64(rate * 15)
		net := &results.Net{}
		if opened >= 0 {
			net.UpstreamOpened = new(opened * n / 225000)
		}
		if c.Topology == "nginx-http" && c.Keepalive == 300 && c.Rep == 3 {
			net.ListenOverflows, net.SyncookiesSent = 1200, 300
		}
		runs = append(runs, results.Run{Cell: c, Figures: &results.Figures{Requests: n, ReqPerSec: rate}, Net: net})
	}
	return env, runs
}

func TestConnectionsSection(t *testing.T) {
	env, runs := keepaliveSweep()
	s := summarize(env, runs)
	require.Len(t, s.KeepaliveCosts, 1)
	k := s.KeepaliveCosts[0]
	assert.True(t, k.Costs(), "six runs of each, all slower")
	assert.Equal(t, 300, k.SmallPool)
	assert.Equal(t, 5000, k.LargePool)

	var b bytes.Buffer
	require.NoError(t, s.WriteMarkdown(&b))
	md := b.String()
	assert.Contains(t, md, "## Connections")
	assert.Contains(t, md, "- **nginx-http** (GOMAXPROCS=1): an upstream pool of 300 per nginx worker, against one of 5000 that holds the load, **cost throughput**: 15,350 req/s against 17,850, 0.86")
	assert.Contains(t, md, "; against standalone in the same start of the servers, 0.38 ± 2% and 0.45 ± 1%; nginx opened 80.0 upstream connections per 1,000 requests against 0.0.")
	assert.Contains(t, md, "| GOMAXPROCS=1 upstream keepalive=300 | nginx-http | 15,350 | 300 | 80.0 | 1 of 6 | 1200 | 300 |")
	assert.Contains(t, md, "| GOMAXPROCS=1 upstream keepalive=auto | nginx-http | 17,850 | 5000 |")
	assert.Contains(t, md, "| GOMAXPROCS=1 upstream keepalive=auto | standalone | 40,000 | – | – | 0 of 6 | 0 | 0 |", "standalone has no upstream")
	assert.Contains(t, md, "listen overflows", "the run is flagged among the warnings and in the cell's notes")

	page := string(renderHTML(t, []Sweep{{Name: "k", Summary: s.Summary, Runs: runs}}))
	assert.Contains(t, page, "Connections: listen queues and nginx&#39;s upstream connections")
	assert.Contains(t, page, "cost throughput")
	assert.Contains(t, page, "1200 connects turned away")
}

func TestNoConnectionsSectionWithoutCounters(t *testing.T) {
	env, runs := keepaliveSweep()
	for i := range runs {
		runs[i].Net = nil
	}
	var b bytes.Buffer
	require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
	assert.NotContains(t, b.String(), "## Connections")
}

package loadgen

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
)

// smallPlan is a short plan of the topologies named, as the sweep's
// defaults give it.
func smallPlan(tops ...string) results.Plan {
	return results.Plan{
		Targets:     []string{results.TargetGo},
		Topologies:  tops,
		GOMAXPROCS:  []int{1, 2},
		Connections: []int{100},
		Loads:       []results.Generator{results.LoadWrk},
		Reps:        2,
		Duration:    15 * time.Second,
		Warmup:      time.Second,
		Threads:     100,
		Timeout:     2 * time.Second,
	}
}

// Two of the sweep's schedules: an open loop bounded by a count of
// slow requests, and a probe of concurrency.
var (
	slowRequests     = results.Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second, Requests: 100000}
	concurrencyProbe = results.Schedule{Name: "concurrency-level", Probe: true, Wait: 10 * time.Second, Requests: 8000}
)

// TestWrkOptions: wrk's options for a cell come from the plan, with the
// threads lowered to the connections and the load's CPU set as taskset
// takes it.
func TestWrkOptions(t *testing.T) {
	p := smallPlan("standalone")
	p.Connections = []int{30}
	p.Close = true
	g := &wrkGen{plan: p, cpus: cpuset.Of(0), bin: "/usr/bin/wrk", script: "/r/topobench.lua", netns: "tb-1-0-cli", allow: netip.MustParseAddr("169.254.77.1")}
	c := p.Cells()[0]
	o := g.options(c, "http://169.254.77.1:8080/", p.Duration)
	assert.Equal(t, 30, o.Threads, "at most one thread a connection")
	assert.Equal(t, 30, o.Connections)
	assert.Equal(t, p.Duration, o.Duration)
	assert.Equal(t, p.Timeout, o.Timeout)
	assert.Equal(t, "0", o.CPUs)
	assert.Equal(t, "tb-1-0-cli", o.NetNS)
	assert.True(t, o.Close)
	assert.True(t, o.Latency)
	assert.Equal(t, "/r/topobench.lua", o.Script)

	unpinned := &wrkGen{plan: p, bin: "/usr/bin/wrk"}
	assert.Empty(t, unpinned.options(c, "http://127.0.0.1:8080/", p.Duration).CPUs)
}

// TestWrkRefusesACountOfRequests: wrk runs for a duration; a schedule of
// a count of requests is the built-in engine's.
func TestWrkRefusesACountOfRequests(t *testing.T) {
	g := &wrkGen{plan: smallPlan("standalone"), bin: "/nonexistent/wrk"}
	c := results.Cell{Schedule: results.Schedule{Requests: 1000}}
	run := results.Run{Cell: c, URL: "http://127.0.0.1:8080/"}
	_, err := g.Measure(context.Background(), c, time.Second, &run)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wrk runs for a duration, not a count of 1000 requests")
}

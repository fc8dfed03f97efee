package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestMarkdownCluster: a sweep on a cluster says which node did what,
// with clock offsets, and lists every run's nodes beside the merge; a
// late node's failure and a load-bound node show, and the load-bound
// node is warned of.
func TestMarkdownCluster(t *testing.T) {
	sc := results.Schedule{Rate: 2000}
	start := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	env := results.Env{Command: []string{"topobench", "compare", "-swarm"}, Start: start, End: start.Add(time.Minute),
		Plan: results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{500}, Loads: []results.Generator{results.LoadBuiltin},
			Schedules: []results.Schedule{sc}, Reps: 2, Duration: 5 * time.Second},
		Cluster: &results.ClusterEnv{Backend: "swarm", Image: "topobench/cluster:0123456789ab", ServerAddr: "169.254.9.2", Parity: "load node a (managerid012)",
			Lead: 3 * time.Second, Tolerance: 50 * time.Millisecond,
			Harness: results.EnvNode{ID: "managerid0123456", Hostname: "a", Addr: "169.254.9.1", ClockKnown: true},
			Server:  results.EnvNode{ID: "serverid01234567", Hostname: "b", Addr: "169.254.9.2", ClockOffset: 1500 * time.Microsecond, ClockUncertainty: 9 * time.Millisecond, ClockKnown: true},
			Load:    []results.EnvNode{{ID: "managerid0123456", Hostname: "a", Addr: "169.254.9.1", ClockKnown: true}, {ID: "serverid01234567", Hostname: "b", Addr: "169.254.9.2"}}},
	}
	node := func(id, host string, skew time.Duration, p99 time.Duration, bound bool, invalid string) results.NodeFigures {
		return results.NodeFigures{Node: id, Hostname: host, Rate: 1000, Connections: 250, StartSkew: skew, Procs: 1, LoadBound: bound, Invalid: invalid,
			Figures: results.Figures{Requests: 5000, ReqPerSec: 995, Latency: true, P99: p99, P999: 2 * p99}}
	}
	r1 := engineRun("standalone", sc, 1, 1, results.Errors{}, 0, 0, 0)
	r1.Nodes = []results.NodeFigures{node("managerid0123456", "a", 700*time.Microsecond, 3*time.Millisecond, false, ""), node("serverid01234567", "b", -1200*time.Microsecond, 4*time.Millisecond, true, "")}
	r2 := engineRun("standalone", sc, 2, 1, results.Errors{}, 0, 0, 0)
	r2.Nodes = []results.NodeFigures{node("managerid0123456", "a", 85*time.Millisecond, 3*time.Millisecond, false, "began 85ms after the common start, past the tolerance of 50ms"), node("serverid01234567", "b", time.Millisecond, 4*time.Millisecond, false, "")}
	r2.Error = "invalid run (late start): node a (managerid012) began 85ms after the common start, past the tolerance of 50ms"

	s := summarize(env, []results.Run{r1, r2})
	var b bytes.Buffer
	require.NoError(t, s.WriteMarkdown(&b))
	md := b.String()
	for _, want := range []string{
		"## Cluster",
		"| harness (manager) | a | `managerid012` | 169.254.9.1 | 0.00 ms ± 0.00 ms |",
		"| servers | b | `serverid0123` | 169.254.9.2 | 1.50 ms ± 9.00 ms |",
		"| load 1 | b | `serverid0123` | 169.254.9.2 | unknown |",
		"the load went to 169.254.9.2",
		"| GOMAXPROCS=2 connections=100 load=builtin rate=2000 standalone | 1 | b (serverid0123) | 1000 | 995 | 5000 | -1.20 ms | 4.00 ms | 8.00 ms | 0 | load-bound |",
		"| GOMAXPROCS=2 connections=100 load=builtin rate=2000 standalone | 2 | a (managerid012) | 1000 | 995 | 5000 | 85.00 ms | 3.00 ms | 6.00 ms | 0 | began 85ms after the common start, past the tolerance of 50ms |",
		"| 1 | **merged** | 2000 | 1980 |",
		"FAILED: invalid run (late start)",
		"load node b (serverid0123) used 90% or more of its 1 processor(s)",
	} {
		assert.Contains(t, md, want)
	}

	// One machine: no such section.
	env.Cluster = nil
	b.Reset()
	require.NoError(t, summarize(env, []results.Run{engineRun("standalone", sc, 1, 1, results.Errors{}, 0, 0, 0)}).WriteMarkdown(&b))
	assert.NotContains(t, b.String(), "## Cluster")
}

package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// TestMarkdownCluster: a sweep on a cluster says which node did what,
// with clock offsets, and lists every run's nodes beside the merge; a
// late node's failure and a load-bound node show, and the load-bound
// node is warned of.
// clusterFixture is a sweep on a two-node cluster: two runs of
// standalone at 2,000 req/s, in the first a load-bound node, in the
// second a node that began late, which failed the run.
func clusterFixture() (results.Env, []results.Run) {
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

	return env, []results.Run{r1, r2}
}

func TestMarkdownCluster(t *testing.T) {
	env, runs := clusterFixture()
	sc := env.Plan.Schedules[0]
	s := summarize(env, runs)
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

// TestHTMLCluster: report.html has summary.md's cluster section — the
// nodes with their clocks, the note, every run's nodes beside the merge
// with the late and load-bound nodes and the failed merge marked — as
// plain text (no Markdown), and none on one machine.
func TestHTMLCluster(t *testing.T) {
	env, runs := clusterFixture()
	sec, ok := clusterSectionOf(t, sweepOf("c", "", env, runs))
	require.True(t, ok)
	assert.Equal(t, "Cluster", sec.Title)
	require.Len(t, sec.Intro, 2)
	assert.Contains(t, sec.Intro[1], "Backend swarm, image topobench/cluster:0123456789ab; the load went to 169.254.9.2; parity was checked from load node a (managerid012).")
	require.Len(t, sec.Tables, 2)

	nodes := sec.Tables[0]
	assert.Equal(t, clusterNodesHead, nodes.Head)
	assert.Len(t, nodes.Num, len(nodes.Head))
	assert.Equal(t, [][]string{
		{"harness (manager)", "a", "managerid012", "169.254.9.1", "0.00 ms ± 0.00 ms"},
		{"servers", "b", "serverid0123", "169.254.9.2", "1.50 ms ± 9.00 ms"},
		{"load 0", "a", "managerid012", "169.254.9.1", "0.00 ms ± 0.00 ms"},
		{"load 1", "b", "serverid0123", "169.254.9.2", "unknown"},
	}, nodes.Rows)

	rs := sec.Tables[1]
	assert.Equal(t, clusterRunsHead, rs.Head)
	assert.Len(t, rs.Num, len(rs.Head))
	cell := "GOMAXPROCS=2 connections=100 load=builtin rate=2000 standalone"
	// The merge's figures are the fixture run's own (engineRun's).
	assert.Equal(t, [][]string{
		{cell, "1", "a (managerid012)", "1000", "995", "5000", "0.70 ms", "3.00 ms", "6.00 ms", "0", ""},
		{cell, "1", "b (serverid0123)", "1000", "995", "5000", "-1.20 ms", "4.00 ms", "8.00 ms", "0", "load-bound"},
		{cell, "1", "merged", "2000", "1980", "0", "", "1.20 ms", "1.50 ms", "0", ""},
		{cell, "2", "a (managerid012)", "1000", "995", "5000", "85.00 ms", "3.00 ms", "6.00 ms", "0", "began 85ms after the common start, past the tolerance of 50ms"},
		{cell, "2", "b (serverid0123)", "1000", "995", "5000", "1.00 ms", "4.00 ms", "8.00 ms", "0", ""},
		{cell, "2", "merged", "2000", "1980", "0", "", "1.20 ms", "1.50 ms", "0", "FAILED: invalid run (late start): node a (managerid012) began 85ms after the common start, past the tolerance of 50ms"},
	}, rs.Rows)
	assert.Equal(t, []bool{false, true, false, true, false, true}, rs.Marked)

	// The same figures as summary.md's, cell by cell.
	mdNodes, _, mdRuns, _ := clusterTables(analysis.Summarize(env, runs), mdMarkup)
	require.Len(t, mdRuns, len(rs.Rows))
	for i := range rs.Rows {
		for j := 3; j < 10; j++ {
			assert.Equal(t, mdRuns[i][j], rs.Rows[i][j], "row %d column %s", i, rs.Head[j])
		}
	}
	for i := range nodes.Rows {
		assert.Equal(t, mdNodes[i][4], nodes.Rows[i][4])
	}

	t.Run("rendered", func(t *testing.T) {
		page := string(renderHTML(t, []Sweep{sweepOf("c", "", env, runs)}))
		assert.Contains(t, page, `<li><a href="#cluster">Cluster</a></li>`)
		assert.Contains(t, page, `<section id="cluster">`)
		assert.Contains(t, page, `<tr class="marked"><th scope="row">`+cell+`</th><td class="num">2</td><td>merged</td>`)
		assert.NotContains(t, page, "**merged**")
	})
	t.Run("routable server address", func(t *testing.T) {
		env, runs := clusterFixture()
		env.Cluster.ServerAddr, env.Cluster.Remote = "10.0.0.2", true
		sec, ok := clusterSectionOf(t, sweepOf("c", "", env, runs))
		require.True(t, ok)
		assert.Contains(t, sec.Intro[1], "the load went to 10.0.0.2 (routable, named with -swarm-allow)")
	})
	t.Run("a comparison labels each sweep's tables", func(t *testing.T) {
		page, _, err := buildPage([]Sweep{sweepOf("a", "", env, runs), sweepOf("b", "", env, runs)})
		require.NoError(t, err)
		var captions []string
		for _, s := range page.Sections {
			if s.ID == "cluster" {
				for _, tb := range s.Tables {
					captions = append(captions, tb.Caption[:strings.Index(tb.Caption, ":")+1])
				}
			}
		}
		assert.Equal(t, []string{"A:", "A:", "B:", "B:"}, captions)
	})
	t.Run("one machine: no section", func(t *testing.T) {
		env, runs := clusterFixture()
		env.Cluster = nil
		_, ok := clusterSectionOf(t, sweepOf("c", "", env, runs))
		assert.False(t, ok)
	})
}

func clusterSectionOf(t *testing.T, sw Sweep) (htmlSection, bool) {
	t.Helper()
	page, _, err := buildPage([]Sweep{sw})
	require.NoError(t, err)
	for _, s := range page.Sections {
		if s.ID == "cluster" {
			return s, true
		}
	}
	return htmlSection{}, false
}

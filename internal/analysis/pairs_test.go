package analysis

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// pairedRuns are n pairs of standalone and nginx-http windows of length
// win, the path's rate straying by ±stray, each window with a drain.
func pairedRuns(win time.Duration, n int, stray float64) (results.Env, []results.Run) {
	p := results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 1, Duration: win, Paired: &results.Paired{Pairs: n, Seed: 1}}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var runs []results.Run
	for i := 1; i <= n; i++ {
		f := 1 + stray*math.Sin(float64(i)*2.1)
		first := i%2 == 0
		mk := func(top string, rep int, rate float64, at time.Duration, isFirst bool) results.Run {
			return results.Run{
				Cell:  results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 5000, Rep: rep},
				Start: t0.Add(time.Duration(i)*3*win + at), Wall: win + 100*time.Millisecond, Drain: 100 * time.Millisecond,
				Figures: &results.Figures{Requests: int64(rate * win.Seconds()), ReqPerSec: rate},
				Pair:    &results.Pair{With: "nginx-http", Index: i, Seq: i, First: isFirst},
			}
		}
		st, top := time.Duration(0), win
		if first {
			st, top = win, 0
		}
		runs = append(runs, mk("standalone", i, 1000, st, !first), mk("nginx-http", i, 400*f, top, first))
	}
	return results.Env{Plan: p}, runs
}

// TestPairRatios: a pair's ratio is its two windows' rates, in time order;
// a pair missing a window or with a failed one gives none.
func TestPairRatios(t *testing.T) {
	env, runs := pairedRuns(2*time.Second, 5, 0.1)
	runs = runs[:len(runs)-1]                    // pair 5 lost its second window
	runs[2].Error, runs[2].Figures = "boom", nil // pair 2's standalone failed
	ps := PairRatios(env.Plan, runs)
	k := Key{Group: Group{Target: "go", GOMAXPROCS: 1, Connections: 5000, Load: results.LoadWrk}, Topology: "nginx-http"}
	require.Len(t, ps[k], 3)
	for i, want := range []int{1, 3, 4} {
		pr := ps[k][i]
		assert.Equal(t, want, pr.Index)
		assert.InDelta(t, 0.4*(1+0.1*math.Sin(float64(want)*2.1)), pr.Ratio, 1e-12)
		assert.Equal(t, want%2 == 0, pr.TopologyFirst)
		assert.Equal(t, 200*time.Millisecond, pr.Overhead, "two drains")
	}
	sum := Summarize(env, runs)
	c, ok := sum.Cell(k)
	require.True(t, ok)
	require.NotNil(t, c.RatioToStandalone)
	assert.Equal(t, 3, c.RatioToStandalone.N)
	assert.Contains(t, c.RatioToStandalone.Method, "pairs")
	require.NotNil(t, c.RatioToStandalone.Lag1)
}

// TestWindowSpreads: paired sweeps of two window lengths; the one whose
// windows stray less needs fewer pairs for the precision, and a sweep of
// rounds is refused by name.
func TestWindowSpreads(t *testing.T) {
	e1, r1 := pairedRuns(time.Second, 30, 0.15)
	e4, r4 := pairedRuns(4*time.Second, 20, 0.02)
	out, err := WindowSpreads([]string{"w1", "w4"}, []results.Env{e1, e4}, [][]results.Run{r1, r4}, 0.05, 48)
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, time.Second, out[0].Window)
	assert.Equal(t, 30, out[0].Pairs)
	assert.Equal(t, 4*time.Second, out[1].Window)
	assert.Less(t, out[1].RatioSD, out[0].RatioSD)
	assert.InDelta(t, 0, out[1].StandaloneCV, 1e-12, "standalone held still")
	require.Positive(t, out[1].PairsNeeded)
	assert.Equal(t, time.Duration(out[1].PairsNeeded)*(2*4*time.Second+200*time.Millisecond), out[1].Needed, "two windows and their drains a pair")
	if out[0].PairsNeeded > 0 {
		assert.Greater(t, out[0].PairsNeeded, out[1].PairsNeeded)
	}

	rounds := e1
	rounds.Plan.Paired = nil
	_, err = WindowSpreads([]string{"w1", "r"}, []results.Env{e1, rounds}, [][]results.Run{r1, r1}, 0.05, 48)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "r: not a paired sweep")
}

// TestDiffPaired: a comparison of two paired sweeps takes each ratio pair
// by pair, not repetition by repetition (standalone's windows are
// numbered by the block's pairs, a topology's by its own).
func TestDiffPaired(t *testing.T) {
	e1, r1 := pairedRuns(2*time.Second, 8, 0.05)
	e2, r2 := pairedRuns(2*time.Second, 8, 0.05)
	for i := range r2 {
		if r2[i].Topology == "standalone" {
			r2[i].Rep += 100 // numbered as if other topologies' pairs came first
		}
	}
	a, err := NewSamples("a", e1, r1)
	require.NoError(t, err)
	b, err := NewSamples("b", e2, r2)
	require.NoError(t, err)
	k := Key{Group: Group{Target: "go", GOMAXPROCS: 1, Connections: 5000, Load: results.LoadWrk}, Topology: "nginx-http"}
	assert.Len(t, b.ratios(k), 8)
	assert.Equal(t, a.ratios(k), b.ratios(k))
	c := Compare(a, b)
	require.NotEmpty(t, c.Ratios.Rows)
}

// TestAcrossLoads: a paired sweep of the engine compared with a sweep of
// wrk's rounds: the cells meet whatever their generator, the paired
// sweep's cross-check is left out, and the generators' CPU is not compared.
func TestAcrossLoads(t *testing.T) {
	e1, r1 := pairedRuns(2*time.Second, 8, 0.05)
	e1.Plan.Loads = []results.Generator{results.LoadBuiltin}
	for i := range r1 {
		r1[i].Load = results.LoadBuiltin
		r1[i].CPU = &results.CPU{Load: results.Usage{User: 0.1}}
	}
	// The cross-check: wrk, one run each.
	r1 = append(r1,
		results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 5000, Rep: 1}, Figures: &results.Figures{ReqPerSec: 5}},
		results.Run{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 1, Connections: 5000, Rep: 1}, Figures: &results.Figures{ReqPerSec: 1}})
	rounds := results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 6, Duration: 15 * time.Second}
	var r2 []results.Run
	for rep := 1; rep <= 6; rep++ {
		for top, rate := range map[string]float64{"standalone": 1000, "nginx-http": 410} {
			r2 = append(r2, results.Run{Cell: results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 5000, Rep: rep}, Figures: &results.Figures{ReqPerSec: rate}, CPU: &results.CPU{Load: results.Usage{User: 0.2}}})
		}
	}
	a, err := NewSamples("paired", e1, r1)
	require.NoError(t, err)
	b, err := NewSamples("2013", results.Env{Plan: rounds}, r2)
	require.NoError(t, err)
	c := Compare(a.AcrossLoads(), b.AcrossLoads())
	require.Len(t, c.Ratios.Rows, 1, "nginx-http, both sides")
	row := c.Ratios.Rows[0]
	require.NotNil(t, row.Old)
	require.NotNil(t, row.New)
	assert.InDelta(t, 0.4, row.Old.Center, 0.02, "the pairs' ratios, not the cross-check's 0.2")
	assert.InDelta(t, 0.41, row.New.Center, 1e-9)
	assert.Empty(t, c.LoadCPU.Rows, "two generators' CPU is not compared")
}

// TestCPUPerRequestWithDrain: the servers' CPU, read around a window and
// its drain, is divided by the answers of both; the load's, over the
// window alone, by the window's.
func TestCPUPerRequestWithDrain(t *testing.T) {
	r := results.Run{
		Figures: &results.Figures{Requests: 9000},
		Drained: 1000,
		CPU:     &results.CPU{Load: results.Usage{User: 0.09}, Server: &results.Usage{User: 0.2}},
	}
	load, nginx, server, ok := cpuPerRequest(r)
	require.True(t, ok)
	assert.InDelta(t, 10, load, 1e-9, "0.09 s over 9,000 answers")
	assert.InDelta(t, 20, server, 1e-9, "0.2 s over 10,000 answers")
	assert.True(t, math.IsNaN(nginx))
}

// TestPairCostRatios: a pair's capacity ratio is standalone's servers' µs
// per request over the topology's. The servers' group time over the
// measured window counts per answer in the window; over a run, per
// answer the servers gave in it; /proc's per-process time, where no
// group counted, per answer served (drain and lead too). A window
// without its servers' time gives no cost ratio. The cell's CostRatio is
// the paired interval over the pairs that have one.
func TestPairCostRatios(t *testing.T) {
	env, runs := pairedRuns(time.Second, 4, 0)
	group := func(sec, util float64, span string) *results.CPU {
		return &results.CPU{Servers: &results.GroupCPU{Seconds: sec, Span: span, Window: time.Second, CPUs: 1, Utilization: util}}
	}
	// Runs alternate standalone (1000 req/s, 1000 answers), nginx-http
	// (400 req/s, 400 answers).
	for _, tc := range []struct {
		pair    int
		st, top *results.CPU
		drained int64 // each window's drain and lead answers
	}{
		// 0.9 s / 1000 = 900 µs; 0.95 s / 400 = 2375 µs: 0.3789.
		{pair: 1, st: group(0.9, 0.9, results.SpanWindow), top: group(0.95, 0.95, results.SpanWindow), drained: 100},
		// Over the run: 1.1 s / (1000 + 100) = 1000 µs; 1.0 s / (400 + 100) = 2000 µs.
		{pair: 2, st: group(1.1, 1.1, results.SpanRun), top: group(1.0, 1.0, results.SpanRun), drained: 100},
		// /proc: server 0.99 s over 1100 served = 900 µs; nginx 0.5 + server 0.5 over 500 = 2000 µs.
		{pair: 3, st: &results.CPU{Server: &results.Usage{User: 0.99}}, top: &results.CPU{Nginx: &results.Usage{User: 0.5}, Server: &results.Usage{System: 0.5}}, drained: 100},
		// The topology's window without its servers' time.
		{pair: 4, st: group(0.9, 0.9, results.SpanWindow), top: &results.CPU{}},
	} {
		st, top := &runs[2*(tc.pair-1)], &runs[2*(tc.pair-1)+1]
		require.Equal(t, "standalone", st.Topology)
		st.CPU, top.CPU = tc.st, tc.top
		st.Drained, top.Drained = tc.drained/2, tc.drained/2
		st.LeadAnswers, top.LeadAnswers = tc.drained-tc.drained/2, tc.drained-tc.drained/2
	}
	ps := PairRatios(env.Plan, runs)
	k := Key{Group: Group{Target: "go", GOMAXPROCS: 1, Connections: 5000, Load: results.LoadWrk}, Topology: "nginx-http"}
	require.Len(t, ps[k], 4)
	for i, tc := range []struct {
		want, stU, tpU float64
	}{{900.0 / 2375, 0.9, 0.95}, {0.5, 1.1, 1.0}, {0.45, 0, 0}, {0, 0.9, 0}} {
		t.Run(fmt.Sprint("pair ", i+1), func(t *testing.T) {
			p := ps[k][i]
			assert.InDelta(t, tc.want, p.CostRatio, 1e-9)
			assert.InDelta(t, 0.4, p.Ratio, 1e-12)
			assert.InDelta(t, tc.stU, p.StandaloneUtilization, 1e-12)
			assert.InDelta(t, tc.tpU, p.Utilization, 1e-12)
		})
	}
	sum := Summarize(env, runs)
	c, ok := sum.Cell(k)
	require.True(t, ok)
	require.NotNil(t, c.CostRatio)
	assert.Equal(t, 3, c.CostRatio.N, "the three pairs with a cost ratio")
	assert.Equal(t, 4, c.RatioToStandalone.N)
	assert.Contains(t, c.CostRatio.Method, "3 pairs", "the paired interval, as the rate's")
	assert.InDelta(t, (900.0/2375+0.5+0.45)/3, c.CostRatio.Center, 0.06)
	require.Len(t, c.Pairs, 4)
	assert.InDelta(t, 0.975, c.Utilization, 1e-9, "median of 0.95 and 1.0")
}

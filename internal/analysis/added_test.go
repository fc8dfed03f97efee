package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// latencyRun is a fake latency run of top at rate 1000 with p50 p ms,
// p99 10p, p99.9 20p, started at second at.
func latencyRun(top string, rep, at int, p float64, achieved float64, late int64) results.Run {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	return results.Run{
		Cell:  results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: results.Schedule{Fraction: 0.5}, Rep: rep},
		Start: time.Unix(int64(at), 0),
		Figures: &results.Figures{Requests: 2000, ReqPerSec: achieved, TargetRate: 1000, Late: late, Latency: true,
			P50: ms(p), P99: ms(10 * p), P999: ms(20 * p)},
	}
}

func TestAddedLatencies(t *testing.T) {
	var runs []results.Run
	at := 0
	// Three rounds of standalone, nginx-http: nginx-http 0.1 ms more at
	// p50, 1, 1.5 and 2 ms more at p99 in turn.
	for round := 1; round <= 3; round++ {
		sa := 1 + 0.01*float64(round)
		runs = append(runs, latencyRun(Standalone, round, at, sa, 1000, 0))
		runs = append(runs, latencyRun("nginx-http", round, at+1, sa+0.1*float64(round), 1000, 0))
		at += 2
	}
	// A fourth nginx-http run whose generator was late for 1.5% of its
	// requests (past MaxLate), and one that
	// missed the rate: both flagged, their latency not the path's.
	runs = append(runs, latencyRun(Standalone, 4, at, 1, 1000, 0), latencyRun("nginx-http", 4, at+1, 50, 1000, 30))
	runs = append(runs, latencyRun(Standalone, 5, at+2, 1, 1000, 0), latencyRun("nginx-http", 5, at+3, 50, 900, 0))
	got := AddedLatencies(results.Plan{}, runs, []string{Standalone, "nginx-http"})
	require.Len(t, got, 1)
	a := got[0]
	assert.Equal(t, 1000.0, a.Rate)
	assert.Equal(t, 0.5, a.Fraction)
	assert.Equal(t, 100, a.Connections)
	require.Len(t, a.Paths, 2)
	sa, nh := a.Paths[0], a.Paths[1]
	assert.Equal(t, Standalone, sa.Topology)
	assert.Nil(t, sa.Added)
	assert.Equal(t, 5, sa.Runs)
	assert.Equal(t, 0, sa.Flagged)
	t.Run("flagged runs are counted, not the path's", func(t *testing.T) {
		assert.Equal(t, 5, nh.Runs)
		assert.Equal(t, 2, nh.Flagged)
		assert.Equal(t, 3, nh.P50.N)
		assert.InDelta(t, 1.22e-3, nh.P50.Center, 1e-9, "the median of 1.11, 1.22, 1.33 ms")
	})
	t.Run("added latency pairs each run with the standalone run before it", func(t *testing.T) {
		require.NotNil(t, nh.Added)
		p50 := nh.Added[0]
		assert.Equal(t, 3, p50.N)
		assert.InDelta(t, 0.2e-3, p50.Mean, 1e-9, "0.1, 0.2, 0.3 ms")
		assert.True(t, p50.Known())
		assert.InDelta(t, 4.302653*0.1e-3/1.7320508, p50.Hi-p50.Mean, 1e-8)
		assert.InDelta(t, 2e-3, nh.Added[1].Mean, 1e-9, "ten times the p50's")
	})
}

func TestFlagged(t *testing.T) {
	tests := []struct {
		name string
		run  results.Run
		want string
	}{
		{"on rate", latencyRun(Standalone, 1, 0, 1, 990, 0), ""},
		{"late within MaxLate", latencyRun(Standalone, 1, 0, 1, 1000, 20), ""},
		{"late", latencyRun(Standalone, 1, 0, 1, 1000, 21), "generator late"},
		{"missed", latencyRun(Standalone, 1, 0, 1, 960, 0), "rate missed"},
		{"failed", results.Run{Error: "boom"}, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, Flagged(tt.run)) })
	}
}

func TestSummarizeKeepsLatencyRunsApart(t *testing.T) {
	p := results.Plan{Topologies: []string{Standalone, "nginx-http"}, Loads: []results.Generator{results.LoadBuiltin}, Connections: []int{100},
		Paired: &results.Paired{Pairs: 1, Latency: &results.Latency{Fraction: 0.5, Rounds: 1, Duration: 2 * time.Second}}}
	runs := []results.Run{latencyRun(Standalone, 1, 0, 1, 1000, 0), latencyRun("nginx-http", 1, 1, 2, 1000, 0)}
	s := Summarize(results.Env{Plan: p}, runs)
	assert.Empty(t, s.Cells, "a latency run is in no cell")
	require.Len(t, s.Latency, 1)
	assert.Len(t, s.Latency[0].Paths, 2)
}

// TestDiffText: an added latency as the sentence and the tables write it.
func TestDiffText(t *testing.T) {
	tests := []struct {
		name string
		d    []float64
		want string
	}{
		{"none", nil, "–"},
		{"one, no interval", []float64{120e-6}, "+120 µs"},
		{"above", []float64{100e-6, 120e-6, 140e-6}, "+120 µs ± 50 µs"},
		{"below", []float64{-1.1e-3, -1.2e-3, -1.3e-3}, "-1.20 ms ± 248 µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, DiffText(stats.MeanDiffOf(tt.d, 0.95)))
		})
	}
}

// TestAddedFor: a latency phase belongs to its block's groups only.
func TestAddedFor(t *testing.T) {
	s := Summary{Latency: []AddedLatency{{Target: "go", GOMAXPROCS: 1, Connections: 5000, Rate: 4000,
		Paths: []PathLatency{{Topology: Standalone}, {Topology: "nginx-http"}}}}}
	a := s.AddedFor(Group{Target: "go", GOMAXPROCS: 1, Connections: 5000})
	require.NotNil(t, a)
	assert.Equal(t, "4,000 req/s (5,000 connections)", a.RateText())
	assert.NotNil(t, a.Path("nginx-http"))
	assert.Nil(t, a.Path("nginx-http-unix"))
	assert.Nil(t, s.AddedFor(Group{Target: "go", GOMAXPROCS: 8, Connections: 5000}))
	assert.Nil(t, s.AddedFor(Group{Target: "go", GOMAXPROCS: 1, Connections: 100}))
}

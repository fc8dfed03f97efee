package results

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/wrk"
)

func TestFigures(t *testing.T) {
	cell := Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}
	t.Run("engine", func(t *testing.T) {
		r := Run{Cell: cell, Engine: &load.Summary{Requests: 990, AchievedRate: 99, TargetRate: 100, Late: 3, Dropped: 1, Concurrent: 7,
			Errors:  load.Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5, Framing: 2},
			Latency: load.Latency{Mean: 1.5, P50: 1, P90: 2, P99: 3, P999: 4, P9999: 5, Max: 6}}}
		assert.False(t, r.Failed(), "a run with the engine's summary is measured")
		f, ok := r.Figures()
		require.True(t, ok)
		assert.Equal(t, Figures{Requests: 990, ReqPerSec: 99, Errors: wrk.Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5},
			Latency: true, Mean: 1500 * time.Microsecond, P50: time.Millisecond, P90: 2 * time.Millisecond, P99: 3 * time.Millisecond,
			P999: 4 * time.Millisecond, P9999: 5 * time.Millisecond, Max: 6 * time.Millisecond,
			TargetRate: 100, Late: 3, Dropped: 1, Concurrent: 7}, f)
	})
	t.Run("engine without samples", func(t *testing.T) {
		f, ok := Run{Cell: cell, Engine: &load.Summary{Errors: load.Errors{Timeout: 9}}}.Figures()
		require.True(t, ok)
		assert.False(t, f.Latency)
	})
	t.Run("wrk", func(t *testing.T) {
		r := Run{Cell: cell, Result: &wrk.Result{Requests: 10, RequestsPerSec: 5, Latency: wrk.LatencyStats{Avg: time.Millisecond, Max: 9 * time.Millisecond},
			Distribution: []wrk.Percentile{{P: 50, Latency: 2 * time.Millisecond}, {P: 90, Latency: 3 * time.Millisecond}, {P: 99, Latency: 4 * time.Millisecond}}}}
		f, ok := r.Figures()
		require.True(t, ok)
		assert.Equal(t, Figures{Requests: 10, ReqPerSec: 5, Latency: true, Mean: time.Millisecond, P50: 2 * time.Millisecond, P90: 3 * time.Millisecond,
			P99: 4 * time.Millisecond, Max: 9 * time.Millisecond}, f)
	})
	t.Run("failed", func(t *testing.T) {
		r := Run{Cell: cell}
		assert.True(t, r.Failed())
		_, ok := r.Figures()
		assert.False(t, ok)
		r = Run{Cell: cell, Engine: &load.Summary{}, Error: "boom"}
		assert.True(t, r.Failed())
	})
}

package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

func TestOverheads(t *testing.T) {
	env, runs := analysistest.CostSweep(true)
	s := Summarize(env, runs)
	os := s.Overheads()
	require.Len(t, os, 1, "one topology besides standalone, one family")
	o := os[0]
	assert.Equal(t, "nginx-http", o.Topology)
	assert.Zero(t, o.Group.Schedule.Work, "the family is named at no work")
	require.Len(t, o.Costs, 4)

	// The model from the no-work cells: (25 + w) / (36 + 26 + w).
	require.True(t, o.ModelDefined)
	for _, c := range o.Costs {
		w := float64(c.Work) / float64(time.Microsecond)
		want := (25 + w) / (62 + w)
		assert.InDelta(t, want, c.Model, 1e-9, "model at %v", c.Work)
		require.NotNil(t, c.Ratio)
		assert.InDelta(t, want, c.Ratio.Center, 0.02, "the fake sweep follows the model at %v", c.Work)
		assert.InDelta(t, 37, c.AddedUS, 1e-6, "nginx's 36 µs plus the server's extra 1 µs")
		assert.InDelta(t, 36, c.NginxUS, 1e-6)
		require.NotNil(t, c.P50Added)
		assert.Equal(t, 100*time.Microsecond, *c.P50Added)
		assert.Equal(t, 400*time.Microsecond, *c.P99Added)
		assert.InDelta(t, 2000, c.Rate, 0)
	}
	// ≥ 0.9 needs w ≥ 9·62 − 10·25 = 308 µs: of the works measured, 1 ms.
	assert.Equal(t, 308*time.Microsecond, o.ModelAt.Round(time.Microsecond))
	assert.True(t, o.MeasuredFound)
	assert.Equal(t, time.Millisecond, o.MeasuredAt)
	assert.InDelta(t, (25+308.0)/(62+308.0), o.ModelRatio(308*time.Microsecond), 1e-9)
}

func TestOverheadsNeedWork(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	assert.Empty(t, Summarize(env, runs).Overheads(), "a sweep without -work has no cost table")

	env, runs = analysistest.CostSweep(false)
	var noCPU = runs[:0:0]
	for _, r := range runs {
		r.CPU = nil
		noCPU = append(noCPU, r)
	}
	o := Summarize(env, noCPU).Overheads()
	require.Len(t, o, 1)
	assert.False(t, o[0].ModelDefined, "no CPU figures, no model")
	assert.True(t, math.IsNaN(o[0].ModelRatio(time.Millisecond)))
	assert.True(t, math.IsNaN(o[0].Costs[0].AddedUS))
	assert.Nil(t, o[0].Costs[0].P50Added, "no open-loop cells")
}

// TestCostRatio: the ratio the CPU figures predict is standalone's
// servers' µs per request over the cell's, run by run, and in the fake
// sweep (rates follow the model) it predicts the rate's ratio.
func TestCostRatio(t *testing.T) {
	env, runs := analysistest.CostSweep(false)
	s := Summarize(env, runs)
	require.Len(t, s.Groups(), 4)
	for _, g := range s.Groups() {
		w := float64(g.Schedule.Work) / float64(time.Microsecond)
		st, ok := s.Cell(Key{g, Standalone})
		require.True(t, ok)
		c, ok := s.Cell(Key{g, "nginx-http"})
		require.True(t, ok)
		require.NotNil(t, c.CostRatio)
		assert.InDelta(t, (25+w)/(62+w), c.CostRatio.Center, 1e-9, "standalone's cost over the path's at work %v", w)
		assert.True(t, c.CostRatio.Known())
		assert.Equal(t, 6, c.CostRatio.N)
		assert.Equal(t, 6, c.CostRatio.N2)
		assert.True(t, c.CostRatio.Differs)
		assert.InDelta(t, c.RatioToStandalone.Center, c.CostRatio.Center, 0.02, "the rates follow the model")
		assert.InDelta(t, 62+w, c.CPU.Servers.Center, 1e-9, "nginx + server")
		assert.InDelta(t, 25+w, st.CPU.Servers.Center, 1e-9, "the server alone")
		assert.InDelta(t, 1, st.CostRatio.Center, 1e-12)
	}
}

// TestServingCost: which process groups count, and which runs.
func TestServingCost(t *testing.T) {
	run := func(top string, rep int, nginx, server *float64) results.Run {
		r := ok(top, 1, rep, 10000)
		n := r.Figures.Requests
		per := func(v *float64) *results.Usage {
			if v == nil {
				return nil
			}
			return &results.Usage{User: *v * float64(n) / 1e6}
		}
		r.CPU = &results.CPU{Load: results.Usage{User: 1}, Nginx: per(nginx), Server: per(server)}
		return r
	}
	us := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		runs []results.Run
		// want is the median of the counted runs, n how many counted.
		want float64
		n    int
	}{
		{"standalone: nginx's idle figure is not its cost", []results.Run{run("standalone", 1, us(3), us(25))}, 25, 1},
		{"through nginx: both", []results.Run{run("nginx-http", 1, us(36), us(26))}, 62, 1},
		{"a ceiling: nginx alone", []results.Run{run("nginx-return", 1, us(12), us(5))}, 12, 1},
		{"a run without the server's time is left out",
			[]results.Run{run("nginx-http", 1, us(36), us(26)), run("nginx-http", 2, us(40), nil), run("nginx-http", 3, us(38), us(26))}, 63, 2},
		{"a run without nginx's time is left out",
			[]results.Run{run("nginx-http", 1, nil, us(26)), run("nginx-http", 2, us(36), us(26))}, 62, 1},
		{"an unknown topology: what its runs measured", []results.Run{run("mystery", 1, nil, us(30)), run("mystery", 2, nil, us(32))}, 31, 2},
		{"no CPU record", []results.Run{with(ok("nginx-http", 1, 1, 10000), func(r *results.Run) { r.CPU = nil })}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := tt.runs[0].Topology
			s := Summarize(finished(plan([]string{top}, 1)), tt.runs)
			c, found := s.Cell(Key{wrkGroup(1), top})
			require.True(t, found)
			if tt.n == 0 {
				assert.Nil(t, c.CPU)
				return
			}
			require.NotNil(t, c.CPU.Servers)
			assert.InDelta(t, tt.want, c.CPU.Servers.Center, 1e-9)
			assert.Equal(t, tt.n, c.CPU.Servers.N)
		})
	}
}

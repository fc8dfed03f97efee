package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
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

package stats

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rates are n windows around mean that stray by about cv, in a fixed
// pattern shifted by shift (so two sides are not in step).
func rates(n int, mean, cv float64, shift int) []float64 {
	pattern := []float64{1, -1, 0.5, -0.5, 0, 1.5, -1.5, 0.5, -0.5, 0}
	out := make([]float64, n)
	for i := range out {
		out[i] = mean * (1 + cv*pattern[(i+shift)%len(pattern)])
	}
	return out
}

func TestWindowSpreads(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	const overhead = 1500 * time.Millisecond // two drains
	samples := []WindowSample{
		{Window: time.Second, Standalone: rates(20, 40000, 0.08, 0), Path: rates(20, 5600, 0.12, 3)},
		{Window: 2 * time.Second, Standalone: rates(20, 40000, 0.05, 0), Path: rates(20, 5600, 0.06, 3)},
		{Window: 4 * time.Second, Standalone: rates(10, 40000, 0.03, 0), Path: rates(10, 5600, 0.04, 3)},
		{Window: 8 * time.Second, Standalone: rates(5, 40000, 0.03, 0), Path: rates(4, 5600, 0.03, 1)},
		{Window: 16 * time.Second, Standalone: rates(1, 40000, 0.03, 0), Path: rates(1, 5600, 0.03, 1)},
		{Window: time.Second, Standalone: rates(20, 40000, 0.07, 0), Path: rates(20, 5600, 0.4, 3)},
	}
	spreads := WindowSpreads(samples, d, 0.05, overhead)
	require.Len(t, spreads, len(samples))
	for i, w := range spreads[:5] {
		s := samples[i]
		assert.Equal(t, s.Window, w.Window)
		if len(s.Path) < 2 {
			assert.True(t, math.IsNaN(w.RatioSD), "too few windows")
			assert.Zero(t, w.PairsNeeded)
			continue
		}
		assert.InDelta(t, math.Sqrt(variance(s.Standalone))/meanOf(s.Standalone), w.StandaloneCV, 1e-12)
		assert.InDelta(t, math.Sqrt(variance(s.Path))/meanOf(s.Path), w.PathCV, 1e-12)
		if len(s.Path) == len(s.Standalone) {
			rs, _ := Pairwise(s.Path, s.Standalone)
			assert.Equal(t, len(rs), w.Pairs)
			assert.InDelta(t, math.Sqrt(variance(logs(rs))), w.RatioSD, 1e-12)
			assert.InDelta(t, lag1(logs(rs)), w.Lag1, 1e-12)
		} else {
			assert.Zero(t, w.Pairs, "unpaired")
			assert.InDelta(t, math.Hypot(math.Sqrt(variance(logs(s.Standalone))), math.Sqrt(variance(logs(s.Path)))), w.RatioSD, 1e-12)
		}
		require.NotZero(t, w.PairsNeeded, "%s", w.Window)
		assert.GreaterOrEqual(t, w.PairsNeeded, d.Pilot)
		assert.Equal(t, time.Duration(w.PairsNeeded)*(2*s.Window+overhead), w.Needed)
		assert.LessOrEqual(t, w.AtMax, 0.05)
		// One pair fewer is expected wider than the precision.
		if prev := w.PairsNeeded - 1; prev >= d.Pilot {
			assert.Greater(t, expectedHalfWidth(w.RatioSD, math.Max(0, w.Lag1), prev, d), 0.05)
		}
	}
	unstable := spreads[5]
	assert.Zero(t, unstable.PairsNeeded, "a path straying 40%% a window never gets within ±5%%")
	assert.Zero(t, unstable.Needed)
	assert.Greater(t, unstable.AtMax, 0.05)

	best, ok := FastestWindow(spreads)
	require.True(t, ok)
	for _, w := range spreads {
		if w.PairsNeeded > 0 {
			assert.LessOrEqual(t, best.Needed, w.Needed)
		}
	}
	_, ok = FastestWindow(spreads[4:])
	assert.False(t, ok, "none reaches the precision")

	// A duet's pairs take one window each, and share their overhead.
	duet := samples[1]
	duet.Duet = true
	w := WindowSpreads([]WindowSample{duet}, d, 0.05, overhead)[0]
	assert.Equal(t, spreads[1].PairsNeeded, w.PairsNeeded, "the same spread needs the same pairs")
	assert.Equal(t, time.Duration(w.PairsNeeded)*(duet.Window+overhead/2), w.Needed)
}

// A ratio's expected half-width agrees with what the design's interval
// gives pairs of that spread, taken as the pilot's.
func TestExpectedHalfWidth(t *testing.T) {
	for _, n := range []int{6, 9, 14, 30} {
		d, err := NewPairedDesign(n, 48, 0.05)
		require.NoError(t, err)
		rs := make([]float64, n)
		for i := range rs {
			rs[i] = 0.14 * math.Exp(0.08*[]float64{1, -1}[i%2])
		}
		for _, rho := range []float64{0, 0.2} {
			p := d.Interval(rs, rho)
			sd := math.Sqrt(variance(logs(rs)) / varianceBias(rho, n))
			assert.InDelta(t, p.HalfWidth(), expectedHalfWidth(sd, rho, n, d), 1e-9, "%d pairs at rho %v", n, rho)
		}
	}
}

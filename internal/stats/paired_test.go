package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPairedRatio(t *testing.T) {
	tests := []struct {
		name   string
		ratios []float64
		known  bool
		center float64
		lag1   float64 // sign only: -1, 0, +1
	}{
		{"no pairs", nil, false, math.NaN(), 0},
		{"two pairs are too few", []float64{0.14, 0.15}, false, math.Sqrt(0.14 * 0.15), 0},
		{"a ratio that is not positive", []float64{0.14, 0, 0.15}, false, math.NaN(), 0},
		{"geometric mean", []float64{0.1, 0.2, 0.4, 0.2, 0.1, 0.4}, true, 0.2, -1},
		{"alternating pairs", []float64{0.13, 0.15, 0.13, 0.15, 0.13, 0.15, 0.13, 0.15}, true, math.Sqrt(0.13 * 0.15), -1},
		{"a slow trend", []float64{0.12, 0.125, 0.13, 0.135, 0.14, 0.145, 0.15, 0.155}, true, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := PairedRatio(tt.ratios, 0.95, 0)
			assert.Equal(t, tt.known, p.Known())
			assert.Equal(t, len(tt.ratios), p.N)
			if !tt.known {
				assert.NotEmpty(t, p.Warnings)
				assert.True(t, math.IsInf(p.HalfWidth(), 1))
				assert.Equal(t, "∞", p.Range())
			}
			if tt.center > 0 {
				assert.InDelta(t, tt.center, p.Center, 1e-12)
			}
			switch tt.lag1 {
			case -1:
				assert.Negative(t, p.Lag1)
			case 1:
				assert.Positive(t, p.Lag1)
			}
			if tt.known {
				assert.Less(t, p.Lo, p.Center)
				assert.Greater(t, p.Hi, p.Center)
				assert.InDelta(t, math.Log(p.Center)-math.Log(p.Lo), math.Log(p.Hi)-math.Log(p.Center), 1e-12, "symmetric in the log")
				assert.Contains(t, p.Method, "correlation allowance +0.00")
			}
		})
	}
}

// A sweep whose pairs trend together gets a correlation allowance, and
// its intervals widen with it; a shuffled sweep gets less.
func TestPairedRatioWidensWithCorrelation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 32
	trend := make([]float64, n)
	for i := range trend {
		trend[i] = 0.14 * math.Exp(0.08*math.Sin(float64(i)/5)+0.02*rng.NormFloat64())
	}
	shuffled := append([]float64(nil), trend...)
	rng.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	ra, rb := SweepRho([][]float64{trend}), SweepRho([][]float64{shuffled})
	assert.Greater(t, ra.Allowed, 0.5)
	assert.Less(t, rb.Allowed, ra.Allowed)
	a, b := PairedRatio(trend, 0.95, ra.Allowed), PairedRatio(shuffled, 0.95, rb.Allowed)
	assert.InDelta(t, a.Center, b.Center, 1e-12)
	assert.Greater(t, a.Lag1, 0.5)
	assert.Greater(t, a.HalfWidth(), 1.5*b.HalfWidth())
	// A ratio and its inverse are as precise.
	inv := make([]float64, n)
	for i, r := range trend {
		inv[i] = 1 / r
	}
	assert.InDelta(t, a.HalfWidth(), PairedRatio(inv, 0.95, ra.Allowed).HalfWidth(), 1e-9)
}

// naivePaired is the interval that takes the pairs as independent: t on
// the log ratios with n-1 degrees of freedom.
func naivePaired(ratios []float64, confidence float64) PairedInterval {
	xs := logs(ratios)
	m, n := meanOf(xs), float64(len(xs))
	se := math.Sqrt(variance(xs) / n)
	t := tQuantile(n, confidence)
	return PairedInterval{Center: math.Exp(m), Lo: math.Exp(m - t*se), Hi: math.Exp(m + t*se), N: len(xs)}
}

// The sequential design keeps its intervals at 94% or better at its
// stop under correlated, drifting, dipping and heavy-tailed noise and a
// bad first pair, in sweeps of 17 ratios (16 and the A/A) that each get
// the pilot, then more pairs while wider than the precision; a ratio
// stops short of the most pairs only within the precision.
func TestPairedCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of sweeps")
	}
	const sweeps, k = 300, 17
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	for _, m := range pairModels() {
		t.Run(m.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(29, 2))
			truth := simRatio * math.Exp(m.truth)
			hit, n, in, total, early := 0, 0, 0, 0, 0
			var rhos float64
			for range sweeps {
				ps, rho := simulatedPairedSweep(rng, m, k, d)
				rhos += rho.Allowed
				for _, p := range ps {
					total++
					if p.Known() && p.Lo <= truth && truth <= p.Hi {
						hit++
					}
					n += p.N
					if p.HalfWidth() <= d.Precision {
						in++
					} else if p.N < d.MaxPairs {
						early++
					}
				}
			}
			c := float64(hit) / float64(total)
			t.Logf("%s: coverage %.1f%%, %.1f pairs on average, %.0f%% within ±5%%, allowance %.2f on average", m.name, 100*c, float64(n)/float64(total), 100*float64(in)/float64(total), rhos/sweeps)
			assert.GreaterOrEqual(t, c, 0.94)
			assert.Zero(t, early, "ratios stopped wider than the precision short of the most pairs")
		})
	}
}

// One ratio of 16 whose pool stalled for its first pair or two, at a
// tenth of the rest, leaves the sweep's allowance near the clean sweep's
// and the intervals' coverage at 94% or better: the same sweeps with and
// without the stall.
func TestPairedCoverageStall(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of sweeps")
	}
	const sweeps, k = 200, 16
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	all := pairModels()
	for _, m := range []pairModel{all[0], all[1], all[4]} {
		clean := make([]pairModel, k)
		for i := range clean {
			clean[i] = m
		}
		_, want, _ := sweepCoverage(rand.New(rand.NewPCG(29, 3)), clean, d, sweeps)
		for _, stall := range [][]float64{{0.1}, {0.1, 0.1}} {
			models := append([]pairModel{stalled(m, stall...)}, clean[1:]...)
			t.Run(models[0].name, func(t *testing.T) {
				c, allowed, early := sweepCoverage(rand.New(rand.NewPCG(29, 3)), models, d, sweeps)
				t.Logf("%s: coverage %.1f%%, allowance %.3f on average, %.3f without the stall", models[0].name, 100*c, allowed, want)
				assert.InDelta(t, want, allowed, 0.04)
				assert.GreaterOrEqual(t, c, 0.94)
				assert.Zero(t, early, "ratios stopped wider than the precision short of the most pairs")
			})
		}
	}
}

// sweepCoverage is the share of intervals that cover the truth of
// models[0] over simulated sweeps of the models, the sweeps' mean
// allowance, and how many ratios stopped wider than the precision short
// of the most pairs.
func sweepCoverage(rng *rand.Rand, models []pairModel, d PairedDesign, sweeps int) (coverage, allowed float64, early int) {
	truth := simRatio * math.Exp(models[0].truth)
	hit, total := 0, 0
	for range sweeps {
		ps, rho := simulatedMixedSweep(rng, models, d)
		allowed += rho.Allowed
		for _, p := range ps {
			total++
			if p.Known() && p.Lo <= truth && truth <= p.Hi {
				hit++
			}
			if p.HalfWidth() > d.Precision && p.N < d.MaxPairs {
				early++
			}
		}
	}
	return float64(hit) / float64(total), allowed / float64(sweeps), early
}

// At a spread of 4-6% a pair and no correlation, a ratio reaches ±5% in
// at most 9, 11 and 13 pairs on average.
func TestPairedPairsNeeded(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	for _, tt := range []struct{ sigma, most float64 }{{0.04, 9}, {0.05, 11}, {0.06, 13}} {
		sigma := tt.sigma
		m := pairModels()[0]
		m.sigmaLo, m.sigmaHi = sigma, sigma
		rng := rand.New(rand.NewPCG(5, 7))
		n, total := 0, 0
		for range 100 {
			ps, _ := simulatedPairedSweep(rng, m, 17, d)
			for _, p := range ps {
				n += p.N
				total++
			}
		}
		mean := float64(n) / float64(total)
		t.Logf("spread %.0f%%: %.1f pairs on average", 100*sigma, mean)
		assert.GreaterOrEqual(t, mean, 6.0)
		assert.LessOrEqual(t, mean, tt.most, "spread %.0f%%", 100*sigma)
	}
}

func TestPairedDesign(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	assert.Equal(t, "sequential at 95%: a pilot of 6 pairs, then more while a ratio is wider than ±5% on the spread of all its pairs, t at 98% at each look (at most 48)", d.String())
	assert.InDelta(t, 0.95, d.Confidence(), 1e-12)
	tests := []struct {
		name   string
		ratios []float64
		rho    float64
		need   int
	}{
		{"before the pilot: the pilot", steady(3, 0.14, 0.3), 0, 6},
		{"a quiet pilot needs no more", steady(6, 0.14, 0.01), 0, 6},
		{"a 7% pattern", steady(6, 0.14, 0.07), 0, 11},
		{"a 5% pattern with correlation", steady(6, 0.14, 0.05), 0.3, 14},
		{"within the precision past the pilot: the pairs it has", steady(11, 0.14, 0.05), 0, 11},
		{"a quiet pilot's later pairs spread it", append(steady(6, 0.14, 0.01), 0.155, 0.128), 0, 10},
		{"a dip after the pilot counts too", append(steady(6, 0.14, 0.05), 0.5, 0.02), 0, 0},
		{"past the most pairs", steady(6, 0.14, 0.5), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need := d.Need(tt.ratios, tt.rho)
			assert.Equal(t, tt.need, need)
			p := d.Interval(tt.ratios, tt.rho)
			n := len(tt.ratios)
			if n >= d.Pilot {
				// The interval is the projection at the pairs it has.
				assert.InDelta(t, math.Exp(logHalfWidth(p.sd, tt.rho, n, d.lookLevel()))-1, p.HalfWidth(), 1e-12)
			}
			if need > n && n >= d.Pilot {
				// The spread so far reaches the precision at need pairs,
				// not at one fewer.
				assert.LessOrEqual(t, math.Exp(logHalfWidth(p.sd, tt.rho, need, d.lookLevel()))-1, d.Precision)
				assert.Greater(t, math.Exp(logHalfWidth(p.sd, tt.rho, need-1, d.lookLevel()))-1, d.Precision)
			}
		})
	}
	_, err = NewPairedDesign(4, 10, 0.05)
	assert.ErrorContains(t, err, "at least 5 pairs")
	_, err = NewPairedDesign(8, 6, 0.05)
	assert.ErrorContains(t, err, "fewer than the pilot's")
	_, err = NewPairedDesign(6, 10, 0)
	assert.ErrorContains(t, err, "precision")
}

// A pilot whose first pair is the sweep's slow first window (0.326 beside
// ratios of 0.40 that stray 5%) asks for more pairs, and the interval
// narrows as they come in: the ratio stops a few pairs past the pilot,
// within the precision.
func TestPairedDesignNarrows(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	all := append([]float64{0.326}, steady(47, 0.40, 0.05)...)
	xs := all[:d.Pilot]
	pilot := d.Interval(xs, 0).HalfWidth()
	require.Greater(t, pilot, d.Precision)
	for len(xs) < d.Need(xs, 0) {
		xs = all[:min(d.Need(xs, 0), len(xs)+StepPairs)]
	}
	p := d.Interval(xs, 0)
	t.Logf("pilot ±%.1f%%, stopped at %d pairs ±%.1f%%", 100*pilot, len(xs), 100*p.HalfWidth())
	assert.LessOrEqual(t, p.HalfWidth(), d.Precision)
	assert.LessOrEqual(t, len(xs), 16)
	assert.InDelta(t, 0.40, p.Center, 0.02)
}

// The design's interval is t at the look level on the spread of all the
// pairs, a fixed count's t at its level: 22 independent pairs whose log
// ratios stray 7.3% read ±4.0% under the design, ±3.3% at 95%.
func TestPairedDesignInterval(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	tests := []struct {
		n              int
		sd, want, at95 float64
	}{
		{22, 0.073, 0.0400, 0.0329},
		{14, 0.070, 0.0508, 0.0412},
		{12, 0.083, 0.0673, 0.0542},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d pairs at %.1f%%", tt.n, 100*tt.sd), func(t *testing.T) {
			xs := steady(tt.n, 1, 1)
			lx := logs(xs)
			scale := tt.sd / math.Sqrt(variance(lx))
			for i := range xs {
				xs[i] = 0.4 * math.Exp(scale*(lx[i]-meanOf(lx)))
			}
			p := d.Interval(xs, 0)
			tq := stats.InvCDF(stats.TDist{V: float64(tt.n - 1)})
			assert.InDelta(t, math.Exp(tq(1-lookShare*d.Alpha/2)*tt.sd/math.Sqrt(float64(tt.n)))-1, p.HalfWidth(), 1e-9)
			assert.InDelta(t, tt.want, p.HalfWidth(), 5e-5)
			fixed := PairedRatio(xs, 0.95, 0)
			assert.InDelta(t, math.Exp(tq(0.975)*tt.sd/math.Sqrt(float64(tt.n)))-1, fixed.HalfWidth(), 1e-9)
			assert.InDelta(t, tt.at95, fixed.HalfWidth(), 5e-5)
			assert.Contains(t, p.Method, fmt.Sprintf("t on the spread of %d pairs", tt.n))
			assert.Contains(t, p.Method, "at 95% over the stopping rule (t at 98%)")
			assert.NotContains(t, fixed.Method, "stopping rule")
		})
	}
}

func TestSweepRho(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, phi := range []float64{0, 0.3, 0.6} {
		// 17 ratios of 8 pairs each, as a 10-minute sweep has.
		var est float64
		lags := 0
		const sweeps = 400
		for range sweeps {
			series := make([][]float64, 17)
			for i := range series {
				e := ar1(rng, phi, 0.05)
				for range 8 {
					series[i] = append(series[i], 0.3*math.Exp(e()))
				}
			}
			r := SweepRho(series)
			assert.Equal(t, 17, r.Series)
			assert.LessOrEqual(t, r.Lags, 17*7)
			lags += r.Lags
			est += r.Corrected
		}
		t.Logf("phi %v: %.3f on average, %.1f lags of 119", phi, est/sweeps, float64(lags)/sweeps)
		assert.Greater(t, float64(lags)/sweeps, 0.9*17*7, "few normal pairs taken as far off")
		assert.InDelta(t, phi, est/sweeps, 0.06, "the bias of short series taken back at phi %v", phi)
	}
	assert.Equal(t, maxRho, SweepRho(nil).Allowed, "no lag to go by")
	assert.Equal(t, maxRho, SweepRho([][]float64{{0.3, 0.3}}).Allowed, "too short")
}

// One ratio whose first pair or two stalled, at a tenth of the rest,
// moves the sweep's estimate little: 16 ratios of 12 pairs, the same
// sweeps with and without the stall.
func TestSweepRhoStall(t *testing.T) {
	for _, tt := range []struct {
		phi   float64
		stall []float64
	}{
		{0, []float64{0.1}},
		{0, []float64{0.1, 0.1}},
		{0.3, []float64{0.1}},
		{0.3, []float64{0.1, 0.1}},
	} {
		t.Run(fmt.Sprintf("phi %v, first pairs at %v", tt.phi, tt.stall), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 5))
			const sweeps = 200
			var clean, stalled float64
			for range sweeps {
				series := make([][]float64, 16)
				for i := range series {
					e := ar1(rng, tt.phi, 0.03+0.05*rng.Float64())
					for range 12 {
						series[i] = append(series[i], 0.5*math.Exp(e()))
					}
				}
				clean += SweepRho(series).Corrected
				series[0] = append([]float64(nil), series[0]...)
				for j, f := range tt.stall {
					series[0][j] *= f
				}
				stalled += SweepRho(series).Corrected
			}
			t.Logf("%.3f clean, %.3f with the stall", clean/sweeps, stalled/sweeps)
			assert.InDelta(t, clean/sweeps, stalled/sweeps, 0.03)
		})
	}
}

func TestTypical(t *testing.T) {
	const bound = farMADs * 1.4826
	tests := []struct {
		name string
		xs   []float64
		keep []bool
	}{
		{"within the bound", []float64{1, 2, 3, 4, 5}, []bool{true, true, true, true, true}},
		// Median 3, median absolute deviation 1.
		{"one far off", []float64{3 - bound - 0.01, 2, 3, 4, 5}, []bool{false, true, true, true, true}},
		{"just within", []float64{3 - bound + 0.01, 2, 3, 4, 5}, []bool{true, true, true, true, true}},
		{"both sides", []float64{1, 2, 3, 4, 5, 50, -50}, []bool{true, true, true, true, true, false, false}},
		{"most values tie", []float64{2, 2, 2, 2, 9}, []bool{true, true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.keep, typical(tt.xs))
		})
	}
}

func TestTQuantile(t *testing.T) {
	for _, eff := range []float64{1, 3, 3.7, 5, 9.2, 20, 47, 200} {
		for _, c := range []float64{0.9, 0.95, 0.99, 0.9917, 0.999} {
			want := stats.InvCDF(stats.TDist{V: math.Max(2, eff-1)})(1 - (1-c)/2)
			assert.InDelta(t, want, tQuantile(eff, c), 1e-6*want, "%v effective pairs at %v", eff, c)
		}
	}
}

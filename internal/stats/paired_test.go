package stats

import (
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

// The two-stage design keeps its intervals at 94% or better under
// correlated, drifting, dipping and heavy-tailed noise, in sweeps of 17
// ratios (16 and the A/A) that each take the pairs their pilot says they
// need.
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
			hit, n, in, total := 0, 0, 0, 0
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
					}
				}
			}
			c := float64(hit) / float64(total)
			t.Logf("%s: coverage %.1f%%, %.1f pairs on average, %.0f%% within ±5%%, allowance %.2f on average", m.name, 100*c, float64(n)/float64(total), 100*float64(in)/float64(total), rhos/sweeps)
			assert.GreaterOrEqual(t, c, 0.94)
		})
	}
}

// At a spread of 4-6% a pair and no correlation, a ratio reaches ±5% in
// 8, 10 and 14 pairs on average (t at 95% on the pilot's 5 degrees of
// freedom alone asks for 5, 7 and 10 at the true spread).
func TestPairedPairsNeeded(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	for _, tt := range []struct{ sigma, most float64 }{{0.04, 9}, {0.05, 11}, {0.06, 15}} {
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
	assert.Equal(t, "two-stage at 95%: a pilot of 6 pairs, then the pairs each ratio needs for ±5% (at most 48)", d.String())
	assert.InDelta(t, 0.95, d.Confidence(), 1e-12)
	tests := []struct {
		name   string
		ratios []float64
		rho    float64
		need   int
	}{
		{"before the pilot: the pilot", steady(3, 0.14, 0.3), 0, 6},
		{"a quiet pilot needs no more", steady(6, 0.14, 0.01), 0, 6},
		{"a 7% pattern", steady(6, 0.14, 0.07), 0, 10},
		{"a 5% pattern with correlation", steady(6, 0.14, 0.05), 0.3, 23},
		{"a dip after the pilot counts too", append(steady(6, 0.14, 0.05), 0.5, 0.02), 0, 0},
		{"past the most pairs", steady(6, 0.14, 0.5), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			need := d.Need(tt.ratios, tt.rho)
			assert.Equal(t, tt.need, need)
			if need > d.Pilot {
				// The pilot's spread with the pairs it asks for reaches
				// the precision; one fewer does not.
				p := steady(need, 0.14, 0)
				copy(p, tt.ratios[:d.Pilot])
				assert.LessOrEqual(t, d.Interval(p, tt.rho).HalfWidth(), d.Precision+1e-12)
				assert.Greater(t, d.Interval(p[:need-1], tt.rho).HalfWidth(), d.Precision)
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

func TestSweepRho(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, phi := range []float64{0, 0.3, 0.6} {
		// 17 ratios of 8 pairs each, as a 10-minute sweep has.
		var est float64
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
			assert.Equal(t, 17*7, r.Lags)
			est += r.Corrected
		}
		assert.InDelta(t, phi, est/sweeps, 0.06, "the bias of short series taken back at phi %v", phi)
	}
	assert.Equal(t, maxRho, SweepRho(nil).Allowed, "no lag to go by")
	assert.Equal(t, maxRho, SweepRho([][]float64{{0.3, 0.3}}).Allowed, "too short")
}

func TestTQuantile(t *testing.T) {
	for _, eff := range []float64{1, 3, 3.7, 5, 9.2, 20, 47, 200} {
		for _, c := range []float64{0.9, 0.95, 0.99, 0.9917, 0.999} {
			want := stats.InvCDF(stats.TDist{V: math.Max(2, eff-1)})(1 - (1-c)/2)
			assert.InDelta(t, want, tQuantile(eff, c), 1e-6*want, "%v effective pairs at %v", eff, c)
		}
	}
}

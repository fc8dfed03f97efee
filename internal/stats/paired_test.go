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
			p := PairedRatio(tt.ratios, 0.95)
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
				assert.Contains(t, p.Method, "effective")
				assert.GreaterOrEqual(t, p.Rho, math.Max(0, p.Lag1), "allows for at least the measured correlation")
			}
		})
	}
}

// A trend makes neighbouring pairs alike: the interval allows for it and
// is wider than one that takes the same pairs in a shuffled order.
func TestPairedRatioWidensWithCorrelation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 32
	trend := make([]float64, n)
	for i := range trend {
		trend[i] = 0.14 * math.Exp(0.08*math.Sin(float64(i)/5)+0.02*rng.NormFloat64())
	}
	shuffled := append([]float64(nil), trend...)
	rng.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	a, b := PairedRatio(trend, 0.95), PairedRatio(shuffled, 0.95)
	assert.InDelta(t, a.Center, b.Center, 1e-12)
	assert.Greater(t, a.Lag1, 0.5)
	assert.Less(t, a.Effective, b.Effective)
	assert.Greater(t, a.HalfWidth(), 1.5*b.HalfWidth())
	// A ratio and its inverse are as precise.
	inv := make([]float64, n)
	for i, r := range trend {
		inv[i] = 1 / r
	}
	assert.InDelta(t, a.HalfWidth(), PairedRatio(inv, 0.95).HalfWidth(), 1e-9)
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

// The paired design keeps its intervals at 95% or better although the
// sweep stops each ratio at the first look within ±5%, under correlated,
// drifting, dipping and heavy-tailed noise; the interval that takes the
// pairs as independent does not at phi 0.6.
func TestPairedCoverageUnderOptionalStopping(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of sweeps")
	}
	const sweeps, precision = 1000, 0.05
	cover := func(d PairedDesign, m pairModel, interval func([]float64) PairedInterval) (coverage, pairs, within float64) {
		rng := rand.New(rand.NewPCG(29, 2))
		truth := simRatio * math.Exp(m.truth)
		hit, n, in := 0, 0, 0
		for range sweeps {
			sigma := m.sigmaLo + (m.sigmaHi-m.sigmaLo)*rng.Float64()
			p := simulatedPairedSweep(rng, m, sigma, d, precision, interval)
			if p.Known() && p.Lo <= truth && truth <= p.Hi {
				hit++
			}
			n += p.N
			if p.HalfWidth() <= precision {
				in++
			}
		}
		return float64(hit) / sweeps, float64(n) / sweeps, float64(in) / sweeps
	}
	// The first look at 6 pairs as well as at 12: the early looks are
	// where stopping by looking bites.
	for _, first := range []int{6, 12} {
		d, err := NewPairedDesign(first, 48)
		require.NoError(t, err)
		t.Run(d.String(), func(t *testing.T) {
			for _, m := range pairModels() {
				t.Run(m.name, func(t *testing.T) {
					c, n, in := cover(d, m, d.Interval)
					t.Logf("%s: coverage %.1f%%, %.1f pairs on average, %.0f%% within ±5%%", m.name, 100*c, n, 100*in)
					assert.GreaterOrEqual(t, c, 0.93)
				})
			}
			t.Run("independent pairs assumed at phi 0.6", func(t *testing.T) {
				m := pairModels()[2]
				require.Equal(t, "AR(1) phi 0.6", m.name)
				c, n, _ := cover(d, m, func(r []float64) PairedInterval { return naivePaired(r, d.Confidence()) })
				t.Logf("pairs taken as independent at phi 0.6: coverage %.1f%%, %.1f pairs on average", 100*c, n)
				assert.Less(t, c, 0.90)
			})
		})
	}
}

func TestPairedDesign(t *testing.T) {
	tests := []struct {
		min, max int
		looks    []int
	}{
		{6, 48, []int{6, 9, 14, 21, 32, 48}},
		{6, 6, []int{6}},
		{3, 5, []int{3, 5}},
		{10, 40, []int{10, 15, 23, 35, 40}},
	}
	for _, tt := range tests {
		d, err := NewPairedDesign(tt.min, tt.max)
		require.NoError(t, err)
		assert.Equal(t, tt.looks, d.Looks(), "%d to %d", tt.min, tt.max)
		assert.InDelta(t, 1-0.05/float64(len(tt.looks)), d.Confidence(), 1e-12)
		for i, l := range tt.looks {
			assert.True(t, d.IsLook(l))
			assert.Equal(t, l, d.LastLook(l))
			if i+1 < len(tt.looks) {
				assert.Equal(t, tt.looks[i+1], d.NextLook(l))
				assert.Equal(t, l, d.LastLook(tt.looks[i+1]-1))
			}
		}
		assert.Equal(t, 0, d.NextLook(tt.max))
		assert.Equal(t, 0, d.LastLook(tt.min-1))
		assert.Equal(t, tt.min, d.NextLook(0))
	}
	d, _ := NewPairedDesign(6, 48)
	assert.Equal(t, "99.17% at each of 6 looks (6, 9, 14, 21, 32, 48 pairs): 95% over all of them (Bonferroni)", d.String())
	d, err := PairedDesignUpTo(48)
	require.NoError(t, err)
	assert.Equal(t, "99% at each of 5 looks (12, 18, 27, 41, 48 pairs): 95% over all of them (Bonferroni)", d.String())
	d, err = PairedDesignUpTo(8)
	require.NoError(t, err)
	assert.Equal(t, []int{8}, d.Looks())
	_, err = NewPairedDesign(2, 10)
	assert.ErrorContains(t, err, "at least 3 pairs")
	_, err = NewPairedDesign(8, 6)
	assert.ErrorContains(t, err, "fewer than the first look")
}

func TestTQuantile(t *testing.T) {
	for _, eff := range []float64{1, 3, 3.7, 5, 9.2, 20, 47, 200} {
		for _, c := range []float64{0.9, 0.95, 0.99, 0.9917, 0.999} {
			want := stats.InvCDF(stats.TDist{V: math.Max(2, eff-1)})(1 - (1-c)/2)
			assert.InDelta(t, want, tQuantile(eff, c), 1e-6*want, "%v effective pairs at %v", eff, c)
		}
	}
}

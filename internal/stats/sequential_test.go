package stats

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSequentialUpTo(t *testing.T) {
	tests := []struct {
		max, min, looks int
		level           float64
	}{
		{4, 4, 1, 0.95},
		{6, 5, 2, 0.975},
		{10, 5, 6, 1 - 0.05/6},
		{12, 6, 7, 1 - 0.05/7},
	}
	for _, tt := range tests {
		d, err := SequentialUpTo(tt.max)
		require.NoError(t, err)
		assert.Equal(t, tt.min, d.Min, "max %d", tt.max)
		assert.Equal(t, tt.looks, d.Looks(), "max %d", tt.max)
		assert.InDelta(t, tt.level, d.Confidence(), 1e-12, "max %d", tt.max)
		xs := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}[:d.Min]
		assert.True(t, RatioAt(xs, xs, d.Confidence()).Known(), "Min runs give an interval at the per-look level")
		assert.False(t, RatioAt(xs[:d.Min-1], xs[:d.Min-1], d.Confidence()).Known(), "one fewer does not")
	}
	_, err := SequentialUpTo(3)
	assert.Error(t, err, "3 runs give no ratio interval at 95%")
}

// simulatedSweep is the stopping rule of a sweep under -reps auto or
// -budget, on simulated runs: every cell and standalone get d.Min runs,
// then each round adds a run to standalone and to every cell whose ratio
// is still wider than within, until none is or they have d.Max runs (or
// the round cap, standing in for a budget that runs out). It returns
// each cell's final interval at level.
func simulatedSweep(rng *rand.Rand, d Sequential, level, within float64, ratios, sigmas []float64, roundCap int) []Ratio {
	run := func(center, sigma float64) float64 { return center * math.Exp(sigma*rng.NormFloat64()) }
	const base = 40000
	st := make([]float64, 0, d.Max)
	cells := make([][]float64, len(ratios))
	for range d.Min {
		st = append(st, run(base, sigmas[0]))
		for i, r := range ratios {
			cells[i] = append(cells[i], run(base*r, sigmas[i+1]))
		}
	}
	final := make([]Ratio, len(ratios))
	for round := d.Min; ; round++ {
		var pending []int
		for i := range ratios {
			final[i] = RatioAt(cells[i], st, level)
			if final[i].HalfWidth() > within && len(cells[i]) < d.Max {
				pending = append(pending, i)
			}
		}
		if len(pending) == 0 || round >= roundCap {
			return final
		}
		st = append(st, run(base, sigmas[0]))
		for _, i := range pending {
			cells[i] = append(cells[i], run(base*ratios[i], sigmas[i+1]))
		}
	}
}

// The sequential design keeps its intervals at 95% or better although the
// sweep stops each ratio at the first look where it is narrow enough; the
// same rule with 95% at every look covers less often.
func TestSequentialCoverageUnderOptionalStopping(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates thousands of sweeps")
	}
	ratios := []float64{0.40, 0.21, 0.27, 2.2, 0.9}
	tests := []struct {
		name     string
		max      int
		sigmas   []float64 // standalone's, then each cell's
		within   float64
		roundCap int
	}{
		// A 15 s run strays about 3-6% from its cell's median here.
		{"as on this machine, up to 10 runs", 10, []float64{0.05, 0.05, 0.06, 0.06, 0.07, 0.05}, 0.05, 10},
		{"quiet, most stop at the first look", 10, []float64{0.02, 0.02, 0.02, 0.02, 0.02, 0.02}, 0.05, 10},
		{"noisy, up to 14 runs", 14, []float64{0.08, 0.08, 0.09, 0.1, 0.1, 0.08}, 0.05, 20},
		{"a budget that ends after 7 rounds", 12, []float64{0.05, 0.05, 0.06, 0.06, 0.07, 0.05}, 0.05, 7},
	}
	const sweeps = 1000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := SequentialUpTo(tt.max)
			require.NoError(t, err)
			cover := func(level float64, seed uint64) float64 {
				rng := rand.New(rand.NewPCG(seed, 1))
				hit, n := 0, 0
				for range sweeps {
					for i, r := range simulatedSweep(rng, d, level, tt.within, ratios, tt.sigmas, tt.roundCap) {
						n++
						if r.Known() && r.Lo <= ratios[i] && ratios[i] <= r.Hi {
							hit++
						}
					}
				}
				return float64(hit) / float64(n)
			}
			seq, naive := cover(d.Confidence(), 7), cover(Confidence, 7)
			t.Logf("%s: coverage %.1f%% at %.2f%% a look; %.1f%% with 95%% at every look", d, 100*seq, 100*d.Confidence(), 100*naive)
			assert.GreaterOrEqual(t, seq, 0.93)
			assert.GreaterOrEqual(t, seq, naive)
		})
	}
}

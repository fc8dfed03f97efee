package stats

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// steady is n ratios around center that stray by about spread, in a
// fixed pattern (no correlation to speak of).
func steady(n int, center, spread float64) []float64 {
	pattern := []float64{1, -1, 0.5, -0.5, 0, 1, -1, -0.5, 0.5, 0}
	out := make([]float64, n)
	for i := range out {
		out[i] = center * math.Exp(spread*pattern[i%len(pattern)])
	}
	return out
}

func TestNextPairs(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	const cost = 5 * time.Second
	arm := func(ratios []float64) Arm { return Arm{Ratios: ratios, Cost: cost} }
	tests := []struct {
		name  string
		arms  []Arm
		left  time.Duration
		arm   int
		pairs int
		why   string
	}{
		{"no pairs yet: the first arm's pilot", []Arm{arm(nil), arm(nil)}, time.Hour, 0, 6, ""},
		{"the arm short of its pilot before any with an interval", []Arm{arm(steady(6, 0.14, 0.3)), arm(steady(2, 0.5, 0.01))}, time.Hour, 1, 4, ""},
		{"the widest, two pairs at a time", []Arm{arm(steady(6, 0.14, 0.05)), arm(steady(6, 0.5, 0.08)), arm(steady(6, 0.3, 0.06))}, time.Hour, 1, 2, ""},
		{"one within the precision gets none", []Arm{arm(steady(6, 0.14, 0.01)), arm(steady(6, 0.5, 0.08))}, time.Hour, 1, 2, ""},
		{"a closed arm gets none", []Arm{{Ratios: steady(6, 0.14, 0.3), Cost: cost, Closed: true}, arm(steady(6, 0.5, 0.08))}, time.Hour, 1, 2, ""},
		{"an arm at the most pairs gets none", []Arm{arm(steady(48, 0.14, 0.5)), arm(steady(6, 0.5, 0.08))}, time.Hour, 1, 2, ""},
		{"out of reach: on towards the most pairs", []Arm{arm(steady(6, 0.14, 0.5))}, time.Hour, 0, 2, ""},
		{"the widest gets what fits", []Arm{arm(steady(6, 0.14, 0.08)), arm(steady(6, 0.5, 0.05))}, 7 * time.Second, 0, 1, ""},
		{"a near-tie stays where the servers run", []Arm{arm(steady(6, 0.14, 0.09)), {Ratios: steady(6, 0.5, 0.08), Cost: cost, Here: true}}, time.Hour, 1, 2, ""},
		{"a clearly wider ratio elsewhere is worth a restart", []Arm{arm(steady(6, 0.14, 0.3)), {Ratios: steady(6, 0.5, 0.08), Cost: cost, Here: true}}, time.Hour, 0, 2, ""},
		{"ties go to the first", []Arm{arm(steady(6, 0.14, 0.08)), arm(steady(6, 0.14, 0.08))}, time.Hour, 0, 2, ""},
		{"every ratio within", []Arm{arm(steady(6, 0.14, 0.001)), arm(steady(9, 0.5, 0.001))}, time.Hour, -1, 0, "every ratio within ±5%"},
		{"within but one closed", []Arm{arm(steady(6, 0.14, 0.001)), {Ratios: steady(6, 0.5, 0.3), Closed: true}}, time.Hour, -1, 0, "every open ratio within ±5%; 1 closed"},
		{"the wide ones at the most pairs", []Arm{arm(steady(48, 0.14, 0.5)), arm(steady(6, 0.5, 0.001))}, time.Hour, -1, 0, "1 ratios wider than ±5% have 48 pairs, the most the design allows; 0 closed"},
		{"nothing fits", []Arm{arm(steady(9, 0.14, 0.3)), arm(steady(6, 0.5, 0.3))}, 4 * time.Second, -1, 0, "2 ratios short of the pairs they need, and not one more pair fits in the 4s left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NextPairs(tt.arms, d, 0, tt.left)
			assert.Equal(t, tt.arm, s.Arm)
			assert.Equal(t, tt.pairs, s.Pairs)
			assert.Equal(t, tt.why, s.Why)
			if s.Arm >= 0 {
				assert.LessOrEqual(t, time.Duration(s.Pairs)*tt.arms[s.Arm].Cost, tt.left)
			}
		})
	}
}

// A paired sweep on a fake clock: 8 topologies with fixed costs a pair,
// pairs from the simulated models, the budget's rule choosing what runs
// next. It never spends more than the budget, and with time enough it
// stops because every ratio reached the precision or its most pairs.
func TestNextPairsFakeClock(t *testing.T) {
	d, err := NewPairedDesign(6, 48, 0.05)
	require.NoError(t, err)
	models := pairModels()
	tests := []struct {
		name   string
		budget time.Duration
		sigmas []float64
		why    string
	}{
		{"ten minutes, quiet paths", 10 * time.Minute, []float64{0.01, 0.02, 0.02, 0.01, 0.02, 0.02, 0.01, 0.02}, "every ratio within ±5%"},
		{"ten minutes, as measured with sized pools", 10 * time.Minute, []float64{0.04, 0.04, 0.05, 0.04, 0.05, 0.06, 0.04, 0.05}, "every ratio within ±5%"},
		{"three minutes, as measured", 3 * time.Minute, []float64{0.05, 0.05, 0.06, 0.05, 0.06, 0.07, 0.05, 0.06}, ""},
		{"an hour with a path that never converges", time.Hour, []float64{0.05, 0.05, 0.3, 0.05, 0.06, 0.07, 0.05, 0.06}, "1 ratios wider than ±5% have 48 pairs, the most the design allows; 0 closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, 29))
			arms := make([]Arm, len(tt.sigmas))
			next := make([]func() (float64, float64), len(tt.sigmas))
			for i, s := range tt.sigmas {
				arms[i].Cost = time.Duration(4+i%2) * time.Second // 1 s windows after 1 s leads
				next[i] = models[0].start(rng, s)                 // independent pairs
			}
			var spent time.Duration
			var s Step
			for steps := 0; ; steps++ {
				require.Less(t, steps, 1000, "the sweep ends")
				var series [][]float64
				for _, a := range arms {
					series = append(series, a.Ratios)
				}
				s = NextPairs(arms, d, SweepRho(series).Allowed, tt.budget-spent)
				if s.Arm < 0 {
					break
				}
				for range s.Pairs {
					st, topo := next[s.Arm]()
					arms[s.Arm].Ratios = append(arms[s.Arm].Ratios, math.Exp(topo-st))
					spent += arms[s.Arm].Cost
				}
			}
			t.Logf("%s: spent %s of %s: %s", tt.name, spent, tt.budget, s.Why)
			assert.LessOrEqual(t, spent, tt.budget)
			if tt.why != "" {
				assert.Equal(t, tt.why, s.Why)
			} else {
				assert.Contains(t, s.Why, "not one more pair fits")
			}
		})
	}
}

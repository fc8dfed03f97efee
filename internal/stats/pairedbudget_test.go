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
	d, err := NewPairedDesign(6, 48)
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
		{"no pairs yet: the first arm to its first look", []Arm{arm(nil), arm(nil)}, time.Hour, 0, 6, ""},
		{"the arm short of its first look before any with an interval", []Arm{arm(steady(6, 0.14, 0.3)), arm(steady(2, 0.5, 0.01))}, time.Hour, 1, 4, ""},
		{"the widest to its next look", []Arm{arm(steady(9, 0.14, 0.1)), arm(steady(9, 0.5, 0.3)), arm(steady(9, 0.3, 0.2))}, time.Hour, 1, 5, ""},
		{"one within the precision gets none", []Arm{arm(steady(14, 0.14, 0.01)), arm(steady(6, 0.5, 0.1))}, time.Hour, 1, 3, ""},
		{"pairs past a look count at the next", []Arm{arm(steady(11, 0.14, 0.2))}, time.Hour, 0, 3, ""},
		{"a closed arm gets none", []Arm{{Ratios: steady(6, 0.14, 0.3), Cost: cost, Closed: true}, arm(steady(6, 0.5, 0.1))}, time.Hour, 1, 3, ""},
		{"an arm at the most pairs gets none", []Arm{arm(steady(48, 0.14, 0.5)), arm(steady(6, 0.5, 0.1))}, time.Hour, 1, 3, ""},
		{"the widest does not fit, the next does", []Arm{arm(steady(32, 0.14, 0.3)), arm(steady(6, 0.5, 0.1))}, time.Minute, 1, 3, ""},
		{"ties go to fewer pairs", []Arm{arm(steady(9, 0.14, 0.2)), arm(steady(6, 0.14, 0.2))}, time.Hour, 1, 3, ""},
		{"every ratio within", []Arm{arm(steady(6, 0.14, 0.001)), arm(steady(9, 0.5, 0.001))}, time.Hour, -1, 0, "every ratio within ±5%"},
		{"within but one closed", []Arm{arm(steady(6, 0.14, 0.001)), {Ratios: steady(6, 0.5, 0.3), Closed: true}}, time.Hour, -1, 0, "every open ratio within ±5%; 1 closed"},
		{"the wide ones at the most pairs", []Arm{arm(steady(48, 0.14, 0.5)), arm(steady(6, 0.5, 0.001))}, time.Hour, -1, 0, "1 ratios wider than ±5% have 48 pairs, the most the design allows; 0 closed"},
		{"nothing fits", []Arm{arm(steady(9, 0.14, 0.3)), arm(steady(6, 0.5, 0.3))}, 10 * time.Second, -1, 0, "2 ratios still wider than ±5%, and none's next pairs fit in the 10s left"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NextPairs(tt.arms, d, 0.05, tt.left)
			assert.Equal(t, tt.arm, s.Arm)
			assert.Equal(t, tt.pairs, s.Pairs)
			assert.Equal(t, tt.why, s.Why)
			if s.Arm >= 0 {
				assert.LessOrEqual(t, time.Duration(s.Pairs)*tt.arms[s.Arm].Cost, tt.left)
				assert.True(t, d.IsLook(len(tt.arms[s.Arm].Ratios)+s.Pairs), "every step ends at a look")
			}
		})
	}
}

// A paired sweep on a fake clock: 8 topologies with fixed costs a pair,
// pairs from the simulated models, the budget's rule choosing what runs
// next. It never spends more than the budget, every topology ends at a
// look, and with time enough it stops because every ratio converged.
func TestNextPairsFakeClock(t *testing.T) {
	d, err := PairedDesignUpTo(48)
	require.NoError(t, err)
	models := pairModels()
	tests := []struct {
		name    string
		budget  time.Duration
		sigmas  []float64
		why     string
		allDone bool
	}{
		{"fifteen minutes, quiet paths", 15 * time.Minute, []float64{0.01, 0.02, 0.02, 0.01, 0.02, 0.02, 0.01, 0.02}, "every ratio within ±5%", true},
		{"an hour, as measured", time.Hour, []float64{0.05, 0.05, 0.06, 0.05, 0.06, 0.07, 0.05, 0.06}, "every ratio within ±5%", true},
		{"ten minutes, as measured", 10 * time.Minute, []float64{0.05, 0.05, 0.06, 0.05, 0.06, 0.07, 0.05, 0.06}, "", false},
		{"an hour with a path that never converges", time.Hour, []float64{0.05, 0.05, 0.14, 0.05, 0.06, 0.07, 0.05, 0.06}, "1 ratios wider than ±5% have 48 pairs, the most the design allows; 0 closed", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, 29))
			arms := make([]Arm, len(tt.sigmas))
			next := make([]func() (float64, float64), len(tt.sigmas))
			for i, s := range tt.sigmas {
				arms[i].Cost = time.Duration(5+i%3) * time.Second // 2 s windows and drains
				m := models[0]                                    // independent pairs
				if s > 0.1 {
					m = models[6] // dips on the topology's side
					require.Equal(t, "dips on the topology's side (fcgi)", m.name)
				}
				next[i] = m.start(rng, s)
			}
			var spent time.Duration
			var s Step
			for steps := 0; ; steps++ {
				require.Less(t, steps, 1000, "the sweep ends")
				s = NextPairs(arms, d, 0.05, tt.budget-spent)
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
			for i, a := range arms {
				assert.True(t, len(a.Ratios) == 0 || d.IsLook(len(a.Ratios)), "arm %d ends at a look, not at %d pairs", i, len(a.Ratios))
			}
			if tt.why != "" {
				assert.Equal(t, tt.why, s.Why)
			} else {
				assert.Contains(t, s.Why, "none's next pairs fit")
			}
			if tt.allDone {
				for i, a := range arms {
					p := d.Interval(a.Ratios)
					assert.True(t, p.HalfWidth() <= 0.05 || len(a.Ratios) == d.MaxPairs, "arm %d: ±%.1f%% at %d pairs", i, 100*p.HalfWidth(), p.N)
				}
			}
		})
	}
}

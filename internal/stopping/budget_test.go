package stopping

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// firstRounds is what the first rounds of p cost at c, as FitBudget
// counts them.
func firstRounds(p results.Plan, c Costs) time.Duration {
	cells, blocks := roundShape(p)
	return c.Fixed + time.Duration(blocks)*c.Block + time.Duration(cells)*c.Warm +
		time.Duration(p.Reps*cells)*(p.Duration+c.Cell)
}

func TestFitBudget(t *testing.T) {
	def := defaultPlan()
	nominal := NominalCosts(time.Second)
	slow := Costs{Fixed: time.Minute, Block: 10 * time.Second, Cell: 3 * time.Second, Warm: 2 * time.Second}
	tests := []struct {
		name     string
		plan     results.Plan
		o        BudgetOptions
		duration time.Duration
		wantErr  string
		field    plan.Field
	}{
		{"10 minutes: 3 s runs", def, BudgetOptions{Budget: 10 * time.Minute, Precision: 0.05}, 3 * time.Second, "", ""},
		{"20 minutes: 5 s runs", def, BudgetOptions{Budget: 20 * time.Minute, Precision: 0.05}, 5 * time.Second, "", ""},
		{"an hour: 15 s runs", def, BudgetOptions{Budget: time.Hour, Precision: 0.05}, 15 * time.Second, "", ""},
		{"25 minutes: 10 s runs", def, BudgetOptions{Budget: 25 * time.Minute, Precision: 0.05}, 10 * time.Second, "", ""},
		{"slower overheads: shorter runs", def, BudgetOptions{Budget: 25 * time.Minute, Precision: 0.05, Costs: &slow}, 5 * time.Second, "", ""},
		{"-duration given", def, BudgetOptions{Budget: 20 * time.Minute, Precision: 0.05, Duration: 2 * time.Second}, 2 * time.Second, "", ""},
		{"too short", def, BudgetOptions{Budget: 2 * time.Minute, Precision: 0.05}, 0, "-budget: 2m0s is too short for 18 cells: their first rounds at 3s a run", plan.Budget},
		{"-duration too long for it", def, BudgetOptions{Budget: 10 * time.Minute, Precision: 0.05, Duration: time.Minute}, 0, "too short", plan.Budget},
		{"no budget", def, BudgetOptions{Precision: 0.05}, 0, "-budget: 0s, want a positive duration", plan.Budget},
		{"bad precision", def, BudgetOptions{Budget: time.Hour, Precision: 1}, 0, "-precision: 1", plan.Precision},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := FitBudget(tt.plan, tt.o)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				var fe *plan.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.field, fe.Field, "the command names the flag")
				if strings.Contains(tt.wantErr, "too short") {
					assertSuggestionFits(t, err, func(b time.Duration) error {
						o := tt.o
						o.Budget = b
						_, err := FitBudget(tt.plan, o)
						return err
					})
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.duration, p.Duration)
			assert.Equal(t, time.Second, p.Warmup, "warmed once per start of the servers")
			a := p.RepsAuto
			require.NotNil(t, a)
			assert.Equal(t, tt.o.Budget, a.Budget)
			assert.Equal(t, tt.o.Precision, a.Within)
			// The design is declared before the first run: the first
			// rounds are the fewest with an interval at its level.
			d, err := stats.SequentialUpTo(a.Max)
			require.NoError(t, err)
			assert.Equal(t, d.Min, p.Reps)
			assert.InDelta(t, d.Confidence(), a.Confidence, 1e-12)
			c := nominal
			if tt.o.Costs != nil {
				c = *tt.o.Costs
			}
			assert.LessOrEqual(t, float64(firstRounds(p, c)), firstShare*float64(tt.o.Budget), "the first rounds leave room")
		})
	}
}

// roundRuns records reps 1..n of every cell of p, each at rate(cell, rep).
func roundRuns(p results.Plan, from, to int, rate func(c results.Cell) float64) []results.Run {
	var runs []results.Run
	for _, b := range p.Blocks() {
		for rep := from; rep <= to; rep++ {
			for _, c := range b.Cells[:len(b.Cells)/p.Reps] {
				c.Rep = rep
				r := results.Run{Cell: c}
				if v := rate(c); v > 0 {
					r.Figures = &results.Figures{ReqPerSec: v, Requests: int64(v)}
				} else {
					r.Error = "boom"
				}
				runs = append(runs, r)
			}
		}
	}
	return runs
}

func TestNextRound(t *testing.T) {
	p := budgetPlan(t)
	costs := Costs{Block: 3 * time.Second, Cell: time.Second, Warm: 2 * time.Second}
	per := costs.Warm + p.Duration + costs.Cell
	// tight ratios everywhere but GOMAXPROCS=8's nginx-fcgi-tcp, whose
	// runs swing by ±30%.
	swing := func(c results.Cell) float64 {
		base := map[string]float64{"standalone": 40000, "nginx-http": 16000, "nginx-fcgi-tcp": 8000}[c.Topology]
		wiggle := 1 + 0.001*float64(c.Rep%3)
		if c.Topology == "nginx-fcgi-tcp" && c.GOMAXPROCS == 8 {
			wiggle = 1 + 0.3*float64(c.Rep%3-1)
		}
		return base * wiggle
	}
	first := roundRuns(p, 1, p.Reps, swing)

	t.Run("the widest ratio's group, standalone first", func(t *testing.T) {
		next, why := NextRound(p, first, time.Hour, costs)
		require.Empty(t, why)
		assert.Equal(t, 8, next.GOMAXPROCS)
		require.Len(t, next.Cells, 2)
		assert.Equal(t, "standalone", next.Cells[0].Topology)
		assert.Equal(t, "nginx-fcgi-tcp", next.Cells[1].Topology)
		for _, c := range next.Cells {
			assert.Equal(t, p.Reps+1, c.Rep, "the next repetition of each")
		}
	})
	t.Run("never plans past the budget", func(t *testing.T) {
		for _, left := range []time.Duration{0, costs.Block + per, costs.Block + 2*per - time.Millisecond, -time.Minute} {
			next, why := NextRound(p, first, left, costs)
			assert.Empty(t, next.Cells, "left %s", left)
			assert.Contains(t, why, "the budget is spent")
		}
		next, _ := NextRound(p, first, costs.Block+2*per, costs)
		assert.Len(t, next.Cells, 2, "exactly a round of two fits")
	})
	t.Run("every ratio within the precision", func(t *testing.T) {
		tight := roundRuns(p, 1, p.Reps, func(c results.Cell) float64 {
			return map[string]float64{"standalone": 40000, "nginx-http": 16000, "nginx-fcgi-tcp": 8000}[c.Topology] * (1 + 0.001*float64(c.Rep%3))
		})
		next, why := NextRound(p, tight, time.Hour, costs)
		assert.Empty(t, next.Cells)
		assert.Equal(t, "every ratio within the precision", why)
	})
	t.Run("a cell at its most runs gets no more", func(t *testing.T) {
		runs := roundRuns(p, 1, p.RepsAuto.Max, swing)
		next, why := NextRound(p, runs, time.Hour, costs)
		assert.Empty(t, next.Cells)
		assert.Contains(t, why, "the most the design allows")
	})
	t.Run("a load-bound cell is not chased", func(t *testing.T) {
		runs := roundRuns(p, 1, p.Reps, swing)
		for i := range runs {
			if runs[i].Topology == "nginx-fcgi-tcp" && runs[i].GOMAXPROCS == 8 {
				runs[i].LoadShare = 0.97
			}
		}
		next, why := NextRound(p, runs, time.Hour, costs)
		assert.Empty(t, next.Cells)
		assert.Contains(t, why, "paced by the load generator")
	})
	t.Run("a cell that never answered is not chased", func(t *testing.T) {
		runs := roundRuns(p, 1, p.Reps, func(c results.Cell) float64 {
			if c.Topology == "nginx-http" {
				return 0
			}
			return swing(c)
		})
		next, _ := NextRound(p, runs, time.Hour, costs)
		for _, c := range next.Cells {
			assert.NotEqual(t, "nginx-http", c.Topology)
		}
	})
}

// A sweep's later rounds, planned by NextRound against a fake clock that
// advances by what each round costs, end within the budget.
func TestBudgetFakeClock(t *testing.T) {
	p := budgetPlan(t)
	costs := Costs{Fixed: 15 * time.Second, Block: 3 * time.Second, Cell: 1200 * time.Millisecond, Warm: 1500 * time.Millisecond}
	noisy := func(c results.Cell) float64 {
		base := map[string]float64{"standalone": 40000, "nginx-http": 16000, "nginx-fcgi-tcp": 8000}[c.Topology]
		return base * (1 + 0.08*float64((c.Rep*7+len(c.Topology))%5-2)/2)
	}
	runs := roundRuns(p, 1, p.Reps, noisy)
	spent := firstRounds(p, costs)
	require.Less(t, spent, p.RepsAuto.Budget)
	added := 0
	for {
		next, why := NextRound(p, runs, p.RepsAuto.Budget-spent, costs)
		if len(next.Cells) == 0 {
			t.Logf("done at %s of %s after %d more runs: %s", spent, p.RepsAuto.Budget, added, why)
			break
		}
		spent += costs.Block + time.Duration(len(next.Cells))*(costs.Warm+p.Duration+costs.Cell)
		require.LessOrEqual(t, spent, p.RepsAuto.Budget, "round %d planned past the budget", added)
		for _, c := range next.Cells {
			runs = append(runs, results.Run{Cell: c, Figures: &results.Figures{ReqPerSec: noisy(c), Requests: 1}})
			added++
		}
	}
	assert.Positive(t, added, "the spare time bought runs")
}

// budgetPlan is standalone, nginx-http and nginx-fcgi-tcp at GOMAXPROCS
// 1 and 8 on a 10-minute budget.
func budgetPlan(t *testing.T) results.Plan {
	p := results.Plan{Topologies: []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}, GOMAXPROCS: []int{1, 8}, Connections: []int{100},
		Duration: 15 * time.Second, Warmup: 3 * time.Second, Threads: 1, Timeout: time.Second}
	p, err := FitBudget(p, BudgetOptions{Budget: 10 * time.Minute, Precision: 0.05})
	require.NoError(t, err)
	return p
}

// defaultPlan is the shape of the sweep's default plan (plan.DefaultPlan)
// that the budget plans by: every topology at GOMAXPROCS 1 and 8, -c5000,
// twelve 15 s runs after a 3 s warmup.
func defaultPlan() results.Plan {
	return results.Plan{Topologies: topology.Names(), GOMAXPROCS: []int{1, 8}, Connections: []int{5000},
		Reps: 12, Duration: 15 * time.Second, Warmup: 3 * time.Second}
}

// keys are the cells' keys, in order.
func keys(cells []results.Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Key())
	}
	return out
}

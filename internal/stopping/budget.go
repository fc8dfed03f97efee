package stopping

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// -budget D: the sweep plans itself to finish within D of wall time,
// everything included. FitBudget chooses, before anything runs, how long
// each run lasts and how many runs a cell may get (the sequential design
// of -reps auto: the first rounds are the fewest that give a ratio an
// interval at the per-look level, Max the most); the first rounds of
// every cell run interleaved as usual, each topology warmed once per
// start of the servers. Then NextRound spends what is left where it buys
// the most precision: a round of standalone and the cells whose ratio to
// standalone is still wider than the precision, in the group of the
// widest one, as long as the round fits in the time left by the costs
// measured so far. The sweep stops when every ratio is within the
// precision, every cell has Max runs, or nothing more fits.

// Costs are what a sweep spends besides measuring: the overhead estimates
// the budget is planned by. Nominal ones plan the sweep; the sweep then
// measures its own and plans the later rounds by those.
type Costs struct {
	// Fixed is everything before the first server starts: preflight,
	// building cmd/hello, the namespaces.
	Fixed time.Duration
	// Block is starting a block's servers and checking parity, with
	// stopping them.
	Block time.Duration
	// Cell is a run's overhead besides its warmup and measured time: the
	// wait for idle servers, the generator's start-up and exit, the
	// record.
	Cell time.Duration
	// Warm is one warmup, start-up and exit included.
	Warm time.Duration
}

// NominalCosts are a small machine's overheads under the default load:
// the plan of a budget until the sweep has measured its own.
func NominalCosts(warmup time.Duration) Costs {
	return Costs{Fixed: 20 * time.Second, Block: 3 * time.Second, Cell: 1200 * time.Millisecond, Warm: warmup + 500*time.Millisecond}
}

// Budget durations a run may be given, longest first: the longest whose
// first rounds fit wins, as a longer run strays less. None is shorter
// than 3 s: wrk counts the requests its first threads send while it
// starts the others but not that time.
var budgetDurations = []time.Duration{15 * time.Second, 10 * time.Second, 5 * time.Second, 3 * time.Second}

// firstShare is the part of the budget the first rounds may take; the
// rest goes to the widest ratios.
const firstShare = 0.85

// maxRepsCap bounds a cell's runs under a budget, however long.
const maxRepsCap = 30

// BudgetOptions are -budget's settings.
type BudgetOptions struct {
	Budget    time.Duration
	Precision float64
	// Duration is -duration's value when it was given; zero lets
	// FitBudget choose. Warmup is -warmup's when WarmupSet.
	Duration, Warmup time.Duration
	WarmupSet        bool
	// Costs are the overheads to plan by; nil for NominalCosts.
	Costs *Costs

	probing bool // a refusal's search for a budget that fits: no search of its own
}

// errProbe is a refusal while probing.
var errProbe = errors.New("budget too short")

// FitBudget turns p into a plan that fits in o.Budget: p.Duration (unless
// given) is the longest of 15, 10, 5 or 3 seconds whose first rounds
// take at most 85% of the budget at the costs c, p.Reps those first
// rounds and p.RepsAuto the rest of the design. The error names the flag
// when even the shortest runs do not fit.
func FitBudget(p results.Plan, o BudgetOptions) (results.Plan, error) {
	if o.Budget <= 0 {
		return p, plan.Errorf(plan.Budget, "%s, want a positive duration such as 10m", o.Budget)
	}
	if !(o.Precision > 0 && o.Precision < 1) {
		return p, plan.Errorf(plan.Precision, "%g, want a fraction between 0 and 1 such as 5%%", o.Precision)
	}
	if o.WarmupSet {
		p.Warmup = o.Warmup
	} else if p.Warmup > time.Second {
		p.Warmup = time.Second // once per start of the servers, not per run
	}
	c := NominalCosts(p.Warmup)
	if o.Costs != nil {
		c = *o.Costs
	}
	durations := budgetDurations
	if o.Duration > 0 {
		durations = []time.Duration{o.Duration}
	}
	cells, blocks := roundShape(p)
	var first time.Duration
	for _, d := range durations {
		run := d + c.Cell
		round := time.Duration(cells) * run
		warm := time.Duration(cells) * c.Warm
		if p.Warmup == 0 {
			warm = 0
		}
		// The rounds the budget holds if every cell ran in every one; the
		// later rounds go to a few cells, so a cell may get more.
		spare := o.Budget - c.Fixed - time.Duration(blocks)*c.Block - warm
		all := int(spare / round)
		most := min(maxRepsCap, int(math.Ceil(1.5*float64(all))))
		design, err := stats.SequentialUpTo(most)
		if err != nil {
			design, _ = stats.SequentialUpTo(stats.MinRatioSamples(stats.Confidence))
		}
		first = c.Fixed + time.Duration(blocks)*c.Block + warm + time.Duration(design.Min)*round
		if float64(first) <= firstShare*float64(o.Budget) && err == nil {
			p.Duration, p.Reps = d, design.Min
			p.RepsAuto = &results.RepsAuto{Max: design.Max, Within: o.Precision, Confidence: design.Confidence(), Budget: o.Budget}
			return p, nil
		}
	}
	if o.probing {
		return p, errProbe
	}
	need := fittingBudget(time.Duration(float64(first)/firstShare), func(b time.Duration) bool {
		q := o
		q.Budget, q.probing = b, true
		_, err := FitBudget(p, q)
		return err == nil
	})
	mins := strings.TrimSuffix(need.String(), "0s")
	return p, plan.Errorf(plan.Budget, "%s is too short for %d cells: their first rounds at %s a run take about %s; give -budget %s or more, or fewer cells",
		o.Budget, cells, durations[len(durations)-1], first.Round(time.Second), mins)
}

// roundShape is how many cells a round of p has and how many times the
// servers start for one.
func roundShape(p results.Plan) (cells, blocks int) {
	one := p
	one.Reps = 1
	for _, b := range one.Blocks() {
		blocks++
		cells += len(b.Cells)
	}
	return cells, blocks
}

// NextRound is the round a -budget sweep runs next, with left the time
// remaining and c the costs measured so far: standalone and every cell of
// the group whose widest ratio is widest among those still wider than the
// precision and short of Max runs, the widest first, as many as fit in
// left (a new start of the servers warms each). No cells: the sweep is
// done, and why says so.
func NextRound(p results.Plan, runs []results.Run, left time.Duration, c Costs) (next results.Block, why string) {
	auto := p.RepsAuto
	s := analysis.Summarize(results.Env{Plan: p}, runs)
	pending := s.Unconverged(auto.Within)
	// n counts a cell's runs, failed ones too; last is its highest rep.
	n, last := map[analysis.Key]int{}, map[analysis.Key]int{}
	for _, r := range runs {
		k := analysis.KeyOf(p, r)
		n[k]++
		last[k] = max(last[k], r.Rep)
	}
	// A cell the load generator paced in most of its runs is not chased:
	// more runs measure the generator again, not the path.
	loadBound := map[analysis.Key]bool{}
	for _, c := range s.Cells {
		loadBound[c.Key] = c.LoadBound()
	}
	pending = slices.DeleteFunc(pending, func(cv analysis.Convergence) bool {
		return cv.Hopeless || n[cv.Key] >= auto.Max || loadBound[cv.Key]
	})
	if len(pending) == 0 {
		if len(s.Unconverged(auto.Within)) == 0 {
			return next, "every ratio within the precision"
		}
		return next, fmt.Sprintf("the cells still wider than the precision have %d runs, the most the design allows, or were paced by the load generator", auto.Max)
	}
	// The widest first; the group of the widest goes next.
	slices.SortStableFunc(pending, func(a, b analysis.Convergence) int {
		switch {
		case a.HalfWidth > b.HalfWidth:
			return -1
		case a.HalfWidth < b.HalfWidth:
			return 1
		}
		return 0
	})
	g := pending[0].Key.Group
	// Each pending cell's baseline runs in its round, first.
	var want []analysis.Key
	for _, cv := range pending {
		st := analysis.Key{Group: g, Topology: topology.BaselineOf(cv.Key.Topology)}
		if cv.Key.Group == g && !slices.Contains(want, st) && slices.ContainsFunc(s.Cells, func(c analysis.Cell) bool { return c.Key == st }) {
			want = append(want, st)
		}
	}
	for _, cv := range pending {
		if cv.Key.Group == g && !slices.Contains(want, cv.Key) {
			want = append(want, cv.Key)
		}
	}
	per := c.Warm + p.Duration + c.Cell
	fits := int((left - c.Block) / per)
	if fits < min(2, len(want)) {
		return next, fmt.Sprintf("the budget is spent (%s left, a round of %d cells takes %s)", max(left, 0).Round(time.Second), min(2, len(want)), (c.Block + time.Duration(min(2, len(want)))*per).Round(time.Second))
	}
	want = want[:min(len(want), fits)]
	// The cells of the plan in its order, at their next repetition.
	byKey := map[analysis.Key]results.Cell{}
	for _, cell := range p.Cells() {
		k := analysis.KeyOf(p, results.Run{Cell: cell})
		if _, ok := byKey[k]; !ok && slices.Contains(want, k) {
			byKey[k] = cell
		}
	}
	for _, k := range want {
		cell, ok := byKey[k]
		if !ok {
			continue
		}
		cell.Rep = last[k] + 1
		next.Target, next.GOMAXPROCS = cell.Target, cell.GOMAXPROCS
		next.Cells = append(next.Cells, cell)
	}
	return next, ""
}

// crossCheckTime is what the cross-check takes at the costs c: a start of
// the servers, and a warmup and a run each.
func CrossCheckTime(p results.Plan, c Costs) time.Duration {
	cells := p.CheckCells()
	if len(cells) == 0 {
		return 0
	}
	n := NominalCosts(p.Warmup)
	return c.Block + time.Duration(len(cells))*(n.Warm+p.Paired.Check.Duration+n.Cell)
}

// fittingBudget is the budget a refusal suggests: the first whole minute
// from estimate on that fits (an estimate rounded to the nearest minute
// could itself be refused), or estimate rounded up when none within an
// hour of it does.
func fittingBudget(estimate time.Duration, fits func(time.Duration) bool) time.Duration {
	first := estimate.Truncate(time.Minute)
	if first < estimate {
		first += time.Minute
	}
	for b := first; b <= first+time.Hour; b += time.Minute {
		if fits(b) {
			return b
		}
	}
	return first
}

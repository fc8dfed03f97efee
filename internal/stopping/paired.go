package stopping

import (
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// pairedCosts are the paired design's nominal overheads: results.Cell is a
// window's beside its length (wrk's start and exit, or a session's
// drain and answer), Warm opening a pool and warming it.
func PairedCosts(p results.Plan) Costs {
	c := NominalCosts(p.Warmup)
	c.Cell = 250 * time.Millisecond
	if p.Paired != nil {
		// A pair's two windows: standalone's lead and the mean other.
		c.Cell += (p.Paired.LeadOf(p.Baseline()) + p.Paired.Lead) / 2
	}
	c.Warm = p.Warmup + 2*time.Second
	return c
}

// budgetPairs are the pilots FitPaired tries, most first: 6 pairs a
// ratio, 5 when the budget cannot hold 6 of every ratio.
var budgetPairs = []int{6, 5}

// pairedFirstShare is the part of the budget the pilots may take; the
// rest goes where the ratios are widest.
const pairedFirstShare = 0.8

// MaxPairs is a ratio's most pairs under a budget.
const MaxPairs = 48

// FitPaired plans a -design paired sweep into o.Budget: the sequential
// design's pilot (Paired.Pairs) is the most of budgetPairs whose pilots
// of every topology and the A/A take at most 80% of the budget left
// after the cross-check at the costs, its most MaxPairs.
func FitPaired(p results.Plan, o BudgetOptions) (results.Plan, error) {
	if o.Budget <= 0 {
		return p, plan.Errorf(plan.Budget, "%s, want a positive duration such as 10m", o.Budget)
	}
	if !(o.Precision > 0 && o.Precision < 1) {
		return p, plan.Errorf(plan.Precision, "%g, want a fraction between 0 and 1 such as 5%%", o.Precision)
	}
	c := PairedCosts(p)
	if o.Costs != nil {
		c = *o.Costs
	}
	_, blocks := roundShape(p)
	tops := len(p.Topologies) - 1
	pools := blocks*(tops+1) + 1 // and the A/A's twin
	var first time.Duration
	base := p.Baseline()
	for _, n := range budgetPairs {
		first = c.Fixed + time.Duration(blocks)*c.Block + time.Duration(pools)*c.Warm + PairsCost(p, c, base, n) // the A/A's
		for _, top := range p.Topologies {
			if top != base {
				first += time.Duration(blocks) * PairsCost(p, c, top, n)
			}
		}
		// The cross-check's time is kept aside first.
		if float64(first) <= pairedFirstShare*float64(o.Budget-CrossCheckTime(p, c)) {
			d, err := stats.NewPairedDesign(n, MaxPairs, o.Precision)
			if err != nil {
				return p, plan.Errorf(plan.Budget, "%w", err)
			}
			pd := *p.Paired // the caller's plan keeps its own
			pd.Pairs = n
			p.Paired = &pd
			p.RepsAuto = &results.RepsAuto{Max: MaxPairs, Within: o.Precision, Confidence: d.Confidence(), Budget: o.Budget}
			return p, nil
		}
	}
	if o.probing {
		return p, errProbe
	}
	need := fittingBudget(time.Duration(float64(first)/pairedFirstShare)+CrossCheckTime(p, c), func(b time.Duration) bool {
		q := o
		q.Budget, q.probing = b, true
		_, err := FitPaired(p, q)
		return err == nil
	})
	return p, plan.Errorf(plan.Budget, "%s is too short for %d topologies x %d blocks of pairs: their first %d pairs each take about %s; give -budget %s or more, or fewer topologies",
		o.Budget, tops, blocks, budgetPairs[len(budgetPairs)-1], first.Round(time.Second), need)
}

// NextPairs is what a paired budget runs next (stats.NextPairs), with
// left the time remaining and c the costs measured so far, cur the block
// whose servers run: the next pairs of the widest ratio short of the
// pairs it needs, if they fit. No pairs: the sweep is done, and why says
// so.
func NextPairs(p results.Plan, runs []results.Run, cur string, left time.Duration, c Costs) (b results.Block, top string, n int, why string) {
	d, ok := analysis.PairedDesignOf(p)
	if !ok {
		return b, "", 0, "no budget"
	}
	s := analysis.Summarize(results.Env{Plan: p}, runs)
	pairs := analysis.PairRatios(p, runs)
	rho := s.PairedRho.Allowed
	var arms []stats.Arm
	var cells []results.Cell
	for _, cell := range p.Cells() {
		// Standalone's arm is the A/A, in the first block only.
		if cell.Rep != 1 || cell.Load != p.LoadList()[0] {
			continue
		}
		b := results.Block{Target: cell.Target, GOMAXPROCS: cell.GOMAXPROCS, Keepalive: cell.Keepalive}
		if cell.Topology == p.Baseline() && !AABlock(p, b) {
			continue
		}
		here := b.Key() == cur
		k := analysis.KeyOf(p, results.Run{Cell: cell})
		cl, _ := s.Cell(k)
		var xs []float64
		for _, pr := range pairs[k] {
			xs = append(xs, pr.Ratio)
		}
		// A ratio the load generator paced in most of its windows, or
		// one without a pair while its windows failed, is not chased.
		closed := cl.LoadBound() || (len(xs) == 0 && cl.Failed > 0)
		// Opening its pool, and starting its block's servers, are paid
		// once for its next step's pairs.
		cost := PairsCost(p, c, cell.Topology, stats.StepPairs) / stats.StepPairs
		if ahead := min(d.Need(xs, rho)-len(xs), stats.StepPairs); ahead > 0 {
			switching := c.Warm
			if !here {
				switching += c.Block + c.Warm
			}
			cost += switching / time.Duration(ahead)
		}
		arms = append(arms, stats.Arm{Ratios: xs, Cost: cost, Closed: closed, Here: here})
		cells = append(cells, cell)
	}
	step := stats.NextPairs(arms, d, rho, left)
	if step.Arm < 0 {
		return b, "", 0, step.Why
	}
	cell := cells[step.Arm]
	b = results.Block{Target: cell.Target, GOMAXPROCS: cell.GOMAXPROCS, Cells: []results.Cell{cell}}
	return b, cell.Topology, step.Pairs, ""
}

// aaBlock reports whether b is the block whose standalone gets the A/A,
// standalone against a second pool of its own: the plan's first. One A/A
// is the sweep's check of its intervals; it costs a ratio's pairs.
func AABlock(p results.Plan, b results.Block) bool {
	bs := p.Blocks()
	return len(bs) > 0 && bs[0].Key() == b.Key()
}

// PairsCost is what n pairs of topology top's ratio take at the costs c:
// under the paired design two windows each, one after the other, each
// with its overhead (c.Cell: the lead, the drain, the answer); under the
// duet one window of n slices at once, whose overhead is paid once.
func PairsCost(p results.Plan, c Costs, top string, n int) time.Duration {
	w := p.WindowOf(top)
	if p.Paired != nil && p.Paired.Duet {
		return time.Duration(n)*w + c.Cell
	}
	return time.Duration(n) * 2 * (w + c.Cell)
}

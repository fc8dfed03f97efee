package sweep

import (
	"fmt"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stopping"
	"github.com/topobench/topobench/internal/topology"
)

// budgetClock is what a sweep has spent: since this session began, over
// the sessions before it (a resumed sweep's env.json), and on each kind of
// overhead, so that the later rounds of a budget are planned by measured
// costs rather than nominal ones.
type budgetClock struct {
	began  time.Time
	before time.Duration
	// block, cell and warm tally starting and stopping servers, a run's
	// overhead and a warmup (stopping.Costs).
	block, cell, warm tally
	// now is the clock; nil for time.Now (a fake in tests).
	now func() time.Time
}

// at is the clock's time.
func (c budgetClock) at() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// since is the time since t by the clock.
func (c budgetClock) since(t time.Time) time.Duration { return c.at().Sub(t) }

type tally struct {
	sum time.Duration
	n   int
}

func (t *tally) add(d time.Duration) { t.sum += max(d, 0); t.n++ }

func (t tally) mean(otherwise time.Duration) time.Duration {
	if t.n == 0 {
		return otherwise
	}
	return t.sum / time.Duration(t.n)
}

// spent is the wall time the sweep has taken so far.
func (c budgetClock) spent() time.Duration {
	if c.began.IsZero() {
		return c.before
	}
	return c.before + c.since(c.began)
}

// costs are the overheads measured so far, the nominal ones where nothing
// was measured yet. A block is counted per start and per stop, so its
// cost is twice the mean.
func (c budgetClock) costs(nominal stopping.Costs) stopping.Costs {
	nominal.Block = 2 * c.block.mean(nominal.Block/2)
	nominal.Cell = c.cell.mean(nominal.Cell)
	nominal.Warm = c.warm.mean(nominal.Warm)
	return nominal
}

// budgeted reports whether the sweep runs on a time budget.
func (s *sweep) budgeted() bool { return s.plan.RepsAuto != nil && s.plan.RepsAuto.Budget > 0 }

// budgetLeft is the time left of the budget; negative once past it.
func (s *sweep) budgetLeft() time.Duration {
	return s.plan.RepsAuto.Budget - s.clock.spent()
}

// overrun is how far past its budget a sweep may go before it stops in
// the middle of a round: the first rounds are planned at 85% of it with
// nominal costs, which a busy machine can exceed.
const overrun = 0.1

// outOfBudget reports, once, that a -budget sweep went past its budget
// and stops it; the cells measured are kept and reported.
func (s *sweep) outOfBudget() bool {
	if !s.budgeted() || s.out.OutOfTime {
		return s.out.OutOfTime
	}
	if left := s.budgetLeft(); float64(left) < -overrun*float64(s.plan.RepsAuto.Budget) {
		s.out.OutOfTime = true
		fmt.Fprintf(s.Progress, "budget: %s spent of %s; stopping with what is measured\n", progress.Round(s.clock.spent()), progress.Round(s.plan.RepsAuto.Budget))
	}
	return s.out.OutOfTime
}

// ratioNote is the cell's ratio to standalone so far, for its progress
// line when the design notes them (sweep.ratios): "; vs standalone 0.40
// ± 7% (n 5, want ±5%)".
func (s *sweep) ratioNote(c Cell) string {
	auto := s.plan.RepsAuto
	if !s.ratios {
		return ""
	}
	sum := analysis.Summarize(results.Env{Plan: s.plan.Plan}, s.runs)
	cell, ok := sum.Cell(analysis.KeyOf(s.plan.Plan, results.Run{Cell: c}))
	if !ok || cell.RatioToStandalone == nil || c.Topology == topology.BaselineOf(c.Topology) {
		return ""
	}
	r := cell.RatioToStandalone
	want := ""
	if auto != nil {
		want = ", want ±" + numfmt.Pct(auto.Within)
	}
	return fmt.Sprintf("; vs standalone %s ± %s (n %d%s)", numfmt.Figure(r.Center), progress.HalfWidth(r.HalfWidth()), r.N, want)
}

package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stopping"
)

// rounds is the design that measures every cell of the plan once a
// round, the rounds interleaved (results.Plan.Cells), each block of cells
// on a start of the servers of its own. After the planned rounds it
// stops, or adds more by a stopping rule (more).
type rounds struct {
	s    *sweep
	more moreRounds
	// blocks are the plan's; todo the planned rounds' blocks not yet
	// run, with the cells measured already left out.
	blocks, todo []Block
	// start is when the first cell began, for the progress's estimates.
	start time.Time
	// conv is the block -reps auto converges now (moreConverge).
	conv int
	// cur are the servers a budget's rounds keep while the next round
	// is in their block (curKey), and warmed the cells warmed on them.
	cur    servers
	curKey string
	warmed map[string]bool
}

// moreRounds is the rule that adds rounds after the planned ones.
type moreRounds int

const (
	// moreNone adds none: -reps N.
	moreNone moreRounds = iota
	// moreConverge adds a round at a time to a block until its ratios
	// converge (-reps auto, stopping.Converge).
	moreConverge
	// moreBudget adds the round that buys the most precision in the time
	// left (-budget, stopping.NextRound).
	moreBudget
)

func (r *rounds) announce() {
	s, p := r.s, r.s.plan
	r.blocks = p.Blocks()
	for _, b := range r.blocks {
		s.out.Total += len(b.Cells)
	}
	r.todo = Remaining(r.blocks, s.done)
	n := 0
	var est time.Duration
	for _, b := range r.todo {
		n += len(b.Cells)
		for _, c := range b.Cells {
			est += p.CellTime(c)
		}
	}
	s.out.Skipped = s.out.Total - n
	if r.more == moreBudget {
		a := p.RepsAuto
		fmt.Fprintf(s.Progress, "budget %s (%s left): %d cells (%s) first, %s a run, then more runs where the ratios to standalone are wider than ±%s, up to %d a cell; intervals at %.4g%% a look\n",
			progress.Round(a.Budget), progress.Round(max(s.budgetLeft(), 0)), s.out.Total, p.Describe(), progress.Round(p.Duration), numfmt.Pct(a.Within), a.Max, 100*a.Level())
	} else {
		fmt.Fprintf(s.Progress, "%d cells (%s), %d to run: about %s\n", s.out.Total, p.Describe(), n, progress.Round(est))
	}
	r.start = time.Now()
}

func (r *rounds) next() (step, bool) {
	if len(r.todo) > 0 {
		b := r.todo[0]
		r.todo = r.todo[1:]
		return step{Block: b}, true
	}
	switch r.more {
	case moreConverge:
		return r.nextConverge()
	case moreBudget:
		return r.nextBudget()
	}
	return step{}, false
}

// nextConverge is the round -reps auto adds next, block by block, from
// what is recorded, so a resumed sweep carries on where it stopped.
func (r *rounds) nextConverge() (step, bool) {
	s, auto := r.s, r.s.plan.RepsAuto
	for ; r.conv < len(r.blocks); r.conv++ {
		b := r.blocks[r.conv]
		v := stopping.Converge(s.plan.Plan, b, s.runs)
		label := fmt.Sprintf("reps auto, GOMAXPROCS=%d", b.GOMAXPROCS)
		if b.Target != results.TargetGo {
			label += " " + b.Target
		}
		if len(v.Next.Cells) > 0 {
			fmt.Fprintf(s.Progress, "%s: round %d of at most %d; %s\n", label, v.Next.Cells[0].Rep, auto.Max, v)
			s.out.Total += len(v.Next.Cells)
			return step{Block: v.Next}, true
		}
		if len(v.Pending) == 0 {
			fmt.Fprintf(s.Progress, "%s: converged after %d rounds, every ratio within ±%.0f%%\n", label, v.Rounds, 100*auto.Within)
		} else {
			fmt.Fprintf(s.Progress, "%s: DID NOT CONVERGE after %d rounds (at most %d): %s\n", label, v.Rounds, auto.Max, v)
		}
	}
	return step{}, false
}

// nextBudget is the round a -budget sweep adds next (stopping.NextRound), planned
// by the costs measured so far: without a start of the servers when it
// stays in the block whose servers run.
func (r *rounds) nextBudget() (step, bool) {
	s := r.s
	c := s.clock.costs(stopping.NominalCosts(s.plan.Warmup))
	running := c
	if r.cur != nil {
		running.Block = 0 // the servers run already if the round stays in their block
	}
	next, why := stopping.NextRound(s.plan.Plan, s.runs, s.budgetLeft(), running)
	if len(next.Cells) > 0 && r.cur != nil && next.Key() != r.curKey {
		// Another block: its servers must start; plan again with that.
		next, why = stopping.NextRound(s.plan.Plan, s.runs, s.budgetLeft(), c)
	}
	if len(next.Cells) == 0 {
		fmt.Fprintf(s.Progress, "budget: done after %s: %s\n", progress.Round(s.clock.spent()), why)
		return step{}, false
	}
	return step{Block: next, spare: true}, true
}

// run measures a round's cells: a planned or converging round on a start
// of the servers of its own, a budget's on the servers of the round
// before when they are its block's.
func (r *rounds) run(ctx context.Context, st step) error {
	s := r.s
	if !st.spare {
		srv, err := s.startBlock(ctx, st.Block, r.more == moreBudget)
		if srv == nil {
			return err
		}
		defer s.stopBlock(srv)
		var warmed map[string]bool
		if r.more == moreBudget {
			warmed = map[string]bool{} // a budget warms a cell once a start
		}
		return s.runCells(ctx, srv, st.Cells, r.start, warmed)
	}
	if key := st.Block.Key(); r.cur == nil || key != r.curKey {
		r.stop()
		srv, err := s.startBlock(ctx, st.Block, r.more == moreBudget)
		if srv == nil {
			return err
		}
		r.cur, r.curKey, r.warmed = srv, key, map[string]bool{}
	}
	var names []string
	for _, c := range st.Cells {
		names = append(names, c.Topology)
	}
	fmt.Fprintf(s.Progress, "budget: %s left; next %sGOMAXPROCS=%d %s\n", progress.Round(max(s.budgetLeft(), 0)), targetPrefix(st.Target), st.GOMAXPROCS, strings.Join(names, ", "))
	s.out.Total += len(st.Cells)
	return s.runCells(ctx, r.cur, st.Cells, r.start, r.warmed)
}

func (r *rounds) stop() {
	if r.cur != nil {
		r.s.stopBlock(r.cur)
	}
	r.cur, r.curKey, r.warmed = nil, "", nil
}

package sweep

import (
	"context"
)

// A design is how a sweep measures: which cells, in which order, on which
// starts of the servers, and when it is done. The sweep runs one loop
// over it (measure): it asks the design for its next step and has the
// design run it, until the design has nothing more, the context ends or
// the budget is spent. Each design is in a file of its own:
//
//   - rounds (rounds.go): every cell once a round, the rounds
//     interleaved, a start of the servers a block; then, under -reps
//     auto, more rounds until the ratios converge, or, under -budget,
//     the rounds that buy the most precision in the time left.
//   - paired (paired.go): pairs of windows, standalone's and a
//     topology's, in one load session that keeps its pools, one after
//     the other.
//   - duet (duet.go): the paired design with each pair's two windows at
//     once, standalone's server and the topology's each on half of the
//     servers' CPUs.
//
// The stopping rules a design asks are pure functions over the records
// (stopping.Converge, stopping.NextRound, stopping.NextPairs).
type design interface {
	// announce says what the design measures, for the progress, and
	// counts what it plans in the sweep's outcome.
	announce()
	// next is the step to run next; false when the design is done.
	next() (step, bool)
	// run measures a step on the servers of its block, starting them
	// unless the design keeps them from the step before.
	run(ctx context.Context, st step) error
	// stop stops the servers the design keeps, if any.
	stop()
}

// step is what a design measures next on one start of the servers.
type step struct {
	// Block names the servers the step needs; its Cells are what the
	// step measures.
	Block
	// n is each cell's count of pairs or windows; 0 measures each cell
	// once, as a round does.
	n int
	// spare marks a step that spends what is left of a budget, chosen
	// by its stopping rule; it runs on the servers of the step before
	// when those are its block's.
	spare bool
	// latency marks a paired block's latency phase (latency.go).
	latency bool
}

// chooseDesign is the plan's design: paired under -design paired, rounds
// otherwise, stopping after the planned rounds, when the ratios converge
// (-reps auto) or when the budget is spent (-budget).
func (s *sweep) chooseDesign() design {
	p := s.plan
	s.ratios = true
	switch {
	case p.Duet():
		return &paired{s: s, budget: s.budgeted(), pairing: duet{s}}
	case p.Paired != nil:
		return &paired{s: s, budget: s.budgeted(), pairing: alternate{s}}
	case s.budgeted():
		return &rounds{s: s, more: moreBudget}
	case p.RepsAuto != nil:
		return &rounds{s: s, more: moreConverge}
	}
	s.ratios = false
	return &rounds{s: s, more: moreNone}
}

// measure runs the plan's design: its steps one after the other, until
// it is done, the context ends (the outcome says interrupted) or the
// budget is spent. The servers it kept are stopped on every return.
func (s *sweep) measure(ctx context.Context) error {
	return s.runDesign(ctx, s.chooseDesign())
}

// runDesign is the one loop of a sweep, over design d.
func (s *sweep) runDesign(ctx context.Context, d design) error {
	d.announce()
	defer d.stop()
	for {
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil
		}
		if s.outOfBudget() {
			return nil
		}
		st, ok := d.next()
		if !ok {
			return nil
		}
		if err := d.run(ctx, st); err != nil {
			return err
		}
	}
}

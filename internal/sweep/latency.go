package sweep

import (
	"context"
	"fmt"
	"slices"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/progress"
)

// The latency phase of a paired design (results.Latency): after a block's
// first pairs, on the block's servers, standalone and each path with Go
// behind it run alone, open loop at one rate (plan.LatencyCells' order),
// each a cell run as a round runs it (runCells: the per-run engine, the
// one measurement step), so each is a record like any other.

// latencyStep is block b's latency phase as a step; false when the plan
// has none or every run of it is recorded.
func (s *sweep) latencyStep(b Block) (step, bool) {
	cells := slices.DeleteFunc(s.plan.LatencyCells(b), func(c Cell) bool { return s.done[c.Key()] })
	if len(cells) == 0 {
		return step{}, false
	}
	return step{Block: Block{Target: b.Target, GOMAXPROCS: b.GOMAXPROCS, Keepalive: b.Keepalive, Cells: cells}, latency: true}, true
}

// latency runs a latency step on the servers of the block's pairs, whose
// pools through nginx close first (nginx holds the clients of one
// topology's pool at a time); a block whose pairs are not running (a
// resumed sweep) gets a start of its own servers.
func (d *paired) latency(ctx context.Context, st step) error {
	s := d.s
	if d.pb != nil && d.pb.b.Key() != st.Block.Key() {
		d.stop()
	}
	srv := servers(nil)
	if d.pb != nil {
		srv = d.pb.st
		for p := range d.pb.open {
			if p != d.pb.alone && p != twinPool {
				if err := d.pb.sess.Close(ctx, p); err != nil && ctx.Err() == nil {
					s.warn("%v", err)
				}
				delete(d.pb.open, p)
			}
		}
	} else {
		var err error
		if srv, err = s.startBlock(ctx, st.Block, d.budget); srv == nil {
			return err
		}
		defer s.stopBlock(srv)
	}
	l := s.plan.Paired.Latency
	rate := fmt.Sprintf("%g req/s", l.Rate)
	if l.Fraction > 0 {
		r, err := s.fractionRate(st.Cells[0])
		if err != nil {
			return err
		}
		rate = fmt.Sprintf("%g req/s (%g of the slowest path's req/s in the pairs, each side on half the servers' CPUs)", r, l.Fraction)
	}
	fmt.Fprintf(s.Progress, "latency: %d runs of %s alone at %s, %d connections, open loop (-latency-rate %s)\n",
		len(st.Cells), progress.Round(l.Duration), rate, st.Cells[0].Connections, plan.LatencyLabel(l))
	// No warmup: the pairs warmed the servers, and each run opens its
	// connections before its clock starts.
	warmed := map[string]bool{}
	for _, c := range st.Cells {
		c.Rep = 0
		warmed[c.Key()] = true
	}
	s.out.Total += len(st.Cells)
	return s.runCells(ctx, srv, st.Cells, s.clock.at(), warmed)
}

package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
)

// -design duet: duet benchmarking (Bulej et al., ICPE 2020) at the scale
// of seconds. A pair's two windows, standalone's and the topology's, run
// at the same time instead of one after the other, so whatever the
// machine does meanwhile hits both alike. Each start of the servers runs
// two sets of them on the servers' CPUs: standalone's cmd/hello in a
// process and control group of its own (the standalone side), and every
// topology's servers, nginx and its own cmd/hello, in another (the
// topology side); the two groups have equal CPU weights, so each side has
// half of the CPUs when both are busy, whatever its count of threads.
// The load session holds standalone's pool for the block and each
// topology's in turn; a topology's pool warms beside standalone's, then
// one command (load's together ... slices N) loads both without a pause
// and cuts them at the same edges. Each slice is a pair, recorded as the
// paired design records its pairs, so its analysis, budget and reports
// are the paired design's; the duet is a pairing of that design
// (paired.go), not a design of its own.
//
// What it measures is therefore a nearby operating point, not the same
// one: each side on half of the servers' CPUs, and standalone in a
// process of its own. Which pool starts first is drawn for each
// together; the A/A (standalone against standalone on the topology side)
// runs in two halves, the second with the sides' roles swapped, so that
// a bias of one pool or one group over the other cancels.

// duet is the duet's pairing (paired.go): two sides of servers, and each
// pair's windows at once.
type duet struct{ s *sweep }

func (d duet) start(ctx context.Context, b Block, st servers) (servers, error) {
	ds, err := d.s.startSides(ctx, b, st, true)
	if err != nil {
		return nil, err // both sides stopped
	}
	return ds, nil
}

// warm loads a pool just opened together with standalone's, as its
// pairs will be: the first seconds of a topology's pool (nginx opening
// thousands of upstream connections to a backend on half a CPU) are
// slower than the rest, and would land in the pilot's first pairs.
// Standalone's own pool, the first of the block, warms alone.
func (d duet) warm(ctx context.Context, pb *pairedBlock, pool string, dur time.Duration) error {
	if base(pool) == pb.alone {
		_, err := pb.sess.Window(ctx, pool, dur, nil)
		return err
	}
	ts, ok := pb.sess.(loadgen.TogetherSession)
	if !ok {
		return errors.New("duet: the load session cannot run two pools at once (the built-in engine's can)")
	}
	_, err := ts.Together(ctx, []string{pb.name(pb.alone), pool}, load.WindowSpec{Duration: dur}, nil, nil)
	return err
}

func (d duet) pairs(ctx context.Context, pb *pairedBlock, top string, n int) error {
	return d.s.duetPairs(ctx, pb, top, n)
}

// duetPairs runs n pairs of the duet of top with standalone: both pools
// load without a pause for n windows, cut into n slices, each slice a
// pair. The A/A's pairs are run in two halves, the second with the roles
// of the first swapped, so that neither side plays standalone in all of
// them.
func (s *sweep) duetPairs(ctx context.Context, pb *pairedBlock, top string, n int) error {
	swap := topologyFirst(s.plan.Paired.Seed^0x5eed, pb.b.Target, pb.b.GOMAXPROCS, pb.name(top), pb.index[pb.name(top)]+1)
	if top != pb.alone || n < 2 {
		return s.duetTogether(ctx, pb, top, n, swap)
	}
	h := n / 2
	if err := s.duetTogether(ctx, pb, top, h, swap); err != nil || ctx.Err() != nil {
		return err
	}
	return s.duetTogether(ctx, pb, top, n-h, !swap)
}

// duetSide is one side of a duet's pairs: the topology it measures, its
// pool, its servers and their counter files, and its neighbour's
// accounting counter (the noise counts it as the run's own).
type duetSide struct {
	top, pool string
	twin      bool
	st        servers
	counter   loadgen.Counters
	beside    string
}

// duetOrder is the order of a duet's two sides for top's next pairs, as
// drawn (draw puts the topology side first); swap gives the A/A's
// standalone role to the topology side's server.
func (s *sweep) duetOrder(pb *pairedBlock, d *rig.TwoSides, top string, swap bool) (order []duetSide, draw bool) {
	aa := top == pb.alone
	draw = topologyFirst(s.plan.Paired.Seed, pb.b.Target, pb.b.GOMAXPROCS, pb.name(top), pb.index[pb.name(top)]+1)
	sa := duetSide{pb.alone, pb.name(pb.alone), false, d.Standalone, d.Counters[0], d.Counters[1].Total}
	tp := duetSide{top, pb.name(pb.poolOf(top)), aa, d.Servers, d.Counters[1], d.Counters[0].Total}
	if aa && swap {
		// Either side's server plays standalone; the other the twin.
		sa.pool, tp.pool = tp.pool, sa.pool
		sa.st, tp.st = tp.st, sa.st
		sa.counter, tp.counter = tp.counter, sa.counter
		sa.beside, tp.beside = tp.beside, sa.beside
	}
	order = []duetSide{sa, tp}
	if draw {
		order[0], order[1] = order[1], order[0]
	}
	return order, draw
}

// duetRuns are the records of top's next n pairs, one a side a pair in
// order, numbered on from the block's: standalone's windows by the
// block's pairs, a topology's by its own, the A/A's twin by the block's.
func (s *sweep) duetRuns(pb *pairedBlock, top string, order []duetSide, n int) [][]*results.Run {
	runs := make([][]*results.Run, n)
	for k := range n {
		pb.index[pb.name(top)]++
		pb.seq++
		index, seq := pb.index[pb.name(top)], pb.seq
		reps := [2]int{seq, index}
		if top == pb.alone {
			pb.seq++
			reps[1] = pb.seq
		}
		runs[k] = make([]*results.Run, 2)
		for pos, sd := range order {
			c := pb.cellOf(sd.top)
			c.Rep = reps[0]
			if sd.top != pb.alone || sd.twin {
				c.Rep = reps[1]
			}
			runs[k][pos] = &results.Run{
				Cell: c, URL: s.urlOf(pb, sd.pool, c), LoadCPUs: s.plan.PinLoad, ServerCPUs: s.plan.PinServer,
				Pair: &results.Pair{With: top, Index: index, Seq: seq, First: pos == 0, Twin: sd.twin},
			}
			if k == 0 {
				runs[k][pos].Connect = pb.connect[sd.pool]
				pb.connect[sd.pool] = 0
			}
		}
	}
	return runs
}

// duetTogether runs n pairs of top with standalone at once, in one
// together of n slices; swap gives the A/A's standalone role to the
// topology side's server.
func (s *sweep) duetTogether(ctx context.Context, pb *pairedBlock, top string, n int, swap bool) error {
	d, ok := pb.st.(*rig.TwoSides)
	if !ok {
		return errors.New("duet: the block has no standalone side")
	}
	ts, ok := pb.sess.(loadgen.TogetherSession)
	if !ok {
		return errors.New("duet: the load session cannot run two pools at once (the built-in engine's can)")
	}
	order, draw := s.duetOrder(pb, d, top, swap)
	name := top
	if top == pb.alone {
		name = "A/A"
	}
	lead := s.leadOf(pb, top)
	window := s.plan.WindowOf(top)
	runs := s.duetRuns(pb, top, order, n)
	pools := []string{order[0].pool, order[1].pool}
	counters := []loadgen.Counters{order[0].counter, order[1].counter}
	fmt.Fprintf(s.Progress, "[pairs %d-%d %s] %s%s and %s at once, %d windows of %s  (elapsed %s%s)\n", runs[0][0].Pair.Index, runs[n-1][0].Pair.Index, name, targetPrefix(pb.b.Target),
		order[0].top, order[1].top, n, progress.Round(window), progress.Round(s.clock.spent()), s.leftNote())
	began := s.clock.at()
	ws := load.WindowSpec{Duration: time.Duration(n) * window, Lead: lead}
	if n > 1 {
		ws.Slices = n
	}
	sp := span{
		sides:  []servers{order[0].st, order[1].st},
		beside: []string{order[0].beside, order[1].beside},
		net:    d.Servers, netPos: slices.IndexFunc(order, func(sd duetSide) bool { return sd.st == d.Servers }),
		slice: window,
		call:  func() ([]byte, error) { return ts.Together(ctx, pools, ws, runs, counters) },
	}
	raw, err := s.measureSpan(ctx, sp, runs)
	s.clock.cell.add(s.clock.since(began) - time.Duration(n)*window)
	if ctx.Err() != nil && err != nil {
		fmt.Fprintln(s.Progress, "interrupted")
		return nil
	}
	for _, rs := range runs {
		if err := s.keepPair(rs, raw, name, draw, pb.cellOf(top)); err != nil {
			return err
		}
	}
	if n > 0 {
		last := runs[n-1][0]
		if last.Figures != nil && !last.Failed() {
			fmt.Fprintln(s.Progress, "  "+drainNote(*last)+progress.CPUNote(*last))
		}
	}
	if err := pb.st.Alive(); err != nil {
		return fmt.Errorf("during the pairs of %s: %w", name, err)
	}
	return nil
}

// keepPair keeps a duet's pair of runs, one a side, and prints its line:
// each side's rate and the pair's ratio; draw says the topology side's
// run is the first.
func (s *sweep) keepPair(rs []*results.Run, raw []byte, name string, draw bool, top Cell) error {
	var rates [2]float64
	var lines []string
	for pos, run := range rs {
		ok, err := s.keep(*run, raw, false)
		switch {
		case err != nil:
			return err
		case ok:
			rates[pos] = run.Figures.ReqPerSec
			lines = append(lines, fmt.Sprintf("%s %s req/s", run.Topology, numfmt.Figure(rates[pos])))
		default:
			lines = append(lines, fmt.Sprintf("%s FAILED: %s", run.Topology, progress.Failure(run.Error)))
		}
	}
	line := fmt.Sprintf("  pair %d %s: %s", rs[0].Pair.Index, name, strings.Join(lines, ", "))
	if rates[0] > 0 && rates[1] > 0 {
		ratio := rates[1] / rates[0]
		if draw {
			ratio = rates[0] / rates[1]
		}
		line += fmt.Sprintf(": %s of standalone%s", numfmt.Figure(ratio), s.ratioNote(top))
	}
	fmt.Fprintln(s.Progress, line)
	return nil
}

// groupUsage reads an accounting group's counter file; 0 where there is
// none or it cannot be read (the noise then counts the other side as
// the rest of the machine's).
func groupUsage(path string) time.Duration {
	if path == "" {
		return 0
	}
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	d, err := cgroup.ParseUsage(f)
	if err != nil {
		return 0
	}
	return d
}

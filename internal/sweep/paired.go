package sweep

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/stopping"
	"github.com/topobench/topobench/internal/target"
)

// -design paired: randomized multiple interleaved trials (Abedi and
// Brecht, ICPE 2017) at the scale of seconds. Each start of the servers
// opens standalone's pool once in one load session; then, for each other
// topology, it opens that topology's pool in the same session and runs
// pairs of measured windows, standalone's and the topology's, in an order
// drawn anew for every pair (topologyFirst). Each window is a run of its
// own (CPU per request per process as for any run); the drain after it is
// not measured. Each pair gives one ratio (analysis.PairRatios), so a slow
// minute of the host hits both sides of a pair alike. Without a budget
// every topology gets Paired.Pairs pairs; with one (-budget), that many
// first, then stopping.NextPairs spends the rest where the intervals are widest.

// topologyFirst draws the order of a pair's two windows: the same for the
// same pair whenever it is drawn (a resumed sweep), a fresh draw for every
// pair.
func topologyFirst(seed uint64, target string, gomaxprocs int, top string, index int) bool {
	h := fnv.New64a()
	h.Write([]byte(target + "/" + strconv.Itoa(gomaxprocs) + "/" + top + "/" + strconv.Itoa(index)))
	return rand.New(rand.NewPCG(seed, h.Sum64())).IntN(2) == 1
}

// pairedBlock is one start of the servers under the paired design: its
// servers, its session, standalone's pool and the numbering of its pairs.
type pairedBlock struct {
	b    Block
	st   servers
	sess loadgen.Session
	// standalone is standalone's cell in the block (Rep 0); alone is its
	// topology, the plan's Baseline (standalone-tls for paths over TLS).
	standalone Cell
	alone      string
	// sched is the group whose pairs run: each handler work has its own
	// pools (name), pair numbers and leads.
	sched results.Schedule
	// index is the last pair index by topology, seq the block's last
	// pair number: both from the records, so resumed pairs follow them.
	index map[string]int
	seq   int
	// connect is the time spent opening a pool, charged to its next
	// window's record.
	connect map[string]time.Duration
	// open are the session's open pools. A topology's stays open between
	// its batches of pairs until another topology's opens: nginx's worker
	// holds one topology's clients and upstream connections at a time.
	// Standalone's pools (its own and the A/A's twin) stay for the block.
	open map[string]bool
	// pairing is how the block runs its pairs (alternate, or duet).
	pairing pairing
	// led are the topologies whose pairs have run since their pool
	// opened (leadOf); warmed those whose pool has warmed in the block
	// (warmOf).
	led, warmed map[string]bool
}

// pairing is how a paired design's block runs its pairs: one window
// after the other (alternate, here), or both at once (duet, duet.go).
type pairing interface {
	// start adds to a block's servers st what its pairs need, and
	// returns the servers the block keeps.
	start(ctx context.Context, b Block, st servers) (servers, error)
	// pairs runs n pairs of top with standalone on pb's open pools.
	pairs(ctx context.Context, pb *pairedBlock, top string, n int) error
	// warm loads a pool just opened for d, unrecorded.
	warm(ctx context.Context, pb *pairedBlock, pool string, d time.Duration) error
}

// alternate is the paired design's pairing: standalone's window and the
// topology's one after the other, in an order drawn for each pair
// (onePair), on one set of servers.
type alternate struct{ s *sweep }

// start adds standalone's own process where the plan asks for one.
func (a alternate) start(ctx context.Context, b Block, st servers) (servers, error) {
	if !a.s.plan.Paired.Own {
		return st, nil
	}
	ts, err := a.s.startSides(ctx, b, st, false)
	if err != nil {
		return nil, err // both sides stopped
	}
	return ts, nil
}

// warm loads the pool alone, as its windows will be.
func (a alternate) warm(ctx context.Context, pb *pairedBlock, pool string, d time.Duration) error {
	_, err := pb.sess.Window(ctx, pool, d, nil)
	return err
}

func (a alternate) pairs(ctx context.Context, pb *pairedBlock, top string, n int) error {
	for range n {
		if ctx.Err() != nil || a.s.outOfBudget() {
			return nil
		}
		if err := a.s.onePair(ctx, pb, top); err != nil {
			return err
		}
	}
	return nil
}

// cellOf is the block's cell of a topology, at Rep 0.
func (pb *pairedBlock) cellOf(top string) Cell {
	c := pb.standalone
	c.Topology, c.Schedule = top, pb.sched
	return c
}

// name is pool, or a topology's pair numbering, in the running group: a
// group with handler work keeps pools and numbers of its own.
func (pb *pairedBlock) name(pool string) string { return groupName(pb.sched, pool) }

func groupName(sc results.Schedule, pool string) string {
	if sc.Work == 0 {
		return pool
	}
	return pool + "@work=" + sc.Work.String()
}

// base is a pool's name without its group.
func base(pool string) string {
	b, _, _ := strings.Cut(pool, "@")
	return b
}

// pairsDone counts the complete pairs of every cell.
func pairsDone(p Plan, runs []results.Run) map[analysis.Key]int {
	n := map[analysis.Key]int{}
	for k, ps := range analysis.PairRatios(p.Plan, runs) {
		n[k] = len(ps)
	}
	return n
}

// paired is the -design paired design: each block's first pairs
// (Paired.Pairs of every topology and the A/A, less those recorded), then,
// on a budget, the pairs stopping.NextPairs chooses, then the cross-check. A
// block's servers, session and standalone's pool stay up from one step
// to the next while the steps stay in the block.
type paired struct {
	s *sweep
	// budget says stopping.NextPairs spends what the first pairs leave of it.
	budget bool
	// pairing runs each block's pairs: alternate, or duet.
	pairing pairing
	// first are the first pairs to run, a step a topology.
	first []step
	// pb is the block whose servers, session and pools run; nil for none.
	pb *pairedBlock
	// spent and checked say the budget's pairs and the cross-check were
	// planned.
	spent, checked bool
}

func (d *paired) announce() {
	s, p := d.s, d.s.plan
	done := pairsDone(p, s.runs)
	costs := s.clock.costs(stopping.PairedCosts(p.Plan))
	n, measured := 0, time.Duration(0)
	for _, b := range p.Blocks() {
		at := len(d.first)
		for _, c := range b.Cells {
			// Standalone's pairs are the A/A's.
			if c.Topology == p.Baseline() && !stopping.AABlock(p.Plan, b) {
				continue
			}
			left := max(p.Paired.Pairs-done[analysis.KeyOf(p.Plan, results.Run{Cell: c})], 0)
			if left == 0 {
				continue
			}
			n += left
			measured += stopping.PairsCost(p.Plan, costs, c.Topology, left)
			if c.Rep == 1 {
				d.first = append(d.first, step{Block: Block{Target: b.Target, GOMAXPROCS: b.GOMAXPROCS, Keepalive: b.Keepalive, Cells: []Cell{c}}, n: left})
			}
		}
		// A group's pairs together: a change of group closes the other's pools (openGroup).
		slices.SortStableFunc(d.first[at:], func(x, y step) int { return cmp.Compare(x.Cells[0].Work, y.Cells[0].Work) })
		if st, ok := s.latencyStep(b); ok {
			d.first = append(d.first, st)
		}
	}
	if d.budget {
		a := p.RepsAuto
		fmt.Fprintf(s.Progress, "%s, budget %s (%s left): %d pairs first (%s), windows of %s, then more pairs where the ratios to standalone are wider than ±%s, up to %d a topology; intervals at %.4g%%\n",
			p.Paired.Design(), progress.Round(a.Budget), progress.Round(max(s.budgetLeft(), 0)), n, p.DescribePaired(), p.WindowsLabel(), numfmt.Pct(a.Within), a.Max, 100*a.Level())
	} else {
		fmt.Fprintf(s.Progress, "%s: %d pairs to run (%s), windows of %s: about %s measured\n", p.Paired.Design(), n, p.DescribePaired(), p.WindowsLabel(), progress.Round(measured))
	}
}

func (d *paired) next() (step, bool) {
	s := d.s
	if len(d.first) > 0 {
		st := d.first[0]
		d.first = d.first[1:]
		return st, true
	}
	if d.budget && !d.spent {
		if st, ok := d.nextPairs(); ok {
			return st, true
		}
		d.spent = true
	}
	if !d.checked {
		// The cross-check, once the pairs are done: a round of its cells.
		d.checked = true
		cells := slices.DeleteFunc(s.plan.CheckCells(), func(c Cell) bool { return s.done[c.Key()] })
		if len(cells) > 0 {
			return step{Block: Block{Target: cells[0].Target, GOMAXPROCS: s.plan.Paired.Check.GOMAXPROCS, Cells: cells}}, true
		}
	}
	return step{}, false
}

// nextPairs is what a paired budget runs next (stopping.NextPairs), with the costs
// measured so far and the cross-check's time kept for it.
func (d *paired) nextPairs() (step, bool) {
	s := d.s
	cur := ""
	c := s.clock.costs(stopping.PairedCosts(s.plan.Plan))
	if d.pb != nil {
		cur = d.pb.b.Key()
	}
	left := s.budgetLeft()
	if !s.crossChecked(s.runs) {
		left -= stopping.CrossCheckTime(s.plan.Plan, c)
	}
	b, _, n, why := stopping.NextPairs(s.plan.Plan, s.runs, cur, left, c)
	if n == 0 {
		fmt.Fprintf(s.Progress, "budget: done after %s: %s\n", progress.Round(s.clock.spent()), why)
		return step{}, false
	}
	return step{Block: b, n: n, spare: true}, true
}

// run runs a step's pairs on its block's servers, session and pools,
// started unless they run already; a step of no pairs is the
// cross-check.
func (d *paired) run(ctx context.Context, st step) error {
	s := d.s
	if st.latency {
		return d.latency(ctx, st)
	}
	if st.n == 0 {
		return d.crossCheck(ctx, st)
	}
	if d.pb != nil && d.pb.b.Key() != st.Block.Key() {
		d.stop()
	}
	if d.pb == nil {
		b := st.Block
		b.Cells = s.blockOf(b).Cells
		pb, err := s.startPaired(ctx, b, s.runs, d.pairing)
		if pb == nil {
			return err
		}
		d.pb = pb
	}
	top := st.Cells[0].Topology
	d.pb.sched = st.Cells[0].Schedule
	if st.spare {
		name := top
		if top == d.pb.alone {
			name = "the A/A"
		}
		fmt.Fprintf(s.Progress, "budget: %s left; next %d pairs of %sGOMAXPROCS=%d %s\n", progress.Round(max(s.budgetLeft(), 0)), st.n, targetPrefix(st.Target), st.GOMAXPROCS, name)
	}
	return s.runPairs(ctx, d.pb, top, st.n)
}

// crossCheck runs the plan's cross-check: a start of the servers, then a
// warmup and a run of each of its cells, as a round runs them.
func (d *paired) crossCheck(ctx context.Context, st step) error {
	s := d.s
	d.stop()
	chk := s.plan.Paired.Check
	fmt.Fprintf(s.Progress, "cross-check: one %s run of %s each of %s at GOMAXPROCS=%d\n", chk.Load, progress.Round(chk.Duration), strings.Join(chk.Topologies, " and "), chk.GOMAXPROCS)
	srv, err := s.startBlock(ctx, st.Block, d.budget)
	if srv == nil {
		return err
	}
	defer s.stopBlock(srv)
	s.out.Total += len(st.Cells)
	return s.runCells(ctx, srv, st.Cells, s.clock.at(), nil)
}

func (d *paired) stop() {
	if d.pb != nil {
		d.s.stopBlock(d.pb.st)
		d.pb = nil
	}
}

// startPaired starts a block's servers and its load session, and opens
// standalone's pool; nil when ctx ended meanwhile.
func (s *sweep) startPaired(ctx context.Context, b Block, runs []results.Run, pr pairing) (*pairedBlock, error) {
	st, err := s.startBlock(ctx, b, s.budgeted())
	if st == nil {
		return nil, err
	}
	if st, err = pr.start(ctx, b, st); err != nil {
		if ctx.Err() != nil {
			// Cut while the standalone side started: both sides stopped.
			s.out.Interrupted = true
			return nil, nil
		}
		return nil, err
	}
	pb := &pairedBlock{b: b, st: st, pairing: pr, index: map[string]int{}, connect: map[string]time.Duration{}, open: map[string]bool{}, led: map[string]bool{}, warmed: map[string]bool{}}
	pb.standalone = b.Cells[0]
	pb.alone = s.plan.Baseline()
	pb.standalone.Topology, pb.standalone.Rep = pb.alone, 0
	pb.sched = pb.standalone.Schedule
	for _, r := range runs {
		if r.Pair == nil || r.TargetName() != b.Target || r.GOMAXPROCS != b.GOMAXPROCS {
			continue
		}
		w := groupName(r.Schedule, r.Pair.With)
		pb.index[w] = max(pb.index[w], r.Pair.Index)
		pb.seq = max(pb.seq, r.Pair.Seq)
		if r.Topology == pb.alone {
			pb.seq = max(pb.seq, r.Rep) // the A/A's twin windows number on
		}
	}
	fail := func(err error) (*pairedBlock, error) {
		s.stopBlock(st)
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil, nil
		}
		return nil, err
	}
	if pb.sess, err = s.session(ctx, b.Cells[0].LoadName(), true); err != nil {
		return fail(err)
	}
	if err := s.openPool(ctx, pb, pb.name(pb.alone), pb.alone); err != nil {
		return fail(err)
	}
	pb.open[pb.name(pb.alone)] = true
	return pb, nil
}

// twinPool is the load session's name of the A/A's second pool to
// standalone, which stands in a topology's place.
const twinPool = "standalone-twin"

// poolOf is the session's pool of the topology side of top's pairs:
// top's own, or the twin for the A/A (top standalone).
func (pb *pairedBlock) poolOf(top string) string {
	if top == pb.alone {
		return twinPool
	}
	return top
}

// url is where a topology's load goes.
func (s *sweep) url(c Cell) string {
	return loadgen.WithSchedule(withPath(target.LayoutFor(s.layout, c.Target).URL(s.res.Topology(c.Topology)), s.plan.Path), c.Schedule)
}

// openPool opens the session's pool named pool to top and warms it,
// unrecorded; the time it took is charged to the pool's next window
// (results.Run.Connect).
func (s *sweep) openPool(ctx context.Context, pb *pairedBlock, pool, top string) error {
	began := s.clock.at()
	c := pb.cellOf(top)
	if err := s.usePool(ctx, pb.st, top); err != nil {
		return err
	}
	netBefore := s.rig.ReadNet(pb.st)
	if err := pb.sess.Open(ctx, pool, c, s.urlOf(pb, pool, c)); err != nil {
		return fmt.Errorf("opening %s's pool: %w", pool, err)
	}
	if n := rig.NetRecord(netBefore, s.rig.ReadNet(pb.st), false, s.rig.Isolated()); n != nil && n.Accepted != nil {
		fmt.Fprintf(s.Progress, "%s's pool: the servers accepted %d connections in %s\n", pool, *n.Accepted, progress.Round(s.clock.since(began)))
	}
	if d := s.warmOf(pb, top); d > 0 {
		if err := pb.pairing.warm(ctx, pb, pool, d); err != nil {
			return fmt.Errorf("warming %s's pool: %w", pool, err)
		}
	}
	pb.warmed[top] = true
	pb.connect[pool] = s.clock.since(began)
	s.clock.warm.add(s.clock.since(began))
	pb.led[pb.name(top)] = false
	return nil
}

// warmOf is how long a pool of top just opened warms: the plan's warmup,
// and at least two of top's windows the first time in a block, when the
// servers behind it have served none of its connections yet (a backend
// taking 5000 of nginx's connections at once can stall for seconds).
func (s *sweep) warmOf(pb *pairedBlock, top string) time.Duration {
	if s.plan.Warmup <= 0 || pb.warmed[top] {
		return s.plan.Warmup
	}
	return max(s.plan.Warmup, 2*s.plan.WindowOf(top))
}

// leadOf is the lead of top's next run of windows with standalone: the
// plan's, and at least one of top's windows the first time after its
// pool opened, whose first window reads slow even after the warmup.
func (s *sweep) leadOf(pb *pairedBlock, top string) time.Duration {
	lead := max(s.plan.Paired.LeadOf(pb.alone), s.plan.Paired.LeadOf(top))
	if pb.led[pb.name(top)] {
		return lead
	}
	pb.led[pb.name(top)] = true
	return max(lead, s.plan.WindowOf(top))
}

// runPairs runs n pairs of top with standalone, opening top's pool
// unless it is open (closing another topology's before it: pb.open); top
// standalone is the A/A, on a second pool to standalone. A topology parity refused is recorded as failed windows.
func (s *sweep) runPairs(ctx context.Context, pb *pairedBlock, top string, n int) error {
	if n <= 0 {
		return nil
	}
	// A topology parity refused, or whose pool did not open, is one
	// failed record; the block goes on with the next.
	failed := func(msg string) error {
		run := results.Run{Cell: pb.cellOf(top), URL: s.url(pb.cellOf(top)), Start: s.clock.at().UTC(), Error: msg}
		pb.index[pb.name(top)]++
		run.Rep = pb.index[pb.name(top)]
		fmt.Fprintf(s.Progress, "%s%s FAILED: %s\n", targetPrefix(pb.b.Target), run.Cell, progress.Failure(msg))
		_, err := s.keep(run, nil, false)
		return err
	}
	if err := s.refused[top]; err != nil {
		return failed("parity check: " + err.Error())
	}
	if err := s.openGroup(ctx, pb); err != nil {
		return failed(err.Error())
	}
	if pool := pb.name(pb.poolOf(top)); !pb.open[pool] {
		// One topology's pool through nginx at a time: close the other's.
		for p := range pb.open {
			if base(p) != pb.alone && base(p) != twinPool {
				if err := pb.sess.Close(ctx, p); err != nil && ctx.Err() == nil {
					s.warn("%v", err)
				}
				delete(pb.open, p)
			}
		}
		if err := s.openPool(ctx, pb, pool, top); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return failed(err.Error())
		}
		pb.open[pool] = true
	}
	return pb.pairing.pairs(ctx, pb, top, n)
}

// openGroup opens standalone's pool of the running group unless it is
// open, closing the other groups' pools first: two groups' pools of
// standalone and its twin beside a topology's, at the duet's
// connections, pass the open-files limit.
func (s *sweep) openGroup(ctx context.Context, pb *pairedBlock) error {
	pool := pb.name(pb.alone)
	if pb.open[pool] {
		return nil
	}
	for p := range pb.open {
		if err := pb.sess.Close(ctx, p); err != nil && ctx.Err() == nil {
			s.warn("%v", err)
		}
		delete(pb.open, p)
	}
	if err := s.openPool(ctx, pb, pool, pb.alone); err != nil {
		return err
	}
	pb.open[pool] = true
	return nil
}

// onePair runs one pair: standalone's window and top's, in the order drawn
// for it, each recorded as it finishes.
func (s *sweep) onePair(ctx context.Context, pb *pairedBlock, top string) error {
	pb.index[pb.name(top)]++
	pb.seq++
	index, seq := pb.index[pb.name(top)], pb.seq
	first := topologyFirst(s.plan.Paired.Seed, pb.b.Target, pb.b.GOMAXPROCS, pb.name(top), index)
	// A topology's windows are numbered by its pairs; standalone's,
	// shared by every topology's pairs, by the block's, and so is the
	// A/A's twin, a standalone window too.
	type side struct {
		top, pool string
		rep       int
		twin      bool
	}
	order := []side{{pb.alone, pb.name(pb.alone), seq, false}, {top, pb.name(pb.poolOf(top)), index, top == pb.alone}}
	if order[1].twin {
		pb.seq++
		order[1].rep = pb.seq
		if _, ok := pb.st.(*rig.TwoSides); ok && index%2 == 0 {
			// Every other A/A pair gives standalone's role to the
			// topology side's server (rig.TwoSides).
			order[0].pool, order[1].pool = order[1].pool, order[0].pool
		}
	}
	if first {
		order[0], order[1] = order[1], order[0]
	}
	name := top
	if top == pb.alone {
		name = "A/A"
	}
	var rates [2]float64
	for pos, sd := range order {
		t := sd.top
		c := pb.cellOf(t)
		c.Rep = sd.rep
		fmt.Fprintf(s.Progress, "[pair %d %s, %d/2] %s%s  (elapsed %s%s) ", index, name, pos+1, targetPrefix(pb.b.Target), c, progress.Round(s.clock.spent()), s.leftNote())
		run := results.Run{
			Cell: c, URL: s.urlOf(pb, sd.pool, c), LoadCPUs: s.plan.PinLoad, ServerCPUs: s.plan.PinServer,
			Pair:    &results.Pair{With: top, Index: index, Seq: seq, First: pos == 0, Twin: sd.twin},
			Connect: pb.connect[sd.pool],
		}
		pb.connect[sd.pool] = 0
		began := s.clock.at()
		raw, _ := s.measureSpan(ctx, span{sides: []servers{pb.side(sd.pool)}, net: pb.st, call: func() ([]byte, error) {
			return pb.sess.Window(ctx, sd.pool, s.plan.WindowOf(top), &run)
		}}, [][]*results.Run{{&run}})
		s.clock.cell.add(s.clock.since(began) - s.plan.WindowOf(top))
		if ctx.Err() != nil && run.Error != "" {
			fmt.Fprintln(s.Progress, "interrupted")
			return nil
		}
		ok, err := s.keep(run, raw, false)
		switch {
		case err != nil:
			return err
		case ok:
			rates[pos] = run.Figures.ReqPerSec
			fmt.Fprintln(s.Progress, progress.RunLine(run)+drainNote(run)+progress.CPUNote(run))
		default:
			fmt.Fprintf(s.Progress, "FAILED: %s\n", progress.Failure(run.Error))
		}
		if err := pb.st.Alive(); err != nil {
			return fmt.Errorf("during %s: %w", c, err)
		}
	}
	if rates[0] > 0 && rates[1] > 0 {
		ratio := rates[1] / rates[0]
		if first {
			ratio = rates[0] / rates[1]
		}
		fmt.Fprintf(s.Progress, "  pair %d %s: %s of standalone%s\n", index, name, numfmt.Figure(ratio), s.ratioNote(pb.cellOf(top)))
	}
	return nil
}

// leftNote is the progress line's budget left, on a budget.
func (s *sweep) leftNote() string {
	if !s.budgeted() {
		return ""
	}
	return ", budget left " + progress.Round(max(s.budgetLeft(), 0)).String()
}

// drainNote is a session window's drain, which is not measured.
func drainNote(run results.Run) string {
	if run.Drain <= 0 {
		return ""
	}
	s := fmt.Sprintf("  drain %s", progress.Round(run.Drain))
	if run.Reconnects > 0 {
		s += fmt.Sprintf(" reconnects %d", run.Reconnects)
	}
	return s
}

// Paired budget: every topology's pilot, then stats.NextPairs gives each
// the pairs its pilot says it needs, two at a time, the widest first.

// crossChecked reports whether the cross-check has run.
func (s *sweep) crossChecked(runs []results.Run) bool {
	for _, c := range s.plan.CheckCells() {
		if !slices.ContainsFunc(runs, func(r results.Run) bool { return r.Key() == c.Key() && !r.Failed() }) {
			return false
		}
	}
	return true
}

// blockOf is the plan's block of b's target and processor value.
func (s *sweep) blockOf(b Block) Block {
	for _, pb := range s.plan.Blocks() {
		if pb.Key() == b.Key() {
			return pb
		}
	}
	return b
}

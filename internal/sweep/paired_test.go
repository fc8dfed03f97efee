package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/stopping"
)

// fakeClock is a clock the fake session moves on by each window's length
// and drain, and each pool's opening.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// keptGen is a load session that keeps its pools: it logs every command,
// answers each window at rate(top, window number), drains for drain
// after it, and moves the clock on.
type keptGen struct {
	mu sync.Mutex
	// failOpen fails the opening of these pools.
	failOpen map[string]error
	log      []string
	windows  map[string]int
	rate     func(top string, n int) float64
	drain    time.Duration
	opening  time.Duration
	clock    *fakeClock
	begins   []bool
	ends     int
}

func (g *keptGen) Begin(_ context.Context, keep bool) (loadgen.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.begins = append(g.begins, keep)
	return g, nil
}

func (g *keptGen) record(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.log = append(g.log, s)
}

func (g *keptGen) Open(_ context.Context, name string, c Cell, url string) error {
	g.record("open " + name)
	if err := g.failOpen[name]; err != nil {
		return err
	}
	if g.clock != nil {
		g.clock.add(g.opening)
	}
	return nil
}

func (g *keptGen) Window(ctx context.Context, name string, d time.Duration, run *results.Run) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.clock != nil {
		g.clock.add(d + g.drain)
	}
	if run == nil {
		g.record("warm " + name)
		return nil, nil
	}
	g.mu.Lock()
	if g.windows == nil {
		g.windows = map[string]int{}
	}
	g.windows[name]++
	n := g.windows[name]
	g.mu.Unlock()
	g.record("window " + name)
	rate := g.rate(strings.TrimSuffix(name, "-twin"), n) // the A/A's second pool is standalone's
	run.Figures = &results.Figures{Requests: int64(rate * d.Seconds()), ReqPerSec: rate, Latency: true, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}
	run.CPU = &results.CPU{Load: results.Usage{User: 0.01}}
	run.Drain = g.drain
	run.Command = []string{"fake", "window", name}
	return []byte("{}"), nil
}

func (g *keptGen) Close(_ context.Context, name string) error {
	g.record("close " + name)
	return nil
}

func (g *keptGen) Keeps() bool { return true }

func (g *keptGen) End() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ends++
	g.log = append(g.log, "end")
	return nil
}

// pairedPlan is a paired plan over fakes: two topologies beside
// standalone, two processor values, 3 pairs each, windows of 2 s.
func pairedPlan() Plan {
	p := smallPlan("standalone", "nginx-http", "nginx-fcgi-tcp")
	p.Reps, p.Duration, p.Warmup = 1, 2*time.Second, time.Second
	p.Paired = &results.Paired{Pairs: 3, Seed: 42}
	return p
}

// steadyRate: standalone 1,000 req/s, nginx-http 400, nginx-fcgi-tcp 150.
func steadyRate(top string, n int) float64 {
	return map[string]float64{"standalone": 1000, "nginx-http": 400, "nginx-fcgi-tcp": 150}[top]
}

// TestTopologyFirst: each pair's order is a draw of its own, the same for
// the same pair and seed, and about half the pairs put the topology first.
func TestTopologyFirst(t *testing.T) {
	var a, b, other []bool
	first := 0
	for i := 1; i <= 400; i++ {
		a = append(a, topologyFirst(7, "go", 1, "nginx-http", i))
		b = append(b, topologyFirst(7, "go", 1, "nginx-http", i))
		other = append(other, topologyFirst(8, "go", 1, "nginx-http", i))
		if a[i-1] {
			first++
		}
	}
	assert.Equal(t, a, b, "the same seed draws the same orders (a resumed sweep)")
	assert.NotEqual(t, a, other, "another seed, other orders")
	assert.InDelta(t, 200, first, 40, "about half the pairs put the topology first")
	assert.NotEqual(t, topologyFirst(7, "go", 1, "nginx-http", 1) == topologyFirst(7, "go", 1, "nginx-fcgi-tcp", 1) &&
		topologyFirst(7, "go", 1, "nginx-http", 2) == topologyFirst(7, "go", 1, "nginx-fcgi-tcp", 2) &&
		topologyFirst(7, "go", 1, "nginx-http", 3) == topologyFirst(7, "go", 1, "nginx-fcgi-tcp", 3) &&
		topologyFirst(7, "go", 1, "nginx-http", 4) == topologyFirst(7, "go", 1, "nginx-fcgi-tcp", 4), true,
		"each topology's pairs draw their own orders")
}

// TestPairedSweep: each block starts its servers once, begins one session
// that keeps its pools, opens standalone's pool once and each other
// topology's once, in turn, and runs its pairs: two windows each, in the
// order drawn for the pair, each recorded with its pair. The ratios come
// pair by pair.
func TestPairedSweep(t *testing.T) {
	p := pairedPlan()
	f := newFakeSweep(t, p)
	gen := &keptGen{rate: steadyRate, drain: 300 * time.Millisecond}
	f.generators[results.LoadWrk] = gen
	require.NoError(t, f.measure(context.Background()))

	require.Len(t, f.starts, 2, "one start per GOMAXPROCS value")
	assert.Equal(t, []bool{true, true}, gen.begins, "one session a block, keeping its pools")
	assert.Equal(t, 2, gen.ends, "each session ended with its block")
	// The first block's A/A: standalone against a second pool of its own.
	block := []string{"open standalone", "warm standalone", "open standalone-twin", "warm standalone-twin"}
	assert.Equal(t, block, gen.log[:4])
	assert.Equal(t, 2, strings.Count(strings.Join(gen.log, "\n"), "open standalone\n"), "standalone's pool opened once a block")
	assert.Equal(t, 1, strings.Count(strings.Join(gen.log, "\n"), "open standalone-twin\n"), "one A/A a sweep")
	assert.Equal(t, 2, strings.Count(strings.Join(gen.log, "\n"), "open nginx-http\n"))

	runs := f.runs(t)
	require.Len(t, runs, 2*2*3*2+3*2, "2 blocks x 2 topologies x 3 pairs x 2 windows, and the A/A's")
	assert.Equal(t, 30, f.out.Measured)
	seen := map[string]bool{}
	for _, r := range runs {
		require.NotNil(t, r.Pair, r.Name())
		assert.False(t, seen[r.Key()], "one record a window: %s", r.Key())
		seen[r.Key()] = true
		top := r.Pair.Twin || (r.Topology == r.Pair.With && r.Topology != "standalone")
		assert.Equal(t, topologyFirst(42, r.TargetName(), r.GOMAXPROCS, r.Pair.With, r.Pair.Index) == top, r.Pair.First,
			"%s: the order drawn for pair %d", r.Name(), r.Pair.Index)
		assert.Equal(t, 300*time.Millisecond, r.Drain)
	}
	// The windows of a pair follow each other, in the recorded order.
	pairs := analysis.PairRatios(p.Plan, runs)
	require.Len(t, pairs, 5)
	for k, ps := range pairs {
		require.Len(t, ps, 3, k.String())
		for i, pr := range ps {
			assert.Equal(t, i+1, pr.Index)
			assert.InDelta(t, steadyRate(k.Topology, 0)/1000, pr.Ratio, 1e-12)
		}
	}
	env, _, err := results.Load(f.Dir)
	require.NoError(t, err)
	sum := analysis.Summarize(results.Env{Plan: p.Plan, Start: env.Start}, runs)
	c, ok := sum.Cell(analysis.KeyOf(p.Plan, results.Run{Cell: Cell{Topology: "nginx-http", GOMAXPROCS: 1, Connections: 100}}))
	require.True(t, ok)
	require.NotNil(t, c.RatioToStandalone)
	assert.InDelta(t, 0.4, c.RatioToStandalone.Center, 1e-9)
	assert.Equal(t, 3, c.RatioToStandalone.N, "three pairs")
	assert.NotEmpty(t, c.RatioToStandalone.Method, "the report says which interval")
	out := f.progress.String()
	assert.Contains(t, out, "pair 3 nginx-fcgi-tcp: 0.150 of standalone; vs standalone 0.150 ± 0% (n 3)")
	assert.Contains(t, out, "pair 3 A/A: 1.000 of standalone")
	st, ok := sum.Cell(analysis.KeyOf(p.Plan, results.Run{Cell: Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100}}))
	require.True(t, ok)
	require.NotNil(t, st.AA, "the A/A ratio")
	assert.InDelta(t, 1, st.AA.Center, 1e-9)
	assert.Equal(t, 3, st.AA.N)
	assert.Contains(t, out, "drain 300ms")
}

// TestPairedResume: a sweep stopped between a pair's two windows resumes
// with the next pair; the lone window gives no ratio, and each topology
// ends with its pairs complete.
func TestPairedResume(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	f := newFakeSweep(t, p)
	ctx, cancel := context.WithCancel(context.Background())
	windows := 0
	gen := &keptGen{rate: func(top string, n int) float64 {
		if windows++; windows == 3 {
			cancel() // after the first window of pair 2
		}
		return steadyRate(top, n)
	}}
	f.generators[results.LoadWrk] = gen
	require.NoError(t, f.measure(ctx))
	assert.True(t, f.out.Interrupted)
	assert.Len(t, f.runs(t), 3, "what finished is kept")
	aa := analysis.KeyOf(p.Plan, results.Run{Cell: Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100}})
	assert.Len(t, analysis.PairRatios(p.Plan, f.runs(t))[aa], 1, "the A/A's first pair")

	g := newFakeSweep(t, p)
	g.Dir = f.Dir
	g.resumeFrom(g.runs(t))
	g.generators[results.LoadWrk] = &keptGen{rate: steadyRate}
	require.NoError(t, g.measure(context.Background()))
	pairs := analysis.PairRatios(p.Plan, g.runs(t))
	for k, ps := range pairs {
		assert.Len(t, ps, 3, k.String())
	}
	var idx []int
	for _, pr := range pairs[aa] {
		idx = append(idx, pr.Index)
	}
	assert.Equal(t, []int{1, 3, 4}, idx, "the lone window's pair 2 is not reused")
}

// TestDrainNotMeasured: a window's drain is in its wall time but neither in
// its figures nor in the measured time; the time line names it, and each
// pool's opening, apart.
func TestDrainNotMeasured(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	clock := &fakeClock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	f := newFakeSweep(t, p)
	f.clock = budgetClock{began: clock.now(), now: clock.now}
	gen := &keptGen{rate: steadyRate, drain: 500 * time.Millisecond, opening: 2 * time.Second, clock: clock}
	f.generators[results.LoadWrk] = gen
	require.NoError(t, f.measure(context.Background()))
	runs := f.runs(t)
	require.Len(t, runs, 18, "3 pairs of 2 topologies and the A/A")
	for _, r := range runs {
		assert.Equal(t, 2500*time.Millisecond, r.Wall, "window and drain")
		assert.Equal(t, int64(2*steadyRate(r.Topology, 0)), r.Figures.Requests, "the window's answers only")
	}
	env := results.Env{Plan: p.Plan, Start: clock.t.Add(-f.clock.spent()), Spent: f.clock.spent()}
	ts, ok := analysis.Spent(env, runs)
	require.True(t, ok)
	assert.Equal(t, 18*2*time.Second, ts.Measured)
	assert.Equal(t, 18*500*time.Millisecond, ts.Drain)
	// Each topology's first pool in the block warms for two of its 2 s
	// windows; the A/A's twin, standalone's second, for the 1 s warmup.
	first, twin := 2*time.Second+4*time.Second+500*time.Millisecond, 2*time.Second+time.Second+500*time.Millisecond
	assert.Equal(t, 3*first+twin, ts.Connect, "4 pools (the A/A's twin one of them): dialing, a warmup and its drain")
	assert.Zero(t, ts.Exit)

	// A cross-check's run is its own part of the time line.
	chk := p
	chk.Paired = &results.Paired{Pairs: 3, Check: &results.Check{Load: results.LoadBuiltin, Topologies: plan.CrossCheckTopologies(), GOMAXPROCS: 1, Duration: 15 * time.Second}}
	env.Plan = chk.Plan
	env.Spent += 40 * time.Second
	checked := append(runs, results.Run{Cell: Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Rep: 1},
		Start: clock.t, Wall: 16 * time.Second, Warmup: 2 * time.Second, Figures: &results.Figures{Requests: 1}})
	ts2, ok := analysis.Spent(env, checked)
	require.True(t, ok)
	assert.Equal(t, 18*time.Second, ts2.Check)
	assert.Equal(t, ts.Measured, ts2.Measured, "the pairs' measured time alone")
}

// TestPairedBudget: on a fake clock, the budget's first pairs run, then
// pairs go to the wide ratio until it is within the precision or the
// budget is spent; the sweep ends within its budget.
func TestPairedBudget(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	clock := &fakeClock{t: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}
	fit, err := stopping.FitPaired(p.Plan, stopping.BudgetOptions{Budget: 3 * time.Minute, Precision: 0.05})
	require.NoError(t, err)
	pp := Plan{Plan: fit}
	require.NotNil(t, pp.RepsAuto)
	assert.Equal(t, 0.95, pp.RepsAuto.Confidence, "the level the report states; the design takes t at its own per-look level")
	f := newFakeSweep(t, pp)
	f.clock = budgetClock{began: clock.now(), now: clock.now}
	gen := &keptGen{clock: clock, drain: 200 * time.Millisecond, opening: 2 * time.Second, rate: func(top string, n int) float64 {
		// nginx-http strays ±20% window to window; the others hold still.
		if top == "nginx-http" {
			return 400 * (1 + 0.2*math.Sin(float64(n)*2.1))
		}
		return steadyRate(top, n)
	}}
	f.generators[results.LoadWrk] = gen
	require.NoError(t, f.measure(context.Background()))
	assert.LessOrEqual(t, f.clock.spent(), pp.RepsAuto.Budget+pp.RepsAuto.Budget/10, "within the budget and its overrun")
	done := pairsDone(pp, f.runs(t))
	http := done[analysis.KeyOf(pp.Plan, results.Run{Cell: Cell{Topology: "nginx-http", GOMAXPROCS: 1, Connections: 100}})]
	fcgi := done[analysis.KeyOf(pp.Plan, results.Run{Cell: Cell{Topology: "nginx-fcgi-tcp", GOMAXPROCS: 1, Connections: 100}})]
	assert.Equal(t, pp.Paired.Pairs, fcgi, "the steady ratio gets its first pairs only")
	assert.Greater(t, http, pp.Paired.Pairs, "the wide ratio gets the rest")
	out := f.progress.String()
	assert.Contains(t, out, "budget: done after")
	assert.Contains(t, out, fmt.Sprintf("next %d pairs of GOMAXPROCS=1 nginx-http", stats.StepPairs), "a step at a time past the pilot")
	log := strings.Join(gen.log, "\n") + "\n"
	assert.Equal(t, 1, strings.Count(log, "open standalone\n"), "the budget's pairs on the pilots' servers and session: %s", log)
	assert.Equal(t, 2, strings.Count(log, "open nginx-http\n"), "for its pilot, then once for all its later steps: %s", log)
	assert.Equal(t, 1, strings.Count(log, "close nginx-http\n"), "closed when nginx-fcgi-tcp's opened")
	assert.Equal(t, 6, pp.Paired.Pairs)
}

// TestPairedPoolFails: a topology whose pool does not open, or that
// parity refused, is one failed record; the block goes on with the next
// topology, and the sweep reports the failure.
func TestPairedPoolFails(t *testing.T) {
	p := smallPlan("standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix")
	p.GOMAXPROCS, p.Reps, p.Duration = []int{1}, 1, 2*time.Second
	p.Paired = &results.Paired{Pairs: 2, Seed: 1}
	f := newFakeSweep(t, p)
	f.refused = map[string]error{"nginx-fcgi-unix": errors.New("body differs")}
	gen := &keptGen{rate: steadyRate, failOpen: map[string]error{"nginx-http": errors.New("dialing: connection refused")}}
	f.generators[results.LoadWrk] = gen
	require.NoError(t, f.measure(context.Background()))
	runs := f.runs(t)
	var failed []string
	for _, r := range runs {
		if r.Failed() {
			failed = append(failed, r.Topology+": "+r.Error)
		}
	}
	assert.ElementsMatch(t, []string{"nginx-http: opening nginx-http's pool: dialing: connection refused", "nginx-fcgi-unix: parity check: body differs"}, failed)
	assert.Equal(t, 2, f.out.Failed)
	assert.Equal(t, 8, f.out.Measured, "nginx-fcgi-tcp's 2 pairs and the A/A's")
	assert.Contains(t, f.progress.String(), "nginx-http rep 1 FAILED: opening nginx-http's pool")
}

// TestPairedOwnProcess: with standalone in a process of its own, each
// block starts the topology side and a standalone side serving
// standalone alone; standalone's windows load the standalone side, a
// topology's the topology side, and the A/A's roles swap from one pair
// to the next.
func TestPairedOwnProcess(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	p.Topologies = []string{"standalone", "nginx-http"}
	p.Paired.Pairs, p.Paired.Own = 4, true
	f := newFakeSweep(t, p)
	f.generators[results.LoadWrk] = &keptGen{rate: steadyRate}
	require.NoError(t, f.measure(context.Background()))

	require.Len(t, f.starts, 2, "the topology side's servers and the standalone side's")
	top, sa := f.starts[0], f.starts[1]
	require.Len(t, sa.Topologies, 1)
	assert.Equal(t, analysis.Standalone, sa.Topologies[0].Name)
	assert.NotEqual(t, top.Layout.HTTP, sa.Layout.HTTP, "standalone's own server listens apart")
	own := "http://" + sa.Layout.HTTP + "/"
	shared := "http://" + top.Layout.HTTP + "/"
	assert.Contains(t, f.progress.String(), "a process of its own")

	runs := f.runs(t)
	require.Len(t, runs, 16, "4 pairs of the A/A and of nginx-http")
	for _, r := range runs {
		if r.Topology != analysis.Standalone {
			continue
		}
		// Standalone's role is played by its own server, but in every
		// other A/A pair by the topology side's.
		want := own
		if r.Pair.With == analysis.Standalone && (r.Pair.Index%2 == 0) != r.Pair.Twin {
			want = shared
		}
		assert.Equal(t, want, r.URL, "%s: pair %d of %s, twin %v", r.Name(), r.Pair.Index, r.Pair.With, r.Pair.Twin)
	}
}

// TestPairedOwnStartInterrupted: Ctrl-C while the standalone side starts
// ends the sweep as interrupted, not failed, with the topology side
// stopped.
func TestPairedOwnStartInterrupted(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	p.Paired.Own = true
	f := newFakeSweep(t, p)
	f.generators[results.LoadWrk] = &keptGen{rate: steadyRate}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := f.rig.Start
	f.rig.Start = func(ctx context.Context, cfg stack.Config) (servers, error) {
		if len(f.starts) == 1 {
			cancel() // the standalone side's start is cut
			return nil, ctx.Err()
		}
		return start(ctx, cfg)
	}
	require.NoError(t, f.measure(ctx))
	assert.True(t, f.out.Interrupted)
	require.Len(t, f.started, 1)
	assert.Equal(t, 1, f.started[0].stopped, "the topology side stopped")
	assert.Empty(t, f.runs(t))
}

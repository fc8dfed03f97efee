package sweep

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// rateGen is a load generator whose closed-loop rate is set per topology
// and handler work; in open loop it answers at the rate it is sent, as
// the engine does, and it records every cell as it was sent.
type rateGen struct {
	mu   sync.Mutex
	rate func(c Cell) float64
	fail func(c Cell) bool
	sent []Cell
	urls []string
}

func (g *rateGen) Warm(ctx context.Context, c Cell, url string, d time.Duration) error {
	return nil
}

func (g *rateGen) Measure(ctx context.Context, c Cell, d time.Duration, run *results.Run) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sent, g.urls = append(g.sent, c), append(g.urls, run.URL)
	if g.fail != nil && g.fail(c) {
		return nil, errors.New("engine: connection refused")
	}
	f := &results.Figures{Requests: 1000, Latency: true, Histogram: true, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}
	if c.Rate > 0 {
		f.TargetRate, f.ReqPerSec = c.Rate, c.Rate
	} else {
		f.ReqPerSec = g.rate(c)
	}
	run.Figures = f
	return []byte("{}"), nil
}

// costPlan is the cost scenario cut down: two paths, one processor value,
// two works, two rounds.
func costPlan() Plan {
	p := smallPlan("standalone", "nginx-http")
	p.GOMAXPROCS = []int{1}
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Schedules = plan.CostSchedules([]time.Duration{0, 200 * time.Microsecond})
	return p
}

// closedRate: standalone 1,000 req/s, nginx-http 600, both a quarter of
// that with 200 µs of work; the second round 10% faster.
func closedRate(c Cell) float64 {
	r := map[string]float64{"standalone": 1000, "nginx-http": 600}[c.Topology]
	if c.Work > 0 {
		r /= 4
	}
	if c.Rep == 2 {
		r *= 1.1
	}
	return r
}

// TestFractionCells: a cell at a fraction of capacity runs after the
// closed-loop cells of its block, is sent at that fraction of the least
// median capacity at its work (the same rate for every path), and is
// recorded as the fraction it was planned as.
func TestFractionCells(t *testing.T) {
	f := newFakeSweep(t, costPlan())
	gen := &rateGen{rate: closedRate}
	f.generators[results.LoadBuiltin] = loadgen.PerRun(gen)
	require.NoError(t, f.measure(context.Background()))
	assert.Zero(t, f.out.Failed)

	require.Len(t, gen.sent, 16, "2 paths x 2 works x (closed, open) x 2 rounds")
	for i, c := range gen.sent {
		assert.Equal(t, i >= 8, c.Fraction > 0, "closed first: %d %s", i, c.Key())
	}
	// nginx-http's median over the rounds is 630, with work 157.5: half.
	for i, c := range gen.sent[8:] {
		want := 315.0
		if c.Work > 0 {
			want = 79 // round(78.75)
		}
		assert.Equal(t, want, c.Rate, "%s sent at", c.Key())
		assert.Equal(t, 0.5, c.Fraction)
		if c.Work > 0 {
			assert.Contains(t, gen.urls[8+i], "?work=200us")
		} else {
			assert.NotContains(t, gen.urls[8+i], "?")
		}
	}

	var open []results.Run
	for _, r := range f.runs(t) {
		if r.Fraction > 0 {
			open = append(open, r)
		}
	}
	require.Len(t, open, 8)
	for _, r := range open {
		assert.Zero(t, r.Rate, "%s: the record keeps the cell as planned", r.Key())
		assert.Equal(t, 0.5, r.Fraction)
		assert.True(t, r.OpenLoop())
		assert.Contains(t, r.Key(), "0.5", "the fraction names the file")
		want := 315.0
		if r.Work > 0 {
			want = 79
		}
		assert.Equal(t, want, r.Figures.TargetRate, "%s: the rate it was sent at", r.Key())
	}

	t.Run("resumed, the open cells are not measured again", func(t *testing.T) {
		f2 := newFakeSweep(t, costPlan())
		f2.Dir, f2.layout = f.Dir, f.layout
		gen2 := &rateGen{rate: closedRate}
		f2.generators[results.LoadBuiltin] = loadgen.PerRun(gen2)
		f2.resumeFrom(f.runs(t))
		require.NoError(t, f2.measure(context.Background()))
		assert.Empty(t, gen2.sent)
	})
}

// TestFractionWithoutCapacity: when every closed-loop run of a work
// failed, its open-loop cells fail with the reason and are not sent; the
// other work's are.
func TestFractionWithoutCapacity(t *testing.T) {
	f := newFakeSweep(t, costPlan())
	gen := &rateGen{rate: closedRate, fail: func(c Cell) bool { return c.Work > 0 && c.Rate == 0 }}
	f.generators[results.LoadBuiltin] = loadgen.PerRun(gen)
	require.NoError(t, f.measure(context.Background()))

	for _, c := range gen.sent {
		assert.False(t, c.Fraction > 0 && c.Work > 0, "%s sent without a capacity", c.Key())
	}
	var failed []string
	for _, r := range f.runs(t) {
		if !r.Failed() {
			continue
		}
		failed = append(failed, r.Key())
		if r.Fraction > 0 {
			assert.Equal(t, "open loop at 0.5 of capacity: no closed-loop run at GOMAXPROCS=1, work 200µs measured the capacity", r.Error)
		} else {
			assert.Equal(t, "engine: connection refused", r.Error)
		}
	}
	assert.Len(t, failed, 8, "4 closed runs with work and the 4 open ones after them")
	assert.Equal(t, 8, f.out.Failed)
}

// TestFractionRateIgnores: open-loop runs, probes, failed runs and other
// targets do not measure a capacity; a median is taken per path.
func TestFractionRateIgnores(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}}}))
	s := &sweep{Options: Options{Dir: dir}}
	rep := 0
	write := func(c results.Cell, rate float64, failed bool) {
		rep++
		c.Rep = rep
		run := results.Run{Cell: c, Figures: &results.Figures{ReqPerSec: rate, Requests: int64(rate)}}
		if failed {
			run.Figures, run.Error = nil, "refused"
		}
		require.NoError(t, s.record(run, nil))
	}
	cell := func(top string, sc results.Schedule) results.Cell {
		return results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: sc}
	}
	half := cell("standalone", results.Schedule{Fraction: 0.5})

	_, err := s.fractionRate(half)
	assert.ErrorContains(t, err, "no closed-loop run at GOMAXPROCS=1, work 0s measured the capacity", "nothing measured yet")

	write(cell("standalone", results.Schedule{Rate: 50}), 50, false)                       // open loop
	write(cell("standalone", results.Schedule{Probe: true, Wait: time.Second}), 20, false) // a probe
	write(cell("nginx-http", results.Schedule{}), 0, true)                                 // failed
	w := cell("nginx-http", results.Schedule{})
	w.Target = "erlang"
	write(w, 1, false) // another target
	_, err = s.fractionRate(half)
	assert.ErrorContains(t, err, "measured the capacity", "none of those is a capacity")

	for _, r := range []float64{900, 1000, 5000} {
		write(cell("standalone", results.Schedule{}), r, false)
	}
	rate, err := s.fractionRate(half)
	require.NoError(t, err)
	assert.Equal(t, 500.0, rate, "half the median 1,000, not of the mean or the open-loop 50")

	quarter := half
	quarter.Fraction = 0.25
	write(cell("nginx-http", results.Schedule{}), 799, false)
	rate, err = s.fractionRate(quarter)
	require.NoError(t, err)
	assert.Equal(t, 200.0, rate, "a quarter of the slower path's 799, rounded")
}

// TestCostScenario: the preset's plan, and the schedules it is made of.
func TestCostScenario(t *testing.T) {
	p, err := plan.Scenario("cost", 1, 4)
	require.NoError(t, err)
	require.NoError(t, p.Validate(plan.Where{}))
	assert.Equal(t, []string{"standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-fcgi-fast-unix"}, p.Topologies)
	assert.Equal(t, []int{1, 4}, p.GOMAXPROCS)
	assert.Equal(t, []results.Generator{results.LoadBuiltin}, p.Loads, "open loop needs the engine")
	assert.Equal(t, []int{100}, p.Connections)
	assert.Equal(t, 6, p.Reps)
	us := time.Microsecond
	assert.Equal(t, []results.Schedule{
		{}, {Fraction: 0.5},
		{Work: 50 * us}, {Work: 50 * us, Fraction: 0.5},
		{Work: 200 * us}, {Work: 200 * us, Fraction: 0.5},
		{Work: time.Millisecond}, {Work: time.Millisecond, Fraction: 0.5},
	}, p.Schedules)

	one, err := plan.Scenario("cost", 1, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, one.GOMAXPROCS)

	// Every cell of a block's closed loop runs before any at a fraction.
	for _, b := range p.Blocks() {
		seenOpen := false
		for _, c := range b.Cells {
			if c.Fraction > 0 {
				seenOpen = true
				continue
			}
			require.False(t, seenOpen, "block GOMAXPROCS=%d: %s after an open-loop cell", b.GOMAXPROCS, c.Key())
		}
	}
	assert.Len(t, p.Cells(), 5*2*6*8)

	assert.Empty(t, plan.CostSchedules(nil))
	assert.Equal(t, []results.Schedule{{Work: us}, {Work: us, Fraction: 0.5}}, plan.CostSchedules([]time.Duration{us}))
}

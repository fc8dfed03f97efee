package sweep

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// latencyGen is a kept session that also runs per-run sessions, as the
// built-in engine does: it records every open-loop pool's cell as sent
// (its rate resolved) and answers each of its windows at that rate.
type latencyGen struct {
	*keptGen
	// sent are the open-loop cells in the order their pools opened.
	sent []Cell
	// windows are the open-loop windows' lengths, in order.
	windows []time.Duration
	// cancelAt cancels the sweep after that many open-loop windows.
	cancelAt int
	cancel   context.CancelFunc
	open     map[string]Cell
}

func (g *latencyGen) Begin(ctx context.Context, keep bool) (loadgen.Session, error) {
	if _, err := g.keptGen.Begin(ctx, keep); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *latencyGen) Open(ctx context.Context, name string, c Cell, url string) error {
	if !c.OpenLoop() {
		return g.keptGen.Open(ctx, name, c, url)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open == nil {
		g.open = map[string]Cell{}
	}
	g.open[name] = c
	g.sent = append(g.sent, c)
	g.log = append(g.log, "latency "+c.Topology)
	return nil
}

func (g *latencyGen) Window(ctx context.Context, name string, d time.Duration, run *results.Run) ([]byte, error) {
	g.mu.Lock()
	c, ok := g.open[name]
	g.mu.Unlock()
	if !ok {
		return g.keptGen.Window(ctx, name, d, run)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if run == nil {
		return nil, fmt.Errorf("a warmup of latency run %s", name)
	}
	g.mu.Lock()
	g.windows = append(g.windows, d)
	if len(g.windows) == g.cancelAt {
		g.cancel()
	}
	g.mu.Unlock()
	run.Figures = &results.Figures{Requests: int64(c.Rate * d.Seconds()), Sent: int64(c.Rate * d.Seconds()), ReqPerSec: c.Rate, TargetRate: c.Rate,
		Latency: true, Histogram: true, P50: time.Millisecond, P99: 2 * time.Millisecond, Max: 3 * time.Millisecond}
	run.CPU = &results.CPU{Load: results.Usage{User: 0.01}}
	run.Command = []string{"fake", "latency", name}
	return []byte("{}"), nil
}

func (g *latencyGen) Close(ctx context.Context, name string) error {
	g.mu.Lock()
	_, ok := g.open[name]
	delete(g.open, name)
	g.mu.Unlock()
	if ok {
		return nil
	}
	return g.keptGen.Close(ctx, name)
}

// latencyRate: steadyRate, and the ceiling nginx-return far above it.
func latencyRate(top string, n int) float64 {
	if top == "nginx-return" {
		return 5000
	}
	return steadyRate(top, n)
}

// latencySweepPlan is a paired plan on the built-in engine with a ceiling
// and the latency phase of -latency-rate rate, its runs 1 s.
func latencySweepPlan(t *testing.T, rate string) Plan {
	p := pairedPlan()
	p.Topologies = []string{"standalone", "nginx-http", "nginx-return", "nginx-fcgi-tcp"}
	p.Loads = []results.Generator{results.LoadBuiltin}
	l, err := plan.ParseLatencyRate(rate)
	require.NoError(t, err)
	if l != nil {
		l.Duration = time.Second
	}
	p.Paired.Latency = l
	return p
}

// newLatencySweep is a fake sweep of p whose load is g.
func newLatencySweep(t *testing.T, p Plan, g *latencyGen) *fakeSweep {
	f := newFakeSweep(t, p)
	f.generators[results.LoadBuiltin] = g
	f.generators[results.LoadWrk] = g
	return f
}

// phases is the log as the kinds of its windows in order, each with its
// count: "pairs 24", "latency 12", ...
func phases(log []string) []string {
	var out []string
	last, n := "", 0
	for _, l := range log {
		kind := ""
		switch {
		case strings.HasPrefix(l, "window "):
			kind = "pairs"
		case strings.HasPrefix(l, "latency "):
			kind = "latency"
		default:
			continue
		}
		if kind != last && n > 0 {
			out = append(out, fmt.Sprintf("%s %d", last, n))
			n = 0
		}
		last = kind
		n++
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%s %d", last, n))
	}
	return out
}

// latencyCells are the plan's latency cells of every block, in order.
func latencyCells(p Plan) []Cell {
	var cells []Cell
	for _, b := range p.Blocks() {
		cells = append(cells, p.LatencyCells(b)...)
	}
	return cells
}

// keysOf are the cells' record keys.
func keysOf(cells []Cell) []string {
	var keys []string
	for _, c := range cells {
		keys = append(keys, c.Key())
	}
	return keys
}

// TestLatencyPhase: after the first block's first pairs, on the same
// servers, standalone and each path with Go behind it run alone, open
// loop at the phase's rate, in plan.LatencyCells' order, each recorded
// with the phase's schedule; the ceiling is paired but not run alone, and
// the second GOMAXPROCS's block runs no phase.
func TestLatencyPhase(t *testing.T) {
	for _, tt := range []struct {
		flag     string
		schedule results.Schedule
		rate     float64
		line     string
	}{
		// Half the slowest path's median req/s in the pairs (nginx-fcgi-tcp's 150).
		{"auto", results.Schedule{Fraction: 0.5}, 75, "latency: 9 runs of 1s alone at 75 req/s (0.5 of the slowest path's req/s in the pairs"},
		{"800", results.Schedule{Rate: 800}, 800, "latency: 9 runs of 1s alone at 800 req/s, 100 connections, open loop (-latency-rate 800)"},
	} {
		t.Run(tt.flag, func(t *testing.T) {
			p := latencySweepPlan(t, tt.flag)
			g := &latencyGen{keptGen: &keptGen{rate: latencyRate}}
			f := newLatencySweep(t, p, g)
			require.NoError(t, f.measure(context.Background()))

			assert.Equal(t, []string{"pairs 24", "latency 9", "pairs 18"}, phases(g.log),
				"each block's pairs (the first with the A/A), the first block's then its latency runs")
			assert.Len(t, f.starts, 2, "the latency runs use the pairs' servers")
			assert.Contains(t, g.begins, false, "the latency runs take a per-run session")
			want := latencyCells(p)
			require.Len(t, want, 3*3, "the first block: 3 rounds x standalone and 2 paths")
			assert.Equal(t, keysOf(want), keysOf(g.sent), "sent in LatencyCells' order")
			for _, c := range g.sent {
				assert.NotEqual(t, "nginx-return", c.Topology, "no ceiling alone")
				assert.Equal(t, tt.rate, c.Rate, "%s: sent at the phase's rate", c.Key())
				assert.Equal(t, 100, c.Connections)
			}
			for _, d := range g.windows {
				assert.Equal(t, time.Second, d, "the phase's runs, not the pairs' windows")
			}
			var got []string
			for _, r := range f.runs(t) {
				if !p.LatencyRun(r.Cell) {
					continue
				}
				got = append(got, r.Key())
				assert.Equal(t, tt.schedule, r.Schedule, r.Key())
				assert.Nil(t, r.Pair, "%s: a run alone, no pair", r.Key())
				assert.False(t, r.Failed(), r.Key())
				require.NotNil(t, r.Figures)
				assert.Equal(t, tt.rate, r.Figures.TargetRate)
			}
			assert.ElementsMatch(t, keysOf(want), got, "every latency run recorded once")
			assert.Contains(t, f.progress.String(), tt.line)
		})
	}
}

// TestLatencyResume: a sweep interrupted in a block's latency phase
// resumes with the latency runs not recorded, on a start of their own
// servers, and reruns none that are.
func TestLatencyResume(t *testing.T) {
	p := latencySweepPlan(t, "auto")
	p.GOMAXPROCS = []int{1}
	ctx, cancel := context.WithCancel(context.Background())
	g := &latencyGen{keptGen: &keptGen{rate: latencyRate}, cancelAt: 5, cancel: cancel}
	f := newLatencySweep(t, p, g)
	require.NoError(t, f.measure(ctx))
	assert.True(t, f.out.Interrupted)
	want := latencyCells(p)
	require.Len(t, want, 9)
	var before []string
	for _, r := range f.runs(t) {
		if p.LatencyRun(r.Cell) {
			before = append(before, r.Key())
		}
	}
	require.ElementsMatch(t, keysOf(want[:5]), before, "the runs before the interruption are kept")

	h := &latencyGen{keptGen: &keptGen{rate: latencyRate}}
	r := newLatencySweep(t, p, h)
	r.Dir = f.Dir
	r.resumeFrom(r.runs(t))
	require.NoError(t, r.measure(context.Background()))
	assert.Equal(t, []string{"latency 4"}, phases(h.log), "the pairs are done; only the latency runs left")
	assert.Equal(t, keysOf(want[5:]), keysOf(h.sent), "none rerun, the rest in order")
	assert.Len(t, r.starts, 1, "a start of the servers for the latency runs")
	for _, c := range h.sent {
		assert.Equal(t, 75.0, c.Rate, "the rate from the recorded pairs")
	}
	var after []string
	for _, run := range r.runs(t) {
		if p.LatencyRun(run.Cell) {
			after = append(after, run.Key())
		}
	}
	assert.ElementsMatch(t, keysOf(want), after, "every latency run recorded once")

	done := &latencyGen{keptGen: &keptGen{rate: latencyRate}}
	again := newLatencySweep(t, p, done)
	again.Dir = f.Dir
	again.resumeFrom(again.runs(t))
	require.NoError(t, again.measure(context.Background()))
	assert.Empty(t, done.sent, "a finished sweep runs no latency run again")
}

// TestLatencyOff: -latency-rate off runs the pairs and nothing alone.
func TestLatencyOff(t *testing.T) {
	p := latencySweepPlan(t, "off")
	require.Nil(t, p.Paired.Latency)
	g := &latencyGen{keptGen: &keptGen{rate: latencyRate}}
	f := newLatencySweep(t, p, g)
	require.NoError(t, f.measure(context.Background()))
	assert.Equal(t, []string{"pairs 42"}, phases(g.log))
	assert.Empty(t, g.sent)
	assert.NotContains(t, g.begins, false, "no per-run session")
	for _, r := range f.runs(t) {
		assert.False(t, r.OpenLoop(), r.Key())
		assert.NotNil(t, r.Pair, r.Key())
	}
	assert.NotContains(t, f.progress.String(), "latency:")
}

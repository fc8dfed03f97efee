package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// duetGen is a kept session that can run pools together: each together
// answers every pool at its rate, the standalone side's server (pool
// "standalone") bias faster than the topology side's, and logs it.
type duetGen struct {
	*keptGen
	bias float64
	// at is the fake's own clock of slices' starts.
	at time.Time
}

func (g *duetGen) Begin(ctx context.Context, keep bool) (loadgen.Session, error) {
	if _, err := g.keptGen.Begin(ctx, keep); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *duetGen) Together(ctx context.Context, pools []string, ws load.WindowSpec, runs [][]*results.Run, counters []loadgen.Counters) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if g.clock != nil {
		g.clock.add(ws.Lead + ws.Duration + g.drain)
	}
	if runs == nil {
		g.record(fmt.Sprintf("warm together %s %s", strings.Join(pools, ","), ws.Duration))
		return nil, ctx.Err()
	}
	g.record(fmt.Sprintf("together %s %s slices %d", strings.Join(pools, ","), ws.Duration, ws.Slices))
	d := ws.Duration / time.Duration(len(runs))
	if g.at.IsZero() {
		g.at = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	}
	for _, rs := range runs {
		g.at = g.at.Add(d)
		for i, pool := range pools {
			rs[i].Start = g.at
			g.mu.Lock()
			if g.windows == nil {
				g.windows = map[string]int{}
			}
			g.windows[pool]++
			n := g.windows[pool]
			g.mu.Unlock()
			rate := g.rate(strings.TrimSuffix(pool, "-twin"), n)
			if pool == analysis.Standalone {
				rate *= g.bias
			}
			rs[i].Figures = &results.Figures{Requests: int64(rate * d.Seconds()), ReqPerSec: rate}
			rs[i].CPU = &results.CPU{Load: results.Usage{User: 0.01}}
		}
	}
	// Cut short, the engine's together answers nothing.
	return []byte("{}"), ctx.Err()
}

// needWeights gives the fake sweep real control groups for a duet's two
// sides, skipping where the kernel or the user cannot.
func needWeights(t *testing.T, f *fakeSweep) []*cgroup.Hierarchy {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no real cgroups")
	}
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	w, err := cgroup.Find()
	if err != nil {
		t.Skipf("the kernel cannot: %v", err)
	}
	a, err := cgroup.FindAccounting()
	if err != nil {
		t.Skipf("the kernel cannot: %v", err)
	}
	f.rig.PrepareAccounting(false)
	require.NoError(t, f.rig.PrepareWeights())
	return []*cgroup.Hierarchy{&w, &a}
}

func duetPlan() Plan {
	p := pairedPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Paired.Duet = true
	p.Paired.Pairs = 4
	return p
}

// TestDuetSweep: each block starts the topology side's servers and the
// standalone side's own, each in its groups of equal weight (real ones),
// opens standalone's pool (to the standalone side) and each topology's in
// turn, and runs each pair's two windows together, in the order drawn for
// the pair; the records are pairs, so the ratios come pair by pair; the
// groups are gone once the servers stop.
func TestDuetSweep(t *testing.T) {
	p := duetPlan()
	p.GOMAXPROCS = []int{1}
	f := newFakeSweep(t, p)
	groups := needWeights(t, f)
	gen := &duetGen{keptGen: &keptGen{rate: steadyRate}, bias: 1}
	f.generators[results.LoadBuiltin] = gen
	require.NoError(t, f.measure(context.Background()))

	require.Len(t, f.starts, 2, "the topology side's servers and the standalone side's")
	top, sa := f.starts[0], f.starts[1]
	assert.Len(t, top.Topologies, 3, "every topology on the topology side")
	require.Len(t, sa.Topologies, 1)
	assert.Equal(t, analysis.Standalone, sa.Topologies[0].Name)
	assert.NotEqual(t, top.Layout.HTTP, sa.Layout.HTTP, "standalone's own server listens apart")
	require.NotNil(t, sa.Weight, "the standalone side's weight group")
	assert.NoDirExists(t, sa.Weight.Dir, "the group went with the servers")
	for _, h := range groups {
		for _, prefix := range []string{"topobench-servers-", "topobench-standalone-"} {
			assert.NoDirExists(t, filepath.Join(h.Root, fmt.Sprint(prefix, os.Getpid())), "no group left behind")
		}
	}
	require.NotNil(t, top.Account)
	require.NotNil(t, sa.Account)
	assert.NotEqual(t, top.Account.Dir, sa.Account.Dir, "each side is accounted apart")
	assert.Equal(t, 2, f.started[0].stopped+f.started[1].stopped, "both sides stopped")

	log := strings.Join(gen.log, "\n")
	assert.Equal(t, 1, strings.Count(log, "open standalone\n"))
	assert.Equal(t, 4, strings.Count(log, "\ntogether "), "one of 4 slices for each topology, the A/A's 4 in two halves")
	assert.Equal(t, 3, strings.Count(log, "warm together standalone,"), "each pool but standalone's own warms beside standalone's")
	assert.Contains(t, log, "warm standalone\n", "standalone's own pool warms alone")
	assert.Equal(t, 2, strings.Count(log, "8s slices 4"), "each topology's 4 pairs in one together")
	assert.Equal(t, 2, strings.Count(log, "4s slices 2"), "the A/A in halves")
	assert.NotContains(t, log, "window ", "no window runs alone")

	runs := f.runs(t)
	require.Len(t, runs, 24)
	for _, r := range runs {
		require.NotNil(t, r.Pair, r.Name())
		assert.Nil(t, r.CPU.Server, "%s: /proc's times span the together, not the slice", r.Name())
	}
	pairs := analysis.PairRatios(p.Plan, runs)
	require.Len(t, pairs, 3)
	for k, ps := range pairs {
		require.Len(t, ps, 4, k.String())
		for _, pr := range ps {
			assert.InDelta(t, steadyRate(k.Topology, 0)/1000, pr.Ratio, 1e-12, k.String())
		}
	}
	out := f.progress.String()
	assert.Contains(t, out, "duet: standalone's side fake servers; each side in a group of CPU weight")
	assert.Contains(t, out, "[pairs 1-4 nginx-http]")
	assert.Contains(t, out, ": 0.400 of standalone")
}

// TestDuetRoleSwap: in the A/A, which side's server plays standalone is
// drawn for each pair, so that a side faster by 3% reads 1.03 in some
// pairs and 1/1.03 in others, and their mean cancels it; the pairs of a
// topology keep standalone on its own side.
func TestDuetRoleSwap(t *testing.T) {
	p := duetPlan()
	p.GOMAXPROCS = []int{1}
	p.Topologies = []string{"standalone", "nginx-http"}
	p.Paired.Pairs = 16
	f := newFakeSweep(t, p)
	needWeights(t, f)
	gen := &duetGen{keptGen: &keptGen{rate: steadyRate}, bias: 1.03}
	f.generators[results.LoadBuiltin] = gen
	require.NoError(t, f.measure(context.Background()))

	runs := f.runs(t)
	aa := analysis.KeyOf(p.Plan, results.Run{Cell: Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin}})
	pairs := analysis.PairRatios(p.Plan, runs)
	require.Len(t, pairs[aa], 16)
	swapped, logSum := 0, 0.0
	for _, pr := range pairs[aa] {
		switch {
		case math.Abs(pr.Ratio-1/1.03) < 1e-9:
			swapped++
		case math.Abs(pr.Ratio-1.03) < 1e-9:
		default:
			t.Errorf("pair %d of the A/A: %g, want 1.03 or 1/1.03", pr.Index, pr.Ratio)
		}
		logSum += math.Log(pr.Ratio)
	}
	assert.Greater(t, swapped, 3, "some pairs swap the roles")
	assert.Less(t, swapped, 13, "some keep them")
	t.Logf("%d of 16 A/A pairs swapped; geometric mean %.4f", swapped, math.Exp(logSum/16))
	for _, pr := range pairs[analysis.KeyOf(p.Plan, results.Run{Cell: Cell{Topology: "nginx-http", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin}})] {
		assert.InDelta(t, 0.4/1.03, pr.Ratio, 1e-9, "standalone stays on its side against a topology")
	}
	// The A/A row: the summary's A/A is the pairs' geometric mean.
	sum := analysis.Summarize(results.Env{Plan: p.Plan}, runs)
	st, ok := sum.Cell(aa)
	require.True(t, ok)
	require.NotNil(t, st.AA)
	assert.InDelta(t, math.Exp(logSum/16), st.AA.Center, 1e-9)
	assert.Less(t, math.Abs(st.AA.Center-1), 0.03, "the swap pulls the A/A toward 1")
}

// TestDuetResume: a duet sweep interrupted in a block resumes with the
// next pair, both sides started anew, and ends with every pair complete.
func TestDuetResume(t *testing.T) {
	p := duetPlan()
	p.GOMAXPROCS = []int{1}
	f := newFakeSweep(t, p)
	needWeights(t, f)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	gen := &duetGen{keptGen: &keptGen{rate: func(top string, i int) float64 {
		if n++; n == 12 {
			cancel() // in nginx-http's together, after the A/A's two halves
		}
		return steadyRate(top, i)
	}}, bias: 1}
	f.generators[results.LoadBuiltin] = gen
	require.NoError(t, f.measure(ctx))
	assert.True(t, f.out.Interrupted)
	kept := len(f.runs(t))
	assert.Equal(t, 8, kept, "the A/A's pairs are kept; the together that was cut left nothing")

	g := newFakeSweep(t, p)
	g.Dir = f.Dir
	needWeights(t, g)
	g.generators[results.LoadBuiltin] = &duetGen{keptGen: &keptGen{rate: steadyRate}, bias: 1}
	require.NoError(t, g.measure(context.Background()))
	require.Len(t, g.starts, 2, "both sides started again")
	pairs := analysis.PairRatios(p.Plan, g.runs(t))
	require.Len(t, pairs, 3)
	for k, ps := range pairs {
		assert.Len(t, ps, 4, k.String())
		for i, pr := range ps {
			assert.Equal(t, i+1, pr.Index, "%s: pairs number on %+v", k, ps)
		}
	}
}

// TestSidesRealServers: a duet sweep, and a paired one with standalone in
// a process of its own, on real servers, sockets and control groups:
// standalone's own cmd/hello and the topology side's nginx and cmd/hello,
// each side's servers' CPU over every window from its own accounting
// group, the pairs complete, the A/A near 1 and nginx-http below it; no
// group is left behind.
func TestSidesRealServers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs cmd/hello, nginx and the engine in control groups")
	}
	if os.Geteuid() != 0 {
		t.Skip("a duet's control groups need root")
	}
	if _, err := cgroup.Find(); err != nil {
		t.Skipf("the kernel cannot: %v", err)
	}
	nginxBin, err := nginx.Find()
	if err != nil {
		t.Skipf("needs nginx: %v", err)
	}
	for _, tc := range []struct {
		name string
		duet bool
		// verb is the session command of a window, progress a line of
		// the standalone side's start; nginx-http's windows last 2 s.
		verb, progress, aa, http string
	}{
		// The duet's nginx-http pairs: one together of two 2 s slices;
		// the A/A's halves are one 1 s slice each.
		{"duet", true, "together", "duet: standalone's side", "1s", "4s"},
		{"paired", false, "window", "a process of its own", "1s", "2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.DefaultPlan()
			p.Topologies = []string{"standalone", "nginx-http"}
			p.GOMAXPROCS = []int{1}
			p.Connections = []int{50}
			p.Loads = []results.Generator{results.LoadBuiltin}
			p.Reps, p.Duration, p.Warmup = 1, time.Second, time.Second
			p.Paired = &results.Paired{Pairs: 2, Seed: 3, Lead: 200 * time.Millisecond, Duet: tc.duet, Own: true,
				Windows: map[string]time.Duration{"nginx-http": 2 * time.Second}}
			dir := filepath.Join(testenv.ShortDir(t), "r")
			var progress, log bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			out, err := Run(ctx, Options{Plan: p, Dir: dir, FreePorts: true, Progress: &progress, Log: &log,
				HelloBin: testenv.HelloBin(t), NginxBin: nginxBin, LoadBin: testenv.TopobenchBin(t)})
			require.NoError(t, err, "%s\n%s", progress.String(), log.String())
			assert.Equal(t, 8, out.Measured, "2 pairs of the A/A and of nginx-http, 2 windows each")

			_, runs, err := results.Load(dir)
			require.NoError(t, err)
			urls := checkSideRuns(t, runs, tc.verb, tc.aa, tc.http)
			assert.Len(t, urls, 2, "the A/A loads standalone's own server and the topology side's")
			pairs := analysis.PairRatios(p.Plan, runs)
			require.Len(t, pairs, 2)
			for k, ps := range pairs {
				require.Len(t, ps, 2, k.String())
				logSum := 0.0
				for _, pr := range ps {
					logSum += math.Log(pr.Ratio)
				}
				// 50 connections leave the servers idle half the time: the
				// pairs stray, so these are bounds of sense, not of precision.
				if mean := math.Exp(logSum / 2); k.Topology == analysis.Standalone {
					assert.InDelta(t, 1, mean, 0.5, "the A/A")
				} else {
					assert.True(t, mean > 0.1 && mean < 1.5, "nginx-http: %.3f of standalone", mean)
				}
			}
			assert.Contains(t, progress.String(), tc.progress)
			assert.Contains(t, progress.String(), "windows of 1s (nginx-http 2s)")
			for _, find := range []func() (cgroup.Hierarchy, error){cgroup.Find, cgroup.FindAccounting} {
				h, err := find()
				require.NoError(t, err)
				for _, prefix := range []string{"topobench-servers-", "topobench-standalone-"} {
					assert.NoDirExists(t, filepath.Join(h.Root, fmt.Sprint(prefix, os.Getpid())), "no group left behind")
				}
			}
		})
	}
}

// TestDuetStandaloneRefused: a standalone side whose answer parity
// refuses stops the block: both sides stop, their groups go, and the
// error says which side and why.
func TestDuetStandaloneRefused(t *testing.T) {
	p := duetPlan()
	p.GOMAXPROCS = []int{1}
	f := newFakeSweep(t, p)
	groups := needWeights(t, f)
	f.refused = map[string]error{"standalone": errors.New("a 142-byte header block")}
	f.generators[results.LoadBuiltin] = &duetGen{keptGen: &keptGen{rate: steadyRate}, bias: 1}
	err := f.measure(context.Background())
	require.ErrorContains(t, err, "standalone's side: parity check: a 142-byte header block")
	require.Len(t, f.started, 2)
	for i, st := range f.started {
		assert.Equal(t, 1, st.stopped, "side %d stopped once", i)
	}
	for _, h := range groups {
		for _, prefix := range []string{"topobench-servers-", "topobench-standalone-"} {
			assert.NoDirExists(t, filepath.Join(h.Root, fmt.Sprint(prefix, os.Getpid())))
		}
	}
}

// TestDuetNeedsGroups: without the cpu controller's groups the duet
// refuses to start its sides, and the block's servers stop.
func TestDuetNeedsGroups(t *testing.T) {
	p := duetPlan()
	p.GOMAXPROCS = []int{1}
	f := newFakeSweep(t, p)
	f.generators[results.LoadBuiltin] = &duetGen{keptGen: &keptGen{rate: steadyRate}, bias: 1}
	err := f.measure(context.Background())
	require.ErrorContains(t, err, "-design: duet: the servers' two sides need the cpu controller's groups")
	require.Len(t, f.started, 1)
	assert.Equal(t, 1, f.started[0].stopped)
}

// TestDuetPlan: the duet runs on the engine's sessions only.
func TestDuetPlan(t *testing.T) {
	for _, tc := range []struct {
		name  string
		loads []results.Generator
		want  string
	}{
		{"builtin", []results.Generator{results.LoadBuiltin}, ""},
		{"wrk", []results.Generator{results.LoadWrk}, "-design: duet: needs -load builtin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := duetPlan()
			p.Loads = tc.loads
			err := p.Validate(plan.Where{})
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
	assert.Equal(t, "duet", duetPlan().Paired.Design())
	assert.Equal(t, "paired", pairedPlan().Paired.Design())
}

// checkSideRuns checks each run of a sweep with standalone's own side:
// its servers' CPU from its side's group over the window, and its window
// in the session's command (verb), aa long for the A/A's and http for
// nginx-http's; it returns the URLs standalone's load went to.
func checkSideRuns(t *testing.T, runs []results.Run, verb, aa, http string) map[string]bool {
	t.Helper()
	urls := map[string]bool{}
	for _, r := range runs {
		require.NotNil(t, r.CPU, r.Name())
		require.NotNil(t, r.CPU.Servers, "%s: its side's group over the window", r.Name())
		assert.Equal(t, results.SpanWindow, r.CPU.Servers.Span, r.Name())
		require.NotNil(t, r.Figures, r.Name())
		// The group read is the side that served the window: the
		// other side idles meanwhile when the windows alternate.
		us := 1e6 * r.CPU.Servers.Seconds / float64(r.Figures.Requests)
		assert.Greater(t, us, 2.0, "%s: %.2f µs a request from its side's group", r.Name(), us)
		i := slices.Index(r.Command, verb)
		require.GreaterOrEqual(t, i, 0, "%s: %v", r.Name(), r.Command)
		want := aa
		if r.Pair.With == "nginx-http" {
			want = http
		}
		assert.Equal(t, want, r.Command[i+2], r.Name())
		if r.Topology == analysis.Standalone {
			urls[r.URL] = true
		}
	}
	return urls
}

package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/topology"
)

// fakeServers stands for a block's stack: it refuses the topologies in
// refused at parity, and exits (Alive fails) after exitAfter checks.
type fakeServers struct {
	cfg       stack.Config
	refused   map[string]error
	exitAfter int
	checks    int
	stopped   int
	stopErr   error
	cpuReads  int
}

func (f *fakeServers) String() string { return "fake servers" }

func (f *fakeServers) Parity(ctx context.Context, timeout time.Duration) ([]parity.Result, map[string]error) {
	var rs []parity.Result
	refused := map[string]error{}
	for _, t := range f.cfg.Topologies {
		rs = append(rs, parity.Result{Topology: t})
		if err := f.refused[t.Name]; err != nil {
			refused[t.Name] = err
		}
	}
	return rs, refused
}

func (f *fakeServers) Alive() error {
	f.checks++
	if f.exitAfter > 0 && f.checks >= f.exitAfter {
		return errors.New("cmd/hello exited\n    panic: out of memory")
	}
	return nil
}

func (f *fakeServers) Stop() error    { f.stopped++; return f.stopErr }
func (f *fakeServers) ServerPid() int { return 0 }
func (f *fakeServers) NginxPid() int  { return 0 }

// ServerCPU grows by a millisecond a reading: the server works.
func (f *fakeServers) ServerCPU(context.Context) (procstat.Times, error) {
	f.cpuReads++
	return procstat.Times{User: time.Duration(f.cpuReads) * time.Millisecond}, nil
}
func (f *fakeServers) NginxCPU(context.Context) (procstat.Times, error) {
	return procstat.Times{}, stack.ErrNoServer
}

// fakeGen is a load generator that answers every cell at once, with an
// error for the topologies in fail, and cancels the sweep at cancelAt.
type fakeGen struct {
	mu       sync.Mutex
	warmed   []string
	measured []string
	fail     map[string]error
	warmErr  error
	cancelAt string
	cancel   context.CancelFunc
}

func (g *fakeGen) Warm(ctx context.Context, c Cell, url string, d time.Duration) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.warmed = append(g.warmed, c.Key())
	return g.warmErr
}

func (g *fakeGen) Measure(ctx context.Context, c Cell, d time.Duration, run *results.Run) ([]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.measured = append(g.measured, c.Key())
	run.Command = []string{"fake", run.URL}
	run.CPU = &results.CPU{Load: results.Usage{User: 0.001}}
	if c.Key() == g.cancelAt {
		g.cancel()
		return nil, context.Canceled
	}
	if err := g.fail[c.Topology]; err != nil {
		return []byte("raw"), err
	}
	run.Figures = &results.Figures{Requests: 1000, ReqPerSec: 1000, Latency: true, P50: time.Millisecond, P99: 4 * time.Millisecond, Max: 5 * time.Millisecond}
	return []byte("raw wrk output"), nil
}

// fakeSweep is a sweep of plan over fakes, in a results directory of its
// own: the orchestration without processes.
type fakeSweep struct {
	*sweep
	gen     *fakeGen
	started []*fakeServers
	starts  []stack.Config
	// startErr fails the n-th start (1-based) when set.
	startErr   error
	failStartN int
	refused    map[string]error
	exitAfter  int
	progress   bytes.Buffer
	log        bytes.Buffer
}

func newFakeSweep(t *testing.T, p Plan) *fakeSweep {
	t.Helper()
	res, err := p.Check(plan.Where{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: p.Plan}))
	f := &fakeSweep{gen: &fakeGen{}}
	f.sweep = &sweep{
		Options: Options{Dir: dir, Progress: &f.progress, Log: &f.log},
		plan:    p, res: res, done: map[string]bool{},
		layout:     topology.DefaultLayout(dir),
		generators: map[results.Generator]loadgen.Generator{results.LoadWrk: loadgen.PerRun(f.gen), results.LoadBuiltin: loadgen.PerRun(f.gen)},
	}
	f.sweep.rig = rig.New(rig.Config{Dir: dir, Progress: &f.progress, Log: &f.log, Warn: f.sweep.warn})
	f.rig.Start = func(ctx context.Context, cfg stack.Config) (servers, error) {
		f.starts = append(f.starts, cfg)
		if f.startErr != nil && len(f.starts) == f.failStartN {
			return nil, f.startErr
		}
		st := &fakeServers{cfg: cfg, refused: f.refused, exitAfter: f.exitAfter}
		f.started = append(f.started, st)
		return st, nil
	}
	return f
}

func (f *fakeSweep) runs(t *testing.T) []results.Run {
	t.Helper()
	_, runs, err := results.Load(f.Dir)
	require.NoError(t, err)
	return runs
}

func smallPlan(tops ...string) Plan {
	p := plan.DefaultPlan()
	p.Topologies = tops
	p.GOMAXPROCS = []int{1, 2}
	p.Connections = []int{100}
	p.Reps = 2
	p.Warmup = time.Second
	return p
}

// TestMeasureEveryCell: each block starts its servers once with the
// plan's topologies and CPUs, every cell is warmed, measured and written,
// the servers are stopped, and the progress says so.
func TestMeasureEveryCell(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	p.PinLoad, p.PinServer = "0", "1"
	f := newFakeSweep(t, p)
	require.NoError(t, f.measure(context.Background()))

	assert.Equal(t, 8, f.out.Measured)
	assert.Equal(t, 8, f.out.Total)
	assert.Zero(t, f.out.Failed)
	require.Len(t, f.starts, 2, "one start per GOMAXPROCS value")
	for i, cfg := range f.starts {
		assert.Equal(t, p.GOMAXPROCS[i], cfg.GOMAXPROCS)
		assert.Equal(t, cpuset.Of(1), cfg.CPUs, "the servers' CPUs, parsed once")
		assert.Equal(t, []string{"standalone", "nginx-http"}, names(cfg.Topologies))
		assert.Equal(t, 1, f.started[i].stopped, "stopped once")
	}
	assert.Len(t, f.gen.warmed, 8)
	assert.Equal(t, f.gen.warmed, f.gen.measured)

	runs := f.runs(t)
	require.Len(t, runs, 8)
	for _, r := range runs {
		assert.False(t, r.Failed(), r.Key())
		assert.Equal(t, "0", r.LoadCPUs)
		assert.Equal(t, "1", r.ServerCPUs)
		assert.Equal(t, f.layout.URL(f.res.Topology(r.Topology)), r.URL)
		require.NotNil(t, r.CPU)
		assert.InDelta(t, 0.001, r.CPU.Server.Total(), 1e-9, "the fake server's CPU time is accounted")
		assert.Nil(t, r.CPU.Nginx, "no nginx in the fake: not measured, not zero")
		raw, err := os.ReadFile(filepath.Join(f.Dir, results.RunsDir, r.Name()+".txt"))
		require.NoError(t, err)
		assert.Equal(t, "raw wrk output", string(raw))
	}
	out := f.progress.String()
	assert.Contains(t, out, "8 cells (2 topologies x GOMAXPROCS [1 2] x 2 reps), 8 to run")
	assert.Contains(t, out, "GOMAXPROCS=1: fake servers; parity: 2 topologies answer identically")
	assert.Contains(t, out, "[8/8] GOMAXPROCS=2")
	assert.Contains(t, out, "1,000 req/s  p50 1.0ms  p99 4.0ms  errors: connect 0 read 0 write 0 timeout 0 non-2xx 0")
}

func names(ts []topology.Topology) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestMeasureSkipsWhatIsDone: a resumed sweep measures only the missing
// cells and starts no servers for a block that is complete.
func TestMeasureSkipsWhatIsDone(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	for _, c := range f.plan.Cells() {
		if c.GOMAXPROCS == 1 || c.Rep == 1 {
			f.done[c.Key()] = true
		}
	}
	require.NoError(t, f.measure(context.Background()))
	assert.Equal(t, 1, f.out.Measured)
	assert.Equal(t, 3, f.out.Skipped)
	require.Len(t, f.starts, 1)
	assert.Equal(t, 2, f.starts[0].GOMAXPROCS)
	assert.Equal(t, []string{"g2-standalone-c100-r2"}, f.gen.measured)
	assert.Contains(t, f.progress.String(), "4 cells (1 topologies x GOMAXPROCS [1 2] x 2 reps), 1 to run")
}

// TestRefusedTopologyFailsItsCellsOnly: a topology that fails parity is
// recorded as failed, with the reason, and the others are measured.
func TestRefusedTopologyFailsItsCellsOnly(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone", "nginx-fcgi-unix"))
	f.refused = map[string]error{"nginx-fcgi-unix": errors.New("nginx-fcgi-unix: header block 139 bytes, want 141")}
	require.NoError(t, f.measure(context.Background()))
	assert.Equal(t, 4, f.out.Measured)
	assert.Equal(t, 4, f.out.Failed)
	for _, r := range f.runs(t) {
		if r.Topology == "nginx-fcgi-unix" {
			assert.Equal(t, "parity check: nginx-fcgi-unix: header block 139 bytes, want 141", r.Error)
		} else {
			assert.Empty(t, r.Error)
		}
	}
	assert.NotContains(t, f.gen.measured, "g1-nginx-fcgi-unix-c100-r1", "no load on a refused topology")
	assert.Contains(t, f.progress.String(), "parity: REFUSED nginx-fcgi-unix (see the log above); measuring the other 1")
	assert.Contains(t, f.log.String(), "refusing to measure nginx-fcgi-unix: nginx-fcgi-unix: header block 139 bytes")
	assert.Contains(t, f.progress.String(), "FAILED: parity check:")
}

// TestFailedCellShowsTheChildsTail: a generator's failure is recorded and
// its stderr tail is on the terminal, not only in the record.
func TestFailedCellShowsTheChildsTail(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	f.gen.fail = map[string]error{"standalone": errors.New("stdbuf: exit status 1\n    taskset: failed to set pid 0's affinity: Invalid argument")}
	require.NoError(t, f.measure(context.Background()))
	assert.Equal(t, 4, f.out.Failed)
	assert.Contains(t, f.progress.String(), "FAILED: stdbuf: exit status 1\n    taskset: failed to set pid 0's affinity: Invalid argument\n")
	for _, r := range f.runs(t) {
		assert.Contains(t, r.Error, "Invalid argument")
	}
}

// TestWarmupFailure: a failed warmup fails the cell without measuring it.
func TestWarmupFailure(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	f.gen.warmErr = errors.New("wrk: connection refused")
	require.NoError(t, f.measure(context.Background()))
	assert.Equal(t, 4, f.out.Failed)
	assert.Empty(t, f.gen.measured)
	for _, r := range f.runs(t) {
		assert.Equal(t, "warmup: wrk: connection refused", r.Error)
	}
}

// TestServerExitStopsTheSweep: a server that exits mid-block ends the
// sweep with its name and stderr tail; what finished is kept.
func TestServerExitStopsTheSweep(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone", "nginx-http"))
	f.exitAfter = 3
	err := f.measure(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "during GOMAXPROCS=1")
	assert.Contains(t, err.Error(), "cmd/hello exited\n    panic: out of memory")
	assert.Len(t, f.runs(t), 3, "the cells measured before are kept")
	require.Len(t, f.started, 1)
	assert.Equal(t, 1, f.started[0].stopped, "and the servers stopped")
}

// TestStartFailure: servers that do not start end the sweep with the
// error, after the blocks before it.
func TestStartFailure(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	f.startErr, f.failStartN = errors.New("starting cmd/hello with GOMAXPROCS=2: address 127.0.0.1:8080 is not free"), 2
	err := f.measure(context.Background())
	require.ErrorIs(t, err, f.startErr)
	assert.Equal(t, 2, f.out.Measured)
}

// TestInterruptKeepsWhatFinished: Ctrl-C during a cell drops that cell
// (not a measurement), keeps the finished ones and stops the servers.
func TestInterruptKeepsWhatFinished(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone", "nginx-http"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.gen.cancel = cancel
	f.gen.cancelAt = "g1-nginx-http-c100-r2" // round 2 starts one later
	require.NoError(t, f.measure(ctx))
	assert.True(t, f.out.Interrupted)
	runs := f.runs(t)
	assert.Len(t, runs, 2, "r1 of both topologies")
	for _, r := range runs {
		assert.Equal(t, 1, r.Rep)
	}
	assert.Contains(t, f.progress.String(), "interrupted")
	require.Len(t, f.started, 1, "no block starts after the interrupt")
	assert.Equal(t, 1, f.started[0].stopped)
}

// TestStopErrorIsAWarning: servers that do not stop cleanly do not fail
// the sweep; the warning is printed and kept.
func TestStopErrorIsAWarning(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	f.rig.Start = func(ctx context.Context, cfg stack.Config) (servers, error) {
		return &fakeServers{cfg: cfg, stopErr: errors.New("stopping cmd/hello: cmd/hello left its socket /tmp/go.sock behind")}, nil
	}
	require.NoError(t, f.measure(context.Background()))
	require.NoError(t, f.writeEnv())
	env, _, err := results.Load(f.Dir)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(strings.Join(env.Warnings, "\n"), "left its socket"), "one per block")
	assert.Contains(t, f.log.String(), "warning: stopping cmd/hello")
}

// TestBlockTopologies: a block's servers are started for the topologies
// of its cells only, once each, in plan order.
func TestBlockTopologies(t *testing.T) {
	f := newFakeSweep(t, smallPlan("nginx-return", "standalone", "nginx-http"))
	b := f.plan.Blocks()[0]
	b.Cells = []Cell{b.Cells[1], b.Cells[0], b.Cells[1]}
	r := &rounds{s: f.sweep, start: time.Now()}
	require.NoError(t, r.run(context.Background(), step{Block: b}))
	require.Len(t, f.starts, 1)
	assert.Equal(t, []string{"nginx-return", "standalone"}, names(f.starts[0].Topologies))
}

func TestWithWait(t *testing.T) {
	assert.Equal(t, "http://127.0.0.1:8080/", loadgen.WithSchedule("http://127.0.0.1:8080/", results.Schedule{}))
	assert.Equal(t, "http://127.0.0.1:8080/?wait=100ms", loadgen.WithSchedule("http://127.0.0.1:8080/", results.Schedule{Wait: 100 * time.Millisecond}))
	assert.Equal(t, "http://127.0.0.1:8080/?work=200us&wait=1s", loadgen.WithSchedule("http://127.0.0.1:8080/", results.Schedule{Wait: time.Second, Work: 200 * time.Microsecond}))
}

func TestParityLine(t *testing.T) {
	tops, err := topology.LookupAll([]string{"standalone", "nginx-http", "nginx-fcgi-unix"})
	require.NoError(t, err)
	assert.Equal(t, "3 topologies answer identically (141-byte header block, same body)", parityLine(tops, nil))
	assert.Equal(t, "REFUSED nginx-http, nginx-fcgi-unix (see the log above); measuring the other 1",
		parityLine(tops, map[string]error{"nginx-fcgi-unix": errors.New("x"), "nginx-http": errors.New("y")}))
}

func TestDescribe(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	assert.Equal(t, "2 topologies x GOMAXPROCS [1 2] x 2 reps", p.Describe())
	p.Targets = []string{"go", "erlang"}
	p.Connections = []int{100, 200}
	p.Loads = []results.Generator{results.LoadWrk, results.LoadBuiltin}
	p.Schedules = []results.Schedule{{Rate: 100}, {Rate: 200}}
	assert.Equal(t, "targets [go erlang] x 2 topologies x GOMAXPROCS [1 2] x connections [100 200] x loads [wrk builtin] x 2 schedules x 2 reps", p.Describe())
}

func TestProgressEstimates(t *testing.T) {
	f := newFakeSweep(t, smallPlan("standalone"))
	f.out.Total = 10
	c := f.plan.Cells()[0]
	f.progress.Reset()
	f.sweep.progress(c, time.Now())
	assert.Equal(t, fmt.Sprintf("[ 1/10] %s  (elapsed 0s, left ~2m40s) ", c), f.progress.String(), "nothing ran: the plan's 16 s a cell")
	f.out.Measured = 4
	f.progress.Reset()
	f.sweep.progress(c, time.Now().Add(-40*time.Second))
	assert.Equal(t, fmt.Sprintf("[ 5/10] %s  (elapsed 40s, left ~1m0s) ", c), f.progress.String(), "10 s a cell as they really took")
}

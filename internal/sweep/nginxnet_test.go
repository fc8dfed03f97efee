package sweep

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/testenv"
)

// TestKeepaliveBlocks: nginx restarts for each pool, sized to the plan's
// most connections for auto, and every start gets the plan's load.
func TestKeepaliveBlocks(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	p.GOMAXPROCS = []int{1}
	p.Connections = []int{100, 200}
	p.UpstreamKeepalive = []results.Keepalive{300, results.KeepaliveAuto}
	f := newFakeSweep(t, p)
	require.NoError(t, f.measure(context.Background()))
	require.Len(t, f.starts, 2, "one start per pool")
	for i, want := range []int{300, 200} {
		assert.Equal(t, want, f.starts[i].UpstreamKeepalive)
		assert.Equal(t, 200, f.starts[i].Connections, "the most connections of the plan")
	}
	runs := f.runs(t)
	require.Len(t, runs, 16)
	var keys []string
	for _, r := range runs {
		keys = append(keys, r.Key())
	}
	assert.Contains(t, keys, "g1-nginx-http-c200-keepaliveauto-r2")
	assert.Contains(t, keys, "g1-standalone-c100-keepalive300-r1")
}

// overflowServers is a block's servers whose namespace is this test's
// own: the sweep reads the counters through the pid of an idle child.
type overflowServers struct {
	*fakeServers
	pid      int
	settings *nginxconf.Params
}

func (o overflowServers) NginxPid() int { return o.pid }

// idlePid is an idle process in this test's network namespace, which the
// sweep may wait on for idle servers.
func idlePid(t *testing.T) int {
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

func (o overflowServers) NginxSettings() (nginxconf.Params, bool) {
	if o.settings != nil {
		return *o.settings, true
	}
	return nginxconf.Params{WorkerProcesses: 1, WorkerConnections: 264, WorkerRlimitNofile: 20000, Backlog: 511, Keepalive: 300, Vhosts: []string{"go.http"}}, true
}

// stormGen is a load generator whose measured run sends a burst of
// connects at a listener with a backlog of 0 that never accepts.
type stormGen struct{ fakeGen }

func (g *stormGen) Measure(ctx context.Context, c Cell, d time.Duration, run *results.Run) ([]byte, error) {
	if _, err := testenv.ListenStorm(0, 20); err != nil {
		return nil, err
	}
	return g.fakeGen.Measure(ctx, c, d, run)
}

// TestListenOverflowsFlagged fills a real accept queue during a cell's
// measured run: the run records the overflows of its servers' namespace,
// and the progress line and the report flag it.
func TestListenOverflowsFlagged(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	p := smallPlan("nginx-http")
	p.GOMAXPROCS = []int{1}
	p.Reps = 1
	f := newFakeSweep(t, p)
	pid := idlePid(t)
	gen := &stormGen{}
	f.generators[results.LoadWrk] = loadgen.PerRun(gen)
	f.rig.Start = func(ctx context.Context, cfg stack.Config) (servers, error) {
		return overflowServers{&fakeServers{cfg: cfg}, pid, nil}, nil
	}
	require.NoError(t, f.measure(context.Background()))
	runs := f.runs(t)
	require.Len(t, runs, 1)
	n := runs[0].Net
	require.NotNil(t, n)
	assert.Positive(t, n.ListenOverflows)
	assert.Nil(t, n.UpstreamOpened, "loopback shared with the load: nginx's connects are not told apart")
	assert.Contains(t, f.progress.String(), "LISTEN OVERFLOWS: ")

	env, runs, err := results.Load(f.Dir)
	require.NoError(t, err)
	require.NotNil(t, env.Nginx, "nginx's sizing is in env.json")
	assert.Equal(t, 264, env.Nginx.WorkerConnections)
	assert.Equal(t, map[string]int{"300": 300}, env.Nginx.Keepalive)
	s := analysis.Summarize(env, runs)
	var kinds []string
	for _, w := range s.Warnings {
		kinds = append(kinds, w.Kind)
	}
	assert.Contains(t, kinds, "listen overflows")
	require.Len(t, s.Net, 1)
	assert.Equal(t, 1, s.Net[0].OverflowRuns)
	c, ok := s.Cell(s.Net[0].Key)
	require.True(t, ok)
	assert.Contains(t, c.Notes, "listen overflows")
}

func TestNetNote(t *testing.T) {
	upstream, accepted := int64(82), int64(20)
	n := &results.Net{UpstreamOpened: &upstream, Accepted: &accepted}
	run := results.Run{Figures: &results.Figures{Requests: 41000}, Net: n}
	assert.Equal(t, "; upstream opened 2.0/1k req", netNote(run))
	run.Net = &results.Net{ListenOverflows: 4022, SyncookiesSent: 965}
	assert.Equal(t, "; LISTEN OVERFLOWS: 4022 connects turned away, 965 SYN cookies in the servers' namespace", netNote(run))
	assert.Empty(t, netNote(results.Run{}))
}

// TestRecordNginxOnce: env.json keeps each pool's size, written when it
// changes.
func TestRecordNginxOnce(t *testing.T) {
	p := smallPlan("nginx-http")
	p.UpstreamKeepalive = []results.Keepalive{300, results.KeepaliveAuto}
	f := newFakeSweep(t, p)
	st := overflowServers{&fakeServers{}, os.Getpid(), nil}
	require.NoError(t, f.recordNginx(st, 300))
	require.NoError(t, f.recordNginx(st, results.KeepaliveAuto))
	env, _, err := results.Load(f.Dir)
	require.NoError(t, err)
	require.NotNil(t, env.Nginx)
	assert.Equal(t, map[string]int{"300": 300, "auto": 300}, env.Nginx.Keepalive, "the fake renders 300 for both")
	assert.Equal(t, 1, env.Nginx.WorkerProcesses)
	require.NoError(t, f.recordNginx(&fakeServers{}, 300), "servers without nginx settings: nothing to record")
}

// TestRecordNginxNotesReloads: pools as large as the load on every
// upstream vhost do not fit beside it in a worker on this machine; the
// sweep says in its log that nginx reloads between topologies, and warns
// of nothing (the stack closes the idle pool: stack.UsePool).
func TestRecordNginxNotesReloads(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	p.Connections = []int{5000}
	p.UpstreamKeepalive = []results.Keepalive{results.KeepaliveAuto}
	f := newFakeSweep(t, p)
	params := nginxconf.Params{WorkerRlimitNofile: 20000, Keepalive: 5000}
	require.NoError(t, params.Fit(5000))
	st := overflowServers{&fakeServers{}, os.Getpid(), &params}
	require.NoError(t, f.recordNginx(st, 0))
	require.NoError(t, f.recordNginx(st, 0))
	env, _, err := results.Load(f.Dir)
	require.NoError(t, err)
	assert.Empty(t, env.Warnings)
	assert.Contains(t, f.log.String(), "upstream keepalive auto: the pools of 5000 per vhost do not fit in a worker together (35064 connections against 20000); nginx reloads between topologies to close the idle one")
}

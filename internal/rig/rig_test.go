package rig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/topology"
)

// fakeStack is a block's servers that start and stop, refuse the
// topologies named, and count their stops.
type fakeStack struct {
	elsewhere
	cfg     stack.Config
	refused map[string]error
	stops   int
	stopErr error
}

func (f *fakeStack) String() string { return fmt.Sprintf("fake %d topologies", len(f.cfg.Topologies)) }
func (f *fakeStack) Parity(context.Context, time.Duration) ([]parity.Result, map[string]error) {
	return nil, f.refused
}
func (f *fakeStack) Stop() error { f.stops++; return f.stopErr }

// fakeStarts is a rig's Start that records each start's configuration
// and fails the one numbered fail (1 is the first; 0 none).
type fakeStarts struct {
	cfgs    []stack.Config
	started []*fakeStack
	fail    int
	refused map[string]error
}

func (f *fakeStarts) start(_ context.Context, cfg stack.Config) (Servers, error) {
	f.cfgs = append(f.cfgs, cfg)
	if len(f.cfgs) == f.fail {
		return nil, errors.New("the server exited")
	}
	st := &fakeStack{cfg: cfg, refused: f.refused}
	f.started = append(f.started, st)
	return st, nil
}

// TestStartServersStop: a block's servers start with the rig's start,
// without groups where the kernel has none, and their stop's failure is
// a warning, not an error.
func TestStartServersStop(t *testing.T) {
	var warnings []string
	starts := &fakeStarts{}
	r := New(Config{Start: starts.start, Warn: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }})
	st, err := r.StartServers(context.Background(), stack.Config{GOMAXPROCS: 2})
	require.NoError(t, err)
	require.Len(t, starts.cfgs, 1)
	assert.Equal(t, 2, starts.cfgs[0].GOMAXPROCS)
	assert.Nil(t, starts.cfgs[0].Account, "no accounting hierarchy prepared: no group")
	assert.Empty(t, r.ServerCounters(analysis.Standalone).Files())
	starts.started[0].stopErr = errors.New("stopping nginx: exit status 1")
	r.Stop(st)
	assert.Equal(t, 1, starts.started[0].stops)
	assert.Equal(t, []string{"stopping nginx: exit status 1"}, warnings)

	starts.fail = 2
	_, err = r.StartServers(context.Background(), stack.Config{})
	require.EqualError(t, err, "the server exited")
}

// TestStartSides: the standalone side starts standalone alone, with
// sockets under the results directory and a port of its own, in the
// rig's namespaces; its counters are empty without groups. A failure
// stops both sides, the topology side by the sweep's stop.
func TestStartSides(t *testing.T) {
	sa, err := topology.Lookup(analysis.Standalone)
	require.NoError(t, err)
	dir := t.TempDir()
	layout := topology.DefaultLayout(filepath.Join(dir, "sock"))
	layout.HTTP = "127.0.0.1:0"
	cfg := stack.Config{Layout: layout, Topologies: []topology.Topology{sa}, GOMAXPROCS: 1}
	top := &fakeStack{}
	var stopped []Servers
	stop := func(st Servers) { stopped = append(stopped, st); _ = st.Stop() }

	t.Run("started", func(t *testing.T) {
		starts := &fakeStarts{}
		r := New(Config{Dir: dir, Start: starts.start})
		r.pair = &netns.Pair{Server: "tb-srv", Client: "tb-cli"}
		d, err := r.StartSides(context.Background(), cfg, top, false, stop)
		require.NoError(t, err)
		require.Len(t, starts.cfgs, 1)
		got := starts.cfgs[0]
		assert.Equal(t, filepath.Join(dir, "standalone-side"), got.Dir)
		assert.Equal(t, filepath.Join(dir, "sock-standalone", "http.sock"), got.Layout.HTTPUnix)
		assert.DirExists(t, filepath.Join(dir, "sock-standalone"))
		assert.NotEqual(t, layout.HTTP, got.Layout.HTTP, "a port of its own")
		assert.Equal(t, "tb-srv", got.NetNS)
		assert.Equal(t, "tb-cli", got.ClientNetNS)
		assert.Equal(t, got.Layout, d.Layout)
		assert.Same(t, starts.started[0], d.Standalone)
		assert.Equal(t, [2]loadgen.Counters{}, d.Counters)
		assert.Contains(t, d.String(), "standalone side: fake 1 topologies; topology side: ")
		require.NoError(t, d.Stop())
		assert.Equal(t, 1, starts.started[0].stops)
		assert.Empty(t, stopped)
	})
	t.Run("parity refused", func(t *testing.T) {
		stopped = nil
		starts := &fakeStarts{refused: map[string]error{analysis.Standalone: errors.New("a 142-byte header block")}}
		r := New(Config{Dir: dir, Start: starts.start})
		_, err := r.StartSides(context.Background(), cfg, top, false, stop)
		require.EqualError(t, err, "standalone's side: parity check: a 142-byte header block")
		assert.Equal(t, 1, starts.started[0].stops, "the standalone side stopped")
		assert.Equal(t, []Servers{top}, stopped, "and the topology side")
	})
	t.Run("no weight groups for a duet", func(t *testing.T) {
		stopped = nil
		starts := &fakeStarts{}
		r := New(Config{Dir: dir, Start: starts.start})
		_, err := r.StartSides(context.Background(), cfg, top, true, stop)
		require.ErrorContains(t, err, "the servers' two sides need the cpu controller's groups")
		assert.Empty(t, starts.cfgs, "nothing started")
		assert.Equal(t, []Servers{top}, stopped)
	})
}

// TestStandalonePortHeld: a port held is skipped, and a host with every
// port held says so.
func TestStandalonePortHeld(t *testing.T) {
	var held []net.Listener
	t.Cleanup(func() {
		for _, ln := range held {
			ln.Close()
		}
	})
	first, err := standalonePort("127.0.0.1:8080", 18080)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", first)
	require.NoError(t, err)
	held = append(held, ln)
	next, err := standalonePort("127.0.0.1:1", 18080)
	require.NoError(t, err)
	assert.Greater(t, next, first)
	_, err = standalonePort("[::1]", 18080)
	assert.ErrorContains(t, err, "the servers' address")
}

// TestServerCounters: a pool's counter files are its own side's:
// standalone's own where it has one, else the block's group and its
// parts; read through the harness's root from a client namespace.
func TestServerCounters(t *testing.T) {
	acct := &cgroup.Hierarchy{Root: "/sys/fs/cgroup/cpuacct"}
	r := New(Config{})
	r.acct = acct
	r.group = &cgroup.Group{Dir: "/sys/fs/cgroup/cpuacct/g"}
	topo := r.ServerCounters("nginx-http")
	require.NotEmpty(t, topo.Total)
	assert.Equal(t, r.group.UsageFile(), topo.Total)
	assert.Equal(t, topo, r.ServerCounters(analysis.Standalone), "no standalone side: the block's")
	r.standaloneCounters = loadgen.Counters{Total: "/own"}
	assert.Equal(t, "/own", r.ServerCounters(analysis.Standalone).Total)
	assert.Equal(t, topo, r.ServerCounters("nginx-http"))

	r.pair = &netns.Pair{Client: "tb-cli"}
	assert.Equal(t, fmt.Sprintf("/proc/%d/root%s", os.Getpid(), r.group.UsageFile()), r.ServerCounters("nginx-http").Total)
	assert.Empty(t, r.counterPath(""))
	r.removeServersGroup()
	assert.Empty(t, r.ServerCounters(analysis.Standalone).Files(), "the block's end ends its counters")
	var none *Rig
	assert.Empty(t, none.ServerCounters("nginx-http").Files())
}

// TestLoadQuota: the load's quota is its own group's where the sweep
// placed it in one, none on a cluster.
func TestLoadQuota(t *testing.T) {
	r := New(Config{LoadCgroup: &cgroup.Group{CPUs: 0.5}})
	assert.InDelta(t, 0.5, r.LoadQuota(), 1e-9)
	r.cl = &clusterRun{}
	assert.Zero(t, r.LoadQuota(), "the load runs on other machines")
	assert.True(t, r.OnCluster())
	assert.False(t, New(Config{}).OnCluster())
}

// TestCountsUpstream: the servers' connects are nginx's upstream ones
// only in a namespace of the run's own and to a server on TCP.
func TestCountsUpstream(t *testing.T) {
	l := topology.DefaultLayout(t.TempDir())
	tcp, err := topology.Lookup("nginx-http")
	require.NoError(t, err)
	unix, err := topology.Lookup("nginx-fcgi-unix")
	require.NoError(t, err)
	sa, err := topology.Lookup(analysis.Standalone)
	require.NoError(t, err)
	r := New(Config{})
	assert.False(t, r.CountsUpstream(tcp, l), "a shared namespace")
	r.pair = &netns.Pair{Server: "tb-srv"}
	assert.True(t, r.CountsUpstream(tcp, l))
	assert.False(t, r.CountsUpstream(unix, l), "a unix socket is no connect")
	assert.False(t, r.CountsUpstream(sa, l), "no nginx")
}

// TestReadNet: the counters of a real process's namespace are read; a
// block with no process of this harness reads none.
func TestReadNet(t *testing.T) {
	r := New(Config{})
	assert.False(t, r.ReadNet(elsewhere{}).ok)
	before := r.ReadNet(self{})
	require.True(t, before.ok)
	after := r.ReadNet(self{})
	n := NetRecord(before, after, false, false)
	require.NotNil(t, n)
	assert.GreaterOrEqual(t, n.ListenOverflows, int64(0))
}

// self is servers whose server is this test process.
type self struct{ elsewhere }

func (self) ServerPid() int { return os.Getpid() }

// TestSettleAndSample: this process, idle, settles at once, and its CPU
// time and the machine's are read from /proc.
func TestSettleAndSample(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for this process to be idle")
	}
	st := New(Config{}).Settle(context.Background(), self{})
	require.NotNil(t, st)
	assert.Positive(t, st.ServerRSS)
	assert.Zero(t, st.NginxRSS)
	sm := TakeSample(context.Background(), ProcFS, fakeCPU{server: procstat.Times{User: time.Second}})
	require.NoError(t, sm.err)
	assert.True(t, sm.serverOK)
	assert.Positive(t, sm.stat.All.Busy())
}

package rig

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

// TestCreateNetns: a real pair of namespaces, the servers' end the one
// address the load may go to, both given the settings asked for, and
// gone once closed.
func TestCreateNetns(t *testing.T) {
	testenv.NeedNetns(t)
	r := New(Config{})
	sysctls := map[string]string{"net.core.somaxconn": "8192"}
	require.NoError(t, r.CreateNetns(context.Background(), 0, sysctls))
	t.Cleanup(r.CloseNetns)
	require.True(t, r.Isolated())
	assert.NotEmpty(t, r.ServerNS())
	assert.NotEqual(t, r.ServerNS(), r.ClientNS())
	assert.True(t, r.LoadTarget().IsValid())
	assert.Equal(t, sysctls, r.NetnsSysctls())
	out, err := exec.Command("ip", "netns", "exec", r.ClientNS(), "cat", "/proc/sys/net/core/somaxconn").Output()
	require.NoError(t, err)
	assert.Equal(t, "8192\n", string(out))
	server := r.ServerNS()
	r.CloseNetns()
	assert.NoFileExists(t, filepath.Join("/run/netns", server))
}

// TestStartSidesWeighted: a duet's two sides in real groups of equal CPU
// weight: the standalone side's accounting and weight groups, the
// topology side's weight group with its running server moved into it,
// every group gone once the sides stop.
func TestStartSidesWeighted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real cgroups")
	}
	if _, err := cgroup.Find(); err != nil || os.Geteuid() != 0 {
		t.Skipf("no weight groups here (%v, euid %d)", err, os.Geteuid())
	}
	r := New(Config{Dir: t.TempDir(), Start: (&fakeStarts{}).start})
	r.PrepareAccounting(false)
	require.NoError(t, r.PrepareWeights())
	sleep := exec.Command("sleep", "30")
	require.NoError(t, sleep.Start())
	t.Cleanup(func() { _ = sleep.Process.Kill(); _ = sleep.Wait() })
	sa, err := topology.Lookup(analysis.Standalone)
	require.NoError(t, err)
	top := &pidStack{pid: sleep.Process.Pid}
	d, err := r.StartSides(context.Background(), stack.Config{Layout: topology.DefaultLayout(t.TempDir()), Topologies: []topology.Topology{sa}},
		top, true, func(Servers) { t.Error("no side fails") })
	require.NoError(t, err)
	require.NotEmpty(t, d.groups)
	for _, g := range d.groups {
		assert.DirExists(t, g.Dir)
	}
	tw := d.groups[len(d.groups)-1]
	w, err := tw.Weight()
	require.NoError(t, err)
	assert.Positive(t, w)
	assert.Contains(t, weightNote(tw), fmt.Sprint(w))
	in, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", sleep.Process.Pid))
	require.NoError(t, err)
	assert.Contains(t, string(in), filepath.Base(tw.Dir), "the topology side's server moved into its weight group")
	_ = sleep.Process.Kill()
	_ = sleep.Wait()
	require.NoError(t, d.Stop())
	for _, g := range d.groups {
		assert.NoDirExists(t, g.Dir, "removed with the sides")
	}
}

// pidStack is a topology side whose server is process pid.
type pidStack struct {
	fakeStack
	pid int
}

func (p *pidStack) ServerPid() int { return p.pid }

// TestPrepareAccountingElsewhere: servers elsewhere get no groups here,
// and no note about /proc either.
func TestPrepareAccountingElsewhere(t *testing.T) {
	var log testenv.Buffer
	r := New(Config{Log: &log})
	r.PrepareAccounting(true)
	assert.Nil(t, r.acct)
	assert.Empty(t, log.String())
	assert.Nil(t, r.newServersGroup(), "no group without a hierarchy")
}

// TestSpeedProbes: real probes on every CPU allowed, each spinning from
// the start, so a span after it has both sides' speed; none are left
// once stopped.
func TestSpeedProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the probes")
	}
	if os.Geteuid() != 0 {
		t.Skip("the probes' real-time priority needs root")
	}
	r := New(Config{})
	began := time.Now()
	require.NoError(t, r.StartSpeedProbes(context.Background(), testenv.TopobenchBin(t)))
	t.Cleanup(r.StopSpeedProbes)
	time.Sleep(time.Second)
	sp := r.speedOf(cpuset.CPUSet{}, cpuset.CPUSet{}, began, time.Now())
	require.NotNil(t, sp)
	assert.Positive(t, sp.Servers)
	assert.Positive(t, sp.Load)
	r.StopSpeedProbes()
	for _, pr := range r.probes.probes {
		assert.True(t, pr.proc.Exited(), "CPU %d's probe", pr.cpu)
	}
}

// TestJoinTree: a process and its children move into a real group; no
// server (pid 0) moves nothing; a group whose weight cannot be read says
// so on the progress line.
func TestJoinTree(t *testing.T) {
	assert.NoError(t, joinTree(nil, 0), "no such server")
	assert.Contains(t, weightNote(&cgroup.Group{Dir: t.TempDir()}), "(unread: ")
	if testing.Short() {
		t.Skip("-short: no real cgroups")
	}
	h, err := cgroup.FindAccounting()
	if err != nil || os.Geteuid() != 0 {
		t.Skipf("no accounting groups here (%v, euid %d)", err, os.Geteuid())
	}
	g, err := cgroup.NewAccount(h, fmt.Sprint("topobench-test-join-", os.Getpid()))
	require.NoError(t, err)
	sh := exec.Command("sh", "-c", "sleep 30 & wait")
	require.NoError(t, sh.Start())
	var pids []int
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = sh.Process.Kill()
		_ = sh.Wait()
		assert.NoError(t, g.Remove(5*time.Second))
	})
	time.Sleep(100 * time.Millisecond) // the shell forks its sleep
	require.NoError(t, joinTree(g, sh.Process.Pid))
	tree, err := ProcFS.Tree(sh.Process.Pid)
	require.NoError(t, err)
	for _, p := range tree.Procs {
		pids = append(pids, p.Pid)
	}
	require.GreaterOrEqual(t, len(pids), 2, "the shell and its sleep")
	for _, pid := range pids {
		in, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		require.NoError(t, err)
		assert.Contains(t, string(in), filepath.Base(g.Dir), "pid %d", pid)
	}
}

package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/topology"
)

// TestServersJoinAccount starts the real servers, cmd/hello and nginx
// with two workers, in an accounting group: every process of both is in
// it, and requests through nginx are counted in its CPU time. The group
// empties when they stop, and is removed.
func TestServersJoinAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds cmd/hello and starts nginx")
	}
	h, err := cgroup.FindAccounting()
	if err != nil {
		t.Skipf("the kernel cannot count a group's CPU time: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	g, err := cgroup.NewAccount(h, fmt.Sprintf("topobench-stack-test-%d", os.Getpid()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Remove(5 * time.Second) })
	dir, bin, l := helloAt(t)
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: tops(t, "standalone", "nginx-http"), GOMAXPROCS: 1, HelloBin: bin,
		NginxWorkers: 2, Account: g,
	})
	require.NoError(t, err)
	defer st.Stop()

	in, err := g.Procs()
	require.NoError(t, err)
	for _, root := range []int{st.ServerPid(), st.NginxPid()} {
		tree, err := procfs.Tree(root)
		require.NoError(t, err)
		for _, p := range tree.Procs {
			assert.True(t, slices.Contains(in, p.Pid), "process %d of %d not in the group %v", p.Pid, root, in)
		}
	}
	assert.GreaterOrEqual(t, len(in), 4, "cmd/hello, nginx's master and two workers")

	procCPU := func() time.Duration {
		sv, err := st.ServerCPU(context.Background())
		require.NoError(t, err)
		ng, err := st.NginxCPU(context.Background())
		require.NoError(t, err)
		return sv.Total() + ng.Total()
	}
	procBefore := procCPU()
	before, err := st.ServersCPU(context.Background())
	require.NoError(t, err)
	top, err := topology.Lookup("nginx-http")
	require.NoError(t, err)
	for range 2000 {
		resp, err := http.Get(l.URL(top))
		require.NoError(t, err)
		resp.Body.Close()
	}
	after, err := st.ServersCPU(context.Background())
	require.NoError(t, err)
	procAfter := procCPU()
	t.Logf("2000 requests through nginx: %s of the servers' CPU by their group, %s by /proc's ticks", after-before, procAfter-procBefore)
	assert.Greater(t, after-before, time.Duration(0))
	// The group holds every server process: it counts what /proc counts,
	// within /proc's ticks (10 ms a process) and 10%.
	assert.InDelta(t, (procAfter - procBefore).Seconds(), (after - before).Seconds(), 0.04+0.1*(procAfter-procBefore).Seconds())

	require.NoError(t, st.Stop())
	require.NoError(t, g.Remove(5*time.Second))
	assert.NoDirExists(t, g.Dir)

	_, err = (&Stack{}).ServersCPU(context.Background())
	assert.ErrorIs(t, err, ErrNoAccount)
}

package sweep

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// TestLoadBoundUnderCgroupCap runs one real cell twice — wrk on CPU 0,
// cmd/hello on CPU 1 with 200 µs of handler work a request — once with
// wrk in a control group capped at 0.02 CPU and once without: the capped
// run must be flagged load-bound (the progress line says so, the record
// holds the quota it was measured against and how often the kernel
// throttled it), the free one must not (it needs about 5% of its CPU for
// the few thousand requests a second cmd/hello can answer), and the group
// is gone afterwards. At 0.05 CPU a run on a busy machine once used 53% of
// the quota on average yet was throttled in 29% of the periods: bursts
// run out of a quota that the average does not reach, which is why the
// rule counts throttled periods too.
func TestLoadBoundUnderCgroupCap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs cmd/hello and wrk under a cgroup")
	}
	h, err := cgroup.Find()
	if err != nil {
		t.Skipf("the kernel cannot cap a process's CPU here: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("creating a cgroup needs root")
	}
	wrkBin, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("needs wrk")
	}
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	if allowed.Len() < 2 {
		t.Skip("needs 2 CPUs: one for wrk, one for cmd/hello")
	}
	cpus := allowed.CPUs()
	hello := testenv.HelloBin(t)

	sweepOnce := func(t *testing.T, g *cgroup.Group) (results.Run, string) {
		return sweepCapped(t, cpus, hello, wrkBin, g)
	}

	// A test binary killed before its cleanup left its group: empty once
	// its processes died, removed here.
	const prefix = "topobench-test-load-"
	require.NoError(t, cgroup.RemoveStale(h, prefix))
	t.Run("capped at 0.02 CPU", func(t *testing.T) {
		g, err := cgroup.New(h, fmt.Sprint(prefix, os.Getpid()), 0.02)
		require.NoError(t, err)
		t.Cleanup(func() {
			assert.NoError(t, g.Remove(5*time.Second))
			assert.NoDirExists(t, g.Dir)
		})
		before, err := g.Stat()
		require.NoError(t, err)
		r, progress := sweepOnce(t, g)
		after, err := g.Stat()
		require.NoError(t, err)
		d := after.Sub(before)
		t.Logf("throttled in %d of %d periods, %s", d.Throttled, d.Periods, d.ThrottledTime)
		assert.Positive(t, d.Throttled, "the kernel throttled the load generator")
		assert.True(t, r.LoadBound(), "share %.3f", r.LoadShare)
		assert.Positive(t, r.LoadThrottled)
		assert.InDelta(t, 0.02, r.LoadQuota, 1e-9)
		assert.Contains(t, progress, "LOAD-BOUND: the load generator used")
		assert.Contains(t, progress, "of its cgroup quota of 0.02 CPU")
	})
	t.Run("free", func(t *testing.T) {
		r, progress := sweepOnce(t, nil)
		assert.False(t, r.LoadBound(), "share %.3f", r.LoadShare)
		assert.Positive(t, r.LoadShare)
		assert.Zero(t, r.LoadQuota)
		assert.Zero(t, r.LoadThrottled)
		assert.NotContains(t, progress, "LOAD-BOUND")
	})
}

// sweepCapped sweeps one cell of standalone, wrk on cpus[0] in group g
// (nil: none) and cmd/hello on cpus[1], and returns its one run and the
// progress.
func sweepCapped(t *testing.T, cpus []int, hello, wrkBin string, g *cgroup.Group) (results.Run, string) {
	t.Helper()
	p := plan.DefaultPlan()
	p.Topologies = []string{"standalone"}
	p.GOMAXPROCS = []int{1}
	p.Connections = []int{20}
	p.Threads = 2
	p.Reps = 1
	p.Duration, p.Warmup = 3*time.Second, time.Second
	p.Schedules = []results.Schedule{{Work: 200 * time.Microsecond}}
	p.Isolation = results.IsolateNone
	p.PinLoad, p.PinServer = fmt.Sprint(cpus[0]), fmt.Sprint(cpus[1])
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var progress, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := Run(ctx, Options{Plan: p, Dir: dir, FreePorts: true, HelloBin: hello, WrkBin: wrkBin,
		Progress: &progress, Log: &log, LoadCgroup: g})
	require.NoError(t, err, "progress:\n%s\nlog:\n%s", progress.String(), log.String())
	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	r := runs[0]
	require.NotNil(t, r.Figures)
	require.NotNil(t, r.CPU)
	t.Logf("%.0f req/s, load %.3f s CPU, share %.3f (quota %g), throttled in %.0f%% of the periods", r.Figures.ReqPerSec, r.CPU.Load.Total(), r.LoadShare, r.LoadQuota, 100*r.LoadThrottled)
	return r, progress.String()
}

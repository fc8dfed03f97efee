package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// namespacesOf lists the network namespaces a harness with this pid made.
func namespacesOf(t *testing.T, pid int) []string {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil || os.Geteuid() != 0 {
		return nil
	}
	names, err := netns.List(context.Background())
	require.NoError(t, err)
	var ours []string
	for _, n := range names {
		if owner, ok := netns.ParseName(n); ok && owner == pid {
			ours = append(ours, n)
		}
	}
	return ours
}

// TestCompareIsolated runs a short real sweep with the servers and wrk in
// two namespaces on separate CPUs: parity holds through the veth, every
// record carries the CPU time of each process group, the machine's noise
// and the settling before the cell, and nothing is left behind.
func TestCompareIsolated(t *testing.T) {
	testenv.NeedNetns(t)
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "1",
		"-duration", "2s", "-warmup", "1s", "-connections", "50", "-threads", "2",
		"-isolate", "netns", "-cpus", "auto", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "parity: 2 topologies answer identically")
	assert.Contains(t, stdout.String(), "isolation: servers in network namespace tb-"+strconv.Itoa(os.Getpid()))

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, results.IsolateNetns, env.Plan.Isolation)
	if env.CPUs >= 2 {
		// -cpus auto calibrated the split through the namespaces.
		require.NotNil(t, env.CPUSplit)
		assert.Len(t, env.CPUSplit.Figures, 2)
		assert.Equal(t, env.CPUSplit.Load, env.Plan.PinLoad)
		assert.Equal(t, env.CPUSplit.Server, env.Plan.PinServer)
		assert.NotEmpty(t, env.Plan.PinLoad)
		assert.NotEmpty(t, env.Plan.PinServer)
		assert.Contains(t, stdout.String(), "cpus auto: load generator on "+env.Plan.PinLoad)
	}
	require.Len(t, runs, 2)
	for _, r := range runs {
		name := r.Name()
		require.False(t, r.Failed(), "%s: %s", name, r.Error)
		assert.True(t, strings.HasPrefix(r.URL, "http://"+netns.ServerAddr+":"), "%s: load over the veth, not %s", name, r.URL)
		assert.Equal(t, []string{"ip", "netns", "exec"}, r.Command[:3], name)

		require.NotNil(t, r.CPU, name)
		// wrk and the server worked for 2s; neither can have used more
		// than the window's wall time on every CPU.
		wall := r.Wall.Seconds() * float64(env.CPUs)
		assert.Positive(t, r.CPU.Load.Total(), name)
		assert.Less(t, r.CPU.Load.Total(), wall, name)
		assert.Positive(t, r.CPU.Server.Total(), name)
		assert.Less(t, r.CPU.Server.Total(), wall, name)
		// nginx runs for the whole block, but it is no part of
		// standalone's path: its idle time is not standalone's cost.
		if r.Topology == "nginx-http" {
			require.NotNil(t, r.CPU.Nginx, name)
			assert.Positive(t, r.CPU.Nginx.Total(), name)
		} else {
			assert.Nil(t, r.CPU.Nginx, name)
		}

		require.NotNil(t, r.Noise, name)
		assert.InDelta(t, r.Wall.Seconds(), r.Noise.Window.Seconds(), 1, name)
		assert.Positive(t, r.Noise.Busy, name)
		assert.GreaterOrEqual(t, r.Noise.Others, 0.0, name)
		assert.LessOrEqual(t, r.Noise.Others, r.Noise.Busy, name)

		require.NotNil(t, r.Settle, name)
		assert.Positive(t, r.Settle.Waited, name)
		assert.LessOrEqual(t, r.Settle.Waited, 11*time.Second, name)
		assert.Positive(t, r.Settle.ServerRSS, name)
	}
	assert.Empty(t, namespacesOf(t, os.Getpid()), "the run's namespaces must be gone")
	assert.Empty(t, leftovers(t, dir))
}

// TestCompareKilledIsolated kills an isolated harness with SIGKILL in the
// middle of a sweep, so nothing of its own removes its namespaces; the
// next run recognises them as a dead run's and removes them, with anything
// still inside.
func TestCompareKilledIsolated(t *testing.T) {
	testenv.NeedNetns(t)
	bin := buildTopobench(t)

	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-preset", "2013",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "2",
		"-duration", "1s", "-warmup", "0s", "-connections", "20", "-threads", "2",
		"-isolate", "netns", "-out", dir)
	stderr := proc.NewTail(64 << 10)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(pipe)
	var seen []string
	for sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "req/s") {
			break
		}
	}
	require.NotEmpty(t, namespacesOf(t, cmd.Process.Pid), "output:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	left := namespacesOf(t, cmd.Process.Pid)
	require.Len(t, left, 2, "a killed harness leaves its pair")

	// A later run cleans them up before it creates its own.
	var rout, rerr bytes.Buffer
	err = run(ctx, []string{"compare", "-preset", "2013", "-topologies", "nginx-return", "-gomaxprocs", "1", "-reps", "1",
		"-duration", "1s", "-warmup", "0s", "-connections", "20", "-threads", "2",
		"-isolate", "netns", "-out", filepath.Join(testenv.ShortDir(t), "r2")}, &rout, &rerr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", rout.String(), rerr.String())
	assert.Contains(t, rerr.String(), "removed network namespaces left by runs that died")
	for _, n := range left {
		assert.Contains(t, rerr.String(), n)
	}
	assert.Empty(t, namespacesOf(t, cmd.Process.Pid))
	assert.Empty(t, namespacesOf(t, os.Getpid()))
	// Servers killed with their harness (parent-death signals) or with the
	// namespace: none still runs from the first run's directory.
	require.Eventually(t, func() bool { return len(leftovers(t, dir)) == 0 }, 10*time.Second, 100*time.Millisecond, "%v", leftovers(t, dir))
}

// TestCompareLinkDelay asks for a 1ms delay on each end of the veth. Where
// the kernel has netem, every request pays the 2ms round trip; where it has
// not, the run is refused in one line naming the flag, before it creates a
// results directory or leaves a namespace.
func TestCompareLinkDelay(t *testing.T) {
	testenv.NeedNetns(t)
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-topologies", "standalone", "-gomaxprocs", "1", "-reps", "1",
		"-duration", "1s", "-warmup", "0", "-connections", "4", "-threads", "1",
		"-isolate", "netns", "-link-delay", "1ms", "-out", dir}, &stdout, &stderr)
	assert.Empty(t, namespacesOf(t, os.Getpid()), "the run's namespaces must be gone")
	if err != nil {
		t.Log(err)
		assert.Contains(t, err.Error(), "-link-delay: 1ms: ")
		assert.Contains(t, err.Error(), "sch_netem")
		assert.Equal(t, 2, exitCode(err))
		assert.NoDirExists(t, dir)
		return
	}
	assert.Contains(t, stdout.String(), "delaying each packet 1ms on each end")
	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, time.Millisecond, env.Plan.LinkDelay)
	require.Len(t, runs, 1)
	f := runs[0].Figures
	require.NotNil(t, f)
	assert.GreaterOrEqual(t, f.P50, 2*time.Millisecond, "a request crosses the link twice")
}

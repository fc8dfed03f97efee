package cgroup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures: proc-cgroup-hybrid.txt, proc-cgroup-v1-group.txt,
// cpu.stat.v1-throttled.txt and cpu.stat.v2-root.txt were captured on a
// hybrid (v1 cpu controller) machine; the v2 throttling lines and the v2
// group path follow the kernel's cgroup-v2 documentation (no v2 cpu
// controller was at hand to capture them from).
func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseProcCgroup(t *testing.T) {
	for _, tc := range []struct {
		file string
		path string
		v2   bool
	}{
		{"proc-cgroup-hybrid.txt", "/", false},
		{"proc-cgroup-v1-group.txt", "/tbcapture", false},
		{"proc-cgroup-v2.txt", "/system.slice/docker-4dee9ed4.scope", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path, v2, err := ParseProcCgroup(open(t, tc.file))
			require.NoError(t, err)
			assert.Equal(t, tc.path, path)
			assert.Equal(t, tc.v2, v2)
		})
	}
	_, _, err := ParseProcCgroup(strings.NewReader("4:memory:/x\n"))
	assert.Error(t, err)
	path, v2, err := ParseProcCgroup(strings.NewReader("3:cpu,cpuacct:/a/b\n0::/\n"))
	require.NoError(t, err)
	assert.Equal(t, "/a/b", path)
	assert.False(t, v2)
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Stat
	}{
		{"cpu.stat.v1-throttled.txt", Stat{Periods: 10, Throttled: 10, ThrottledTime: 498823762}},
		{"cpu.stat.v2-throttled-doc.txt", Stat{Periods: 10, Throttled: 9, ThrottledTime: 801284 * time.Microsecond}},
		{"cpu.stat.v2-root.txt", Stat{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			s, err := ParseStat(open(t, tc.file))
			require.NoError(t, err)
			assert.Equal(t, tc.want, s)
		})
	}
	_, err := ParseStat(strings.NewReader("nr_periods many\n"))
	assert.ErrorContains(t, err, "nr_periods")
}

func TestParseCPUMax(t *testing.T) {
	for _, tc := range []struct {
		in   string
		cpus float64
		ok   bool
		err  bool
	}{
		{"max 100000\n", 0, false, false},
		{"20000 100000\n", 0.2, true, false},
		{"150000 50000", 3, true, false},
		{"20000", 0, false, true},
		{"x 100000", 0, false, true},
		{"20000 0", 0, false, true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			cpus, ok, err := ParseCPUMax(strings.NewReader(tc.in))
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.ok, ok)
			assert.InDelta(t, tc.cpus, cpus, 1e-9)
		})
	}
}

// TestLimitAlong: the tightest quota on the way from a group to the root
// counts, and a v1 quota of -1 is no limit.
func TestLimitAlong(t *testing.T) {
	root := t.TempDir()
	mk := func(dir, quota string) {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cpu.cfs_quota_us"), []byte(quota+"\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cpu.cfs_period_us"), []byte("100000\n"), 0o644))
	}
	mk(root, "-1")
	mk(filepath.Join(root, "a"), "150000")
	mk(filepath.Join(root, "a", "b"), "-1")
	h := Hierarchy{Root: root}
	cpus, ok, err := limitAlong(h, "/a/b")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.InDelta(t, 1.5, cpus, 1e-9)
	_, ok, err = limitAlong(h, "/")
	require.NoError(t, err)
	assert.False(t, ok)
	// A path the mount does not show (another namespace) reads the root.
	_, ok, err = limitAlong(h, "/elsewhere/x")
	require.NoError(t, err)
	assert.False(t, ok)
}

// needGroups skips unless this process can create cpu groups, saying why.
func needGroups(t *testing.T) Hierarchy { return need(t, Find) }

// need skips unless this process can create groups where find finds
// them, saying why.
func need(t *testing.T, find func() (Hierarchy, error)) Hierarchy {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: no real cgroups")
	}
	h, err := find()
	if err != nil {
		t.Skipf("the kernel cannot: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	return h
}

// busyChild starts a shell loop that spins until the test kills it.
func busyChild(t *testing.T) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
	require.NoError(t, cmd.Start())
	return cmd
}

// TestGroupCapsCPU: a busy child moved into a group capped at 0.2 CPU
// uses about 0.2 CPU, the kernel reports it throttled, Limit reads the
// cap from the child's /proc entry, and the group is gone after Remove.
func TestGroupCapsCPU(t *testing.T) {
	h := needGroups(t)
	name := fmt.Sprintf("topobench-test-%d", os.Getpid())
	g, err := New(h, name, 0.2)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Remove(5 * time.Second) })

	cmd := busyChild(t)
	require.NoError(t, g.Join(cmd.Process.Pid))
	pids, err := g.Procs()
	require.NoError(t, err)
	assert.Equal(t, []int{cmd.Process.Pid}, pids)
	cpus, ok, err := Limit(h, cmd.Process.Pid)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.InDelta(t, 0.2, cpus, 1e-9)

	before, err := g.Stat()
	require.NoError(t, err)
	start := time.Now()
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	wall := time.Since(start)
	after, err := g.Stat()
	require.NoError(t, err)
	used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	share := used.Seconds() / wall.Seconds()
	d := after.Sub(before)
	t.Logf("busy child under 0.2 CPU: %.3f CPU over %s; throttled in %d of %d periods, %s in all", share, wall.Round(time.Millisecond), d.Throttled, d.Periods, d.ThrottledTime)
	assert.InDelta(t, 0.2, share, 0.05)
	assert.Positive(t, d.Throttled)

	require.NoError(t, g.Remove(5*time.Second))
	assert.NoDirExists(t, g.Dir)
}

// TestRemoveStale removes an empty group named for a process that is gone
// and keeps one named for a live process.
func TestRemoveStale(t *testing.T) {
	h := needGroups(t)
	prefix := fmt.Sprintf("topobench-stale%d-", os.Getpid())
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	dead := cmd.Process.Pid
	gone, err := New(h, fmt.Sprint(prefix, dead), 1)
	require.NoError(t, err)
	live, err := New(h, fmt.Sprint(prefix, os.Getpid()), 1)
	require.NoError(t, err)
	t.Cleanup(func() { _ = gone.Remove(time.Second); _ = live.Remove(time.Second) })
	require.NoError(t, RemoveStale(h, prefix))
	assert.NoDirExists(t, gone.Dir)
	assert.DirExists(t, live.Dir)
}

func TestNewRefuses(t *testing.T) {
	h := Hierarchy{Root: t.TempDir()}
	for _, tc := range []struct {
		name string
		cpus float64
	}{{"x", 0}, {"x", 0.001}, {"a/b", 1}, {"..", 1}, {"", 1}} {
		_, err := New(h, tc.name, tc.cpus)
		assert.Error(t, err, "%q %g", tc.name, tc.cpus)
	}
}

package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures: cpuacct.usage.v1.txt and cpu.stat.v2-hybrid-unified.txt
// were captured on this project's hybrid machine from one shell loop
// that was a member of a v1 cpuacct group and of a group of the unified
// hierarchy at once (both count 0.3398 s); cpu.stat.v2-throttled-doc.txt
// follows the kernel's cgroup-v2 documentation of cpu.stat.
func TestParseUsage(t *testing.T) {
	for _, tc := range []struct {
		file string
		want time.Duration
	}{
		{"cpuacct.usage.v1.txt", 339821569},
		{"cpu.stat.v2-hybrid-unified.txt", 339821 * time.Microsecond},
		{"cpu.stat.v2-throttled-doc.txt", 1014573 * time.Microsecond},
		{"cpu.stat.v2-root.txt", 10724325110 * time.Microsecond},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d, err := ParseUsage(open(t, tc.file))
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
		})
	}
	for _, bad := range []string{"", "x\n", "-5\n", "nr_periods 3\nnr_throttled 1\n", "usage_usec many\nuser_usec 1\n"} {
		t.Run(fmt.Sprintf("%q", bad), func(t *testing.T) {
			_, err := ParseUsage(strings.NewReader(bad))
			assert.Error(t, err)
		})
	}
	// The v1 throttling file is not a usage counter.
	_, err := ParseUsage(open(t, "cpu.stat.v1-throttled.txt"))
	assert.Error(t, err)
}

// TestAccountCountsCPU: a busy child joined to an accounting group is
// charged to it, read around a real window, as much as its own rusage
// says it ran; the group is gone after Remove. On a hybrid machine the
// unified (v2) hierarchy is tried as well.
func TestAccountCountsCPU(t *testing.T) {
	h := need(t, FindAccounting)
	hs := []Hierarchy{h}
	if u := "/sys/fs/cgroup/unified"; !h.V2 {
		if ty, err := fsType(u); err == nil && ty == cgroup2Magic {
			hs = append(hs, Hierarchy{Root: u, V2: true})
		}
	}
	for _, h := range hs {
		t.Run(fmt.Sprintf("v2=%v", h.V2), func(t *testing.T) {
			g, err := NewAccount(h, fmt.Sprintf("topobench-acct-test-%d", os.Getpid()))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Remove(5 * time.Second) })
			zero, err := g.Usage()
			require.NoError(t, err)
			assert.Zero(t, zero, "a new group has used nothing")

			cmd := busyChild(t)
			require.NoError(t, g.Join(cmd.Process.Pid))
			before, err := g.Usage()
			require.NoError(t, err)
			start := time.Now()
			time.Sleep(time.Second)
			window, err := g.Usage()
			require.NoError(t, err)
			wall := time.Since(start)
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			after, err := g.Usage()
			require.NoError(t, err)
			used := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			t.Logf("%s: %s over a %s window (busy machine: the loop gets what the scheduler gives it); %s in all, rusage %s",
				g.UsageFile(), window-before, wall.Round(time.Millisecond), after, used)
			assert.Positive(t, window-before)
			assert.LessOrEqual(t, (window - before).Seconds(), wall.Seconds()*1.02, "one thread cannot use more than the wall time")
			// rusage counts in ticks on some kernels: within 20 ms plus 5%.
			assert.InDelta(t, used.Seconds(), after.Seconds(), 0.02+0.05*used.Seconds())

			require.NoError(t, g.Remove(5*time.Second))
			assert.NoDirExists(t, g.Dir)
		})
	}
}

// TestNewAccountReplacesLeftover: an empty group of the same name (a run
// killed before its Remove) is replaced; bad names are refused.
func TestNewAccountReplacesLeftover(t *testing.T) {
	root := t.TempDir()
	h := Hierarchy{Root: root}
	require.NoError(t, os.Mkdir(filepath.Join(root, "left"), 0o755))
	g, err := NewAccount(h, "left")
	require.NoError(t, err)
	assert.DirExists(t, g.Dir)
	assert.Equal(t, filepath.Join(root, "left", "cpuacct.usage"), g.UsageFile())
	for _, name := range []string{"", "a/b", "..", "."} {
		_, err := NewAccount(h, name)
		assert.Error(t, err, "%q", name)
	}
}

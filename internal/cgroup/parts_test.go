package cgroup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAccountsOnly: a hierarchy that also schedules (cpu.shares in its
// root, or v2) is not split into parts.
func TestAccountsOnly(t *testing.T) {
	acct, both := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(both, "cpu.shares"), []byte("1024\n"), 0o644))
	for _, tc := range []struct {
		name string
		h    Hierarchy
		want bool
	}{
		{"cpuacct alone", Hierarchy{Root: acct}, true},
		{"cpu,cpuacct", Hierarchy{Root: both}, false},
		{"v2", Hierarchy{Root: acct, V2: true}, false},
		{"none", Hierarchy{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.h.AccountsOnly()) })
	}
}

// TestPartsCountApart: on a real accounting-only hierarchy, a busy child
// in one part is counted by that part and by the parent, not by the
// other part, and its user and system time are read; Remove takes the parts with the group, and RemoveStale a
// killed run's group with its parts.
func TestPartsCountApart(t *testing.T) {
	h := need(t, FindAccounting)
	if !h.AccountsOnly() {
		t.Skipf("%s also schedules: no parts there", h.Root)
	}
	g, err := NewAccount(h, fmt.Sprintf("topobench-parts-test-%d", os.Getpid()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Remove(5 * time.Second) })
	ng, err := g.NewPart("nginx")
	require.NoError(t, err)
	srv, err := g.NewPart("server")
	require.NoError(t, err)
	_, err = g.NewPart("../x")
	require.ErrorContains(t, err, "one path element")

	cmd := busyChild(t)
	require.NoError(t, ng.Join(cmd.Process.Pid))
	time.Sleep(500 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	read := func(path string) time.Duration {
		f, err := os.Open(path)
		require.NoError(t, err)
		defer f.Close()
		d, err := ParseUsage(f)
		require.NoError(t, err)
		return d
	}
	parent, nginx := read(g.UsageFile()), read(ng.UsageFile())
	user, sys := read(ng.UserFile()), read(ng.SystemFile())
	assert.Positive(t, nginx)
	assert.Equal(t, parent, nginx, "the parent counts its parts' time")
	assert.Zero(t, read(srv.UsageFile()), "the other part ran nothing")
	// The kernel keeps user and system time from its ticks: they only
	// divide the total.
	assert.Positive(t, user+sys)
	t.Logf("part: %s exact, %s user + %s system by the ticks", nginx, user, sys)

	require.NoError(t, g.Remove(5*time.Second))
	assert.NoDirExists(t, g.Dir)

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale, err := NewAccount(h, fmt.Sprint("topobench-parts-stale-", dead.Process.Pid))
	require.NoError(t, err)
	t.Cleanup(func() { _ = stale.Remove(time.Second) })
	_, err = stale.NewPart("nginx")
	require.NoError(t, err)
	require.NoError(t, RemoveStale(h, "topobench-parts-stale-"))
	assert.NoDirExists(t, stale.Dir, "a killed run's group goes with its parts")
}

package rig

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cgroup"
)

// TestServersGroupLifecycle: with real control groups, a run removes the
// servers' group a killed run left, creates one per start of the
// servers, hands its counter file to the load session, and removes it
// when they stop. Without a kernel that can, it says why and reads /proc.
func TestServersGroupLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real cgroups")
	}
	var log bytes.Buffer
	var warnings []string
	s := New(Config{Log: &log, Warn: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }})
	h, err := cgroup.FindAccounting()
	if err != nil || os.Geteuid() != 0 {
		s.PrepareAccounting(false)
		assert.Nil(t, s.acct)
		assert.Contains(t, log.String(), "the servers' CPU time comes from /proc's 10 ms ticks")
		t.Skipf("no accounting groups here (%v, euid %d): checked the note only", err, os.Geteuid())
	}
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	stale, err := cgroup.NewAccount(h, fmt.Sprint(serversGroupPrefix, dead.Process.Pid))
	require.NoError(t, err)
	t.Cleanup(func() { _ = stale.Remove(0) })

	s.PrepareAccounting(false)
	require.NotNil(t, s.acct)
	assert.NoDirExists(t, stale.Dir, "a killed run's group is removed at the start")

	g := s.newServersGroup()
	require.NotNil(t, g)
	t.Cleanup(func() { _ = g.Remove(0) })
	assert.Equal(t, filepath.Join(h.Root, fmt.Sprint(serversGroupPrefix, os.Getpid())), g.Dir)
	files := s.ServerCounters("nginx-http").Files()
	require.NotEmpty(t, files)
	assert.Equal(t, g.UsageFile(), files[0])
	if h.AccountsOnly() {
		// nginx's and the backend's time apart: the total, user and
		// system of each.
		require.Len(t, files, 7)
		assert.Equal(t, filepath.Join(g.Dir, "nginx", "cpuacct.usage"), files[1])
		assert.Equal(t, filepath.Join(g.Dir, "server", "cpuacct.usage_sys"), files[6])
	}
	for _, f := range files {
		_, err = os.Stat(f)
		require.NoError(t, err)
	}

	s.removeServersGroup()
	assert.NoDirExists(t, g.Dir, "the group goes with its parts")
	assert.Empty(t, s.ServerCounters("nginx-http").Files())
	assert.Empty(t, warnings)
}

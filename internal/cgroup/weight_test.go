package cgroup

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestWeightedGroupsShareEqually: on one CPU, a group with one busy
// process and a group with three, both of the default weight, each get
// about half of it, where the processes alone would split it 1 to 3.
func TestWeightedGroupsShareEqually(t *testing.T) {
	h := needGroups(t)
	acct := need(t, FindAccounting)
	var one, three *Group
	var acctOne, acctThree *Group
	for _, side := range []struct {
		name      string
		g, a      **Group
		processes int
	}{{"one", &one, &acctOne, 1}, {"three", &three, &acctThree, 3}} {
		name := fmt.Sprintf("topobench-weight-test-%s-%d", side.name, os.Getpid())
		g, err := NewWeighted(h, name)
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Remove(5 * time.Second) })
		w, err := g.Weight()
		require.NoError(t, err)
		if g.V2 {
			assert.Equal(t, DefaultWeightV2, w)
		} else {
			assert.Equal(t, DefaultSharesV1, w)
		}
		a := g
		if acct.Root != h.Root {
			a, err = NewAccount(acct, name)
			require.NoError(t, err)
			t.Cleanup(func() { _ = a.Remove(5 * time.Second) })
		}
		*side.g, *side.a = g, a
		var cpu0 unix.CPUSet
		cpu0.Set(0)
		for range side.processes {
			cmd := busyChild(t)
			t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() })
			require.NoError(t, unix.SchedSetaffinity(cmd.Process.Pid, &cpu0))
			require.NoError(t, g.Join(cmd.Process.Pid))
			if a != g {
				require.NoError(t, a.Join(cmd.Process.Pid))
			}
		}
	}
	time.Sleep(200 * time.Millisecond)
	u1, err := acctOne.Usage()
	require.NoError(t, err)
	u3, err := acctThree.Usage()
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond)
	v1, err := acctOne.Usage()
	require.NoError(t, err)
	v3, err := acctThree.Usage()
	require.NoError(t, err)
	share := float64(v1-u1) / float64(v1-u1+v3-u3)
	t.Logf("one process: %v, three: %v over 1.5 s on CPU 0: %.1f%% to the group of one", v1-u1, v3-u3, 100*share)
	assert.InDelta(t, 0.5, share, 0.1, "equal weights share the CPU equally, not by threads (1 in 4 would be 25%%)")
}

package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCommand(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
		want []string
	}{
		{"plain", Options{}, []string{"hello", "-addr", "x"}},
		{"pinned", Options{CPUs: "1"}, []string{"taskset", "-c", "1", "hello", "-addr", "x"}},
		{"netns", Options{NetNS: "tb-1-0-srv"}, []string{"ip", "netns", "exec", "tb-1-0-srv", "hello", "-addr", "x"}},
		{"both", Options{NetNS: "tb-1-0-srv", CPUs: "0-1,3"},
			[]string{"ip", "netns", "exec", "tb-1-0-srv", "taskset", "-c", "0-1,3", "hello", "-addr", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"-addr", "x"}
			assert.Equal(t, tt.want, Command("hello", args, tt.opt))
			assert.Equal(t, []string{"-addr", "x"}, args, "args must not be modified")
		})
	}
}

func TestBadCPUList(t *testing.T) {
	for _, list := range []string{"a", "0,", "-1", "1-", "0 1", "1-x"} {
		t.Run(list, func(t *testing.T) {
			_, err := Start(context.Background(), "true", nil, Options{CPUs: list})
			require.Error(t, err)
			assert.Contains(t, err.Error(), strconv.Quote(list))
		})
	}
}

// TestPinned runs a real child under taskset: it must see only the CPU it
// was given, and its pid must be the program's own, not taskset's.
func TestPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts taskset; skipped under -short")
	}
	if runtime.GOOS != "linux" {
		t.Skip("taskset and /proc are Linux only")
	}
	cpu := "0"
	var out bytes.Buffer
	p, err := Start(context.Background(), "grep", []string{"Cpus_allowed_list", "/proc/self/status"}, Options{CPUs: cpu, Stdout: &out})
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	assert.Equal(t, "Cpus_allowed_list:\t"+cpu, strings.TrimSpace(out.String()))
	assert.Equal(t, []string{"taskset", "-c", cpu, "grep", "Cpus_allowed_list", "/proc/self/status"}, p.Args)

	p, err = Start(context.Background(), "sleep", []string{"30"}, Options{CPUs: cpu})
	require.NoError(t, err)
	// taskset execs sleep in place; wait for the exec to happen.
	require.Eventually(t, func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid()) + "/comm")
		return err == nil && strings.TrimSpace(string(b)) == "sleep"
	}, 5*time.Second, 10*time.Millisecond)
	start := time.Now()
	require.NoError(t, p.Stop(syscall.SIGTERM, 5*time.Second))
	assert.Less(t, time.Since(start), 4*time.Second, "SIGTERM must reach sleep itself")
}

// TestGroup: with Group, what the child forked does not outlive it, whether
// it is stopped or exits on its own.
func TestGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts shells; skipped under -short")
	}
	childPid := func(t *testing.T, p *Proc) int {
		var pid int
		require.Eventually(t, func() bool {
			_, after, ok := strings.Cut(p.Tail(), "child ")
			if !ok {
				return false
			}
			pid, _ = strconv.Atoi(strings.TrimSpace(after))
			return pid > 0
		}, 5*time.Second, 10*time.Millisecond)
		return pid
	}
	gone := func(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }
	tests := []struct {
		name   string
		script string
		stop   bool
	}{
		{"stopped", `sleep 300 & echo "child $!" >&2; wait`, true},
		{"stopped, the child ignores SIGTERM", `(trap '' TERM; exec sleep 300) & echo "child $!" >&2; wait`, true},
		{"exits on its own", `(trap '' TERM; exec sleep 300) & echo "child $!" >&2; exit 0`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Start(context.Background(), "sh", []string{"-c", tt.script}, Options{Group: true, Grace: 500 * time.Millisecond})
			require.NoError(t, err)
			pid := childPid(t, p)
			require.False(t, gone(pid))
			if tt.stop {
				p.Stop(syscall.SIGTERM, 500*time.Millisecond)
			} else {
				<-p.Done()
			}
			assert.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "child %d still running", pid)
		})
	}

	// Without Group the child stays: the case Group exists for.
	p, err := Start(context.Background(), "sh", []string{"-c", `(trap '' TERM; exec sleep 300) & echo "child $!" >&2; exit 0`}, Options{Grace: 200 * time.Millisecond})
	require.NoError(t, err)
	pid := childPid(t, p)
	<-p.Done()
	assert.False(t, gone(pid))
	syscall.Kill(pid, syscall.SIGKILL)
}

// joinRecorder is a Joiner that records the pid it is given and fails
// with err when set.
type joinRecorder struct {
	pid int
	err error
}

func (j *joinRecorder) Join(pid int) error { j.pid = pid; return j.err }

// TestCgroupJoin: the joiner gets the child's own pid as soon as it has
// started; a joiner that fails stops the child and fails Start.
func TestCgroupJoin(t *testing.T) {
	ctx := context.Background()
	j := &joinRecorder{}
	p, err := Start(ctx, "sleep", []string{"0.1"}, Options{Cgroup: j})
	require.NoError(t, err)
	assert.Equal(t, p.Pid(), j.pid)
	require.NoError(t, p.Wait())

	bad := &joinRecorder{err: errors.New("permission denied")}
	_, err = Start(ctx, "sleep", []string{"10"}, Options{Cgroup: bad})
	require.ErrorContains(t, err, "permission denied")
	require.NotZero(t, bad.pid)
	// The child is gone: signal 0 finds no process.
	assert.Error(t, syscall.Kill(bad.pid, 0))
}

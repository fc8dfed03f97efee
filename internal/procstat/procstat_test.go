package procstat

import (
	"bufio"
	"context"
	"fmt"
	"io"
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
)

// helperEnv makes the test binary a CPU burner (see burnMain).
const helperEnv = "TB_PROCSTAT_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := burnMain(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// burnMain runs a helper mode:
//
//	burn MS [MB]   spend MS ms of CPU by its own clock (and touch MB MiB),
//	               print "done CPU" with the CPU it used since it started,
//	               then wait for stdin to close
//	tree           start "burn 200" and wait for it (reaped), start
//	               "burn 100" and keep it running, burn 300 itself, print
//	               "done", wait for stdin to close
func burnMain(mode string, args []string) error {
	switch mode {
	case "burn":
		ms, err := strconv.Atoi(args[0])
		if err != nil {
			return err
		}
		var keep []byte
		if len(args) > 1 {
			mb, err := strconv.Atoi(args[1])
			if err != nil {
				return err
			}
			keep = make([]byte, mb<<20)
			for i := range keep {
				keep[i] = byte(i)
			}
		}
		burn(time.Duration(ms) * time.Millisecond)
		fmt.Printf("done %d\n", selfCPU())
		io.Copy(io.Discard, os.Stdin)
		_ = keep[len(keep)/2:] // keep alive until here
		return nil
	case "tree":
		self, err := os.Executable()
		if err != nil {
			return err
		}
		reaped := burnCmd(self, "200")
		if err := reaped.Run(); err != nil {
			return fmt.Errorf("reaped child: %w", err)
		}
		live := burnCmd(self, "100")
		in, err := live.StdinPipe()
		if err != nil {
			return err
		}
		out, err := live.StdoutPipe()
		if err != nil {
			return err
		}
		if err := live.Start(); err != nil {
			return err
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			return fmt.Errorf("live child: %w", err)
		}
		burn(300 * time.Millisecond)
		fmt.Println("done")
		io.Copy(io.Discard, os.Stdin)
		in.Close()
		return live.Wait()
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

func burnCmd(self, ms string) *exec.Cmd {
	c := exec.Command(self, ms)
	c.Env = append(os.Environ(), helperEnv+"=burn")
	return c
}

// selfCPU is the CPU time this process has used, by its own clock.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// burn spins until this process has spent d more CPU time: CPU time, not
// wall time, so a busy machine only makes it take longer.
func burn(d time.Duration) {
	end := selfCPU() + d
	x := 0
	for selfCPU() < end {
		for i := 0; i < 1e5; i++ {
			x += i ^ x
		}
	}
	_ = x
}

func openTestdata(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseProcess(t *testing.T) {
	// Captured from /proc/PID/stat of Linux 6.18.
	tests := []struct {
		file string
		want Process
	}{
		{"pid-stat-parens.txt", Process{Pid: 28936, Comm: "a) b (c", State: 'S', PPid: 28935, Start: 102283, Threads: 1}},
		{"pid-stat-nginx-master.txt", Process{Pid: 29628, Comm: "nginx", State: 'S', PPid: 1, Start: 102817, Threads: 1}},
		{"pid-stat-nginx-worker.txt", Process{Pid: 29631, Comm: "nginx", State: 'S', PPid: 29628, Start: 102818, Threads: 1}},
		{"pid-stat-busy.txt", Process{Pid: 31066, Comm: "bash", State: 'R', PPid: 31064,
			Self: Times{850 * time.Millisecond, 100 * time.Millisecond}, Children: Times{120 * time.Millisecond, 0},
			Start: 104151, Threads: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseProcess(openTestdata(t, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseProcessErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "no (comm)"},
		{"short", "12 (x) S 1 2 3", "fields after comm"},
		{"bad utime", "12 (x) S 1 1 1 0 -1 0 0 0 0 0 x 0 0 0 20 0 1 0 5 0 0", "field 14"},
		{"negative cutime", "12 (x) S 1 1 1 0 -1 0 0 0 0 0 1 0 -1 0 20 0 1 0 5 0 0", "field 16"},
		{"bad state", "12 (x) SS 1 1 1 0 -1 0 0 0 0 0 1 0 0 0 20 0 1 0 5 0 0", "bad state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProcess(strings.NewReader(tt.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		file string
		want Status
	}{
		{"status-sleep.txt", Status{Name: "a) b (c", RSS: 1736 << 10, PeakRSS: 1736 << 10, Threads: 1}},
		{"status-nginx-master.txt", Status{Name: "nginx", RSS: 1520 << 10, PeakRSS: 1520 << 10, Threads: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := ParseStatus(openTestdata(t, tt.file))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := ParseStatus(strings.NewReader("Name:\tx\nVmRSS:\t12 MB\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
}

func TestParseStat(t *testing.T) {
	got, err := ParseStat(openTestdata(t, "stat.txt"))
	require.NoError(t, err)
	tick := Ticks(1)
	// cpu  88127 0 53727 51494 504 0 9851 359 0 0
	want := CPUTimes{User: 88127 * tick, System: 53727 * tick, Idle: 51494 * tick, IOWait: 504 * tick, SoftIRQ: 9851 * tick, Steal: 359 * tick}
	assert.Equal(t, want, got.All)
	require.Len(t, got.CPU, 2)
	assert.Equal(t, 180*tick, got.CPU[0].Steal)
	assert.Equal(t, 45914*tick, got.CPU[1].User)
	assert.Equal(t, (88127+53727+9851)*tick, got.All.Busy())
	assert.Equal(t, (88127+53727+9851+51494+504+359)*tick, got.All.Total())

	for _, in := range []string{"intr 1 2\n", "cpu 1 2 3\n", "cpu 1 2 3 4 5 6 x\n", "cpu 1 2 3 4 5 6 7\ncpuX 1 2 3 4 5 6 7\n"} {
		_, err := ParseStat(strings.NewReader(in))
		assert.Error(t, err, in)
	}
}

func TestMeasureNoise(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		delta  CPUTimes
		ours   time.Duration
		want   Noise
		steal  float64
		others float64
	}{
		// 2 CPUs for 10 s: 20 s of capacity.
		{"quiet", CPUTimes{User: 8 * s, System: 4 * s, Idle: 8 * s}, 12 * s, Noise{Capacity: 20 * s}, 0, 0},
		{"busy neighbour", CPUTimes{User: 12 * s, System: 4 * s, SoftIRQ: s, Idle: 2 * s, Steal: s}, 12 * s,
			Noise{Capacity: 20 * s, Steal: s, Others: 5 * s}, 0.05, 0.25},
		{"rounding", CPUTimes{User: 5 * s, Idle: 15 * s}, 5*s + 10*time.Millisecond, Noise{Capacity: 20 * s}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := MeasureNoise(tt.delta, tt.ours)
			assert.Equal(t, tt.want, got)
			assert.InDelta(t, tt.steal, got.StealShare(), 1e-9)
			assert.InDelta(t, tt.others, got.OthersShare(), 1e-9)
		})
	}
}

func TestStatSub(t *testing.T) {
	a, err := ParseStat(strings.NewReader("cpu 10 0 10 10 0 0 0 1 0 0\ncpu0 5 0 5 5 0 0 0 1 0 0\ncpu1 5 0 5 5 0 0 0 0 0 0\n"))
	require.NoError(t, err)
	b, err := ParseStat(strings.NewReader("cpu 30 0 20 10 0 0 0 3 0 0\ncpu0 20 0 10 5 0 0 0 3 0 0\ncpu1 10 0 10 5 0 0 0 0 0 0\n"))
	require.NoError(t, err)
	d := b.Sub(a)
	assert.Equal(t, 300*time.Millisecond, d.All.Busy())
	assert.Equal(t, 20*time.Millisecond, d.All.Steal)
	assert.Equal(t, 200*time.Millisecond, d.CPU[0].Busy())
	assert.Equal(t, 100*time.Millisecond, d.CPU[1].Busy())
}

func TestTreeCPU(t *testing.T) {
	ms := time.Millisecond
	tr := Tree{Root: 1, Procs: []Process{
		{Pid: 1, Self: Times{10 * ms, 20 * ms}, Children: Times{30 * ms, 40 * ms}, RSS: 1 << 20},
		{Pid: 2, PPid: 1, Self: Times{100 * ms, 200 * ms}, RSS: 2 << 20},
	}}
	assert.Equal(t, Times{140 * ms, 260 * ms}, tr.CPU())
	assert.Equal(t, 400*ms, tr.CPU().Total())
	assert.Equal(t, int64(3<<20), tr.RSS())
}

// startHelper runs the test binary in a helper mode and returns it with
// its stdin (closing it lets the helper exit) and a reader of its output.
func startHelper(t *testing.T, mode string, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	c := exec.Command(self, args...)
	c.Env = append(os.Environ(), helperEnv+"="+mode)
	in, err := c.StdinPipe()
	require.NoError(t, err)
	out, err := c.StdoutPipe()
	require.NoError(t, err)
	c.Stderr = os.Stderr
	require.NoError(t, c.Start())
	t.Cleanup(func() {
		in.Close()
		c.Process.Kill()
		c.Wait()
	})
	return c, in, bufio.NewReader(out)
}

// TestBurn measures a child that burns a known amount of CPU: its own
// clock says how much it used, /proc must agree.
func TestBurn(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU in a child; skipped under -short")
	}
	fsys := FS("/proc")
	before, err := fsys.Stat()
	require.NoError(t, err)
	c, in, out := startHelper(t, "burn", "300", "64")
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	var used time.Duration
	_, err = fmt.Sscanf(line, "done %d\n", &used)
	require.NoError(t, err)

	tr, err := fsys.Tree(c.Process.Pid)
	require.NoError(t, err)
	after, err := fsys.Stat()
	require.NoError(t, err)
	require.Len(t, tr.Procs, 1)
	got := tr.CPU().Total()
	t.Logf("child says %v, /proc says %v (user %v, system %v)", used, got, tr.CPU().User, tr.CPU().System)
	assert.GreaterOrEqual(t, used, 300*time.Millisecond)
	// /proc rounds to ticks and splits time by sampling; allow three ticks
	// and 5%.
	assert.InDelta(t, used.Seconds(), got.Seconds(), 0.03+0.05*used.Seconds())
	assert.GreaterOrEqual(t, tr.RSS(), int64(64<<20), "the child touched 64 MiB")

	// The machine was busy at least as long as the child burned.
	d := after.All.Sub(before.All)
	assert.GreaterOrEqual(t, d.Busy()+30*time.Millisecond, got)
	in.Close()
	require.NoError(t, c.Wait())
}

// TestTree measures a process with one child it has reaped and one it
// keeps running: the tree's CPU counts all three once.
func TestTree(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU in children; skipped under -short")
	}
	fsys := FS("/proc")
	// A harness's before-sample, taken right after the start.
	c, in, out := startHelper(t, "tree")
	before, err := fsys.Tree(c.Process.Pid)
	require.NoError(t, err)
	line, err := out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "done\n", line)
	after, err := fsys.Tree(c.Process.Pid)
	require.NoError(t, err)

	require.Len(t, after.Procs, 2, "the helper and its live child")
	assert.Equal(t, c.Process.Pid, after.Procs[1].PPid)
	got := after.CPU().Sub(before.CPU()).Total()
	t.Logf("tree used %v between the samples (before %v)", got, before.CPU().Total())
	// 200 + 100 + 300 ms burned, plus start-up of the three Go processes;
	// each at most a few ticks of rounding.
	assert.GreaterOrEqual(t, got, 600*time.Millisecond-6*Ticks(1))
	assert.Less(t, got, 900*time.Millisecond)
	in.Close()
	require.NoError(t, c.Wait())
}

// TestTreeOfProc checks the tree of a child started with a CPU list, as a run starts its servers: the pid proc reports is the
// program itself, whose time /proc must show.
func TestTreeOfProc(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU in a child; skipped under -short")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	pr, pw := io.Pipe()
	defer pr.Close()
	// The command line proc.Command builds for a pinned child (proc cannot
	// be imported here: it parses CPU lists with this package).
	p := exec.Command("taskset", "-c", "0", self, "200")
	p.Env = append(os.Environ(), helperEnv+"=burn")
	p.Stdout = pw
	require.NoError(t, p.Start())
	defer func() { _ = p.Process.Kill(); _ = p.Wait() }()
	line, err := bufio.NewReader(pr).ReadString('\n')
	require.NoError(t, err)
	var used time.Duration
	_, err = fmt.Sscanf(line, "done %d\n", &used)
	require.NoError(t, err)
	tr, err := FS("/proc").Tree(p.Process.Pid)
	require.NoError(t, err)
	assert.Equal(t, filepath.Base(self)[:min(15, len(filepath.Base(self)))], tr.Procs[0].Comm)
	assert.InDelta(t, used.Seconds(), tr.CPU().Total().Seconds(), 0.03+0.05*used.Seconds())
}

func TestTreeGone(t *testing.T) {
	if testing.Short() {
		t.Skip("reads /proc; skipped under -short")
	}
	_, err := FS("/proc").Tree(1 << 30)
	require.Error(t, err)
	assert.True(t, gone(err), err)
}

func TestStatOver(t *testing.T) {
	st, err := ParseStat(openTestdata(t, "stat.txt"))
	require.NoError(t, err)
	assert.Equal(t, st.CPU[1], st.Over([]int{1}))
	both := st.Over([]int{0, 1})
	// The per-CPU lines add up to the machine's line, but for the odd
	// tick: the kernel sums its counters at a slightly different moment
	// (iowait is 504 in the "cpu" line, 50+453 in the others).
	all := []time.Duration{st.All.User, st.All.System, st.All.Idle, st.All.IOWait, st.All.SoftIRQ, st.All.Steal}
	sum := []time.Duration{both.User, both.System, both.Idle, both.IOWait, both.SoftIRQ, both.Steal}
	for i := range all {
		assert.InDelta(t, all[i], sum[i], float64(2*Ticks(1)), "column %d", i)
	}
	assert.Equal(t, st.All.User, both.User)
	assert.Equal(t, CPUTimes{}, st.Over([]int{7}))
}

func TestWaitIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("burns CPU in children; skipped under -short")
	}
	fsys := FS("/proc")
	opt := IdleOptions{Share: 0.05, Window: 300 * time.Millisecond, Max: 20 * time.Second}

	t.Run("settles after the burst", func(t *testing.T) {
		c, _, _ := startHelper(t, "burn", "400")
		res, err := fsys.WaitIdle(context.Background(), []int{c.Process.Pid}, opt)
		require.NoError(t, err)
		tr, err := fsys.Tree(c.Process.Pid)
		require.NoError(t, err)
		t.Logf("settled %v after %v at %.3f of a CPU; the child used %v", res.Idle, res.Waited, res.Share, tr.CPU().Total())
		assert.True(t, res.Idle)
		assert.Less(t, res.Share, 0.05)
		// The child counts its CPU exactly; /proc samples it in ticks,
		// and on a busy machine falls a tick or two behind.
		assert.GreaterOrEqual(t, tr.CPU().Total(), 400*time.Millisecond-3*Ticks(1), "idle before the burst was over")
	})
	t.Run("busy until the limit", func(t *testing.T) {
		c, _, _ := startHelper(t, "burn", "5000")
		opt := opt
		opt.Max = time.Second
		res, err := fsys.WaitIdle(context.Background(), []int{c.Process.Pid}, opt)
		require.NoError(t, err)
		t.Logf("after %v: %.3f of a CPU", res.Waited, res.Share)
		assert.False(t, res.Idle)
		assert.GreaterOrEqual(t, res.Waited, time.Second)
		assert.Greater(t, res.Share, 0.05)
	})
	t.Run("gone", func(t *testing.T) {
		res, err := fsys.WaitIdle(context.Background(), []int{1 << 30}, opt)
		require.NoError(t, err)
		assert.True(t, res.Idle)
	})
	t.Run("interrupted", func(t *testing.T) {
		c, _, _ := startHelper(t, "burn", "5000")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, err := fsys.WaitIdle(ctx, []int{c.Process.Pid}, opt)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

package wrk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	ok := Options{URL: "http://127.0.0.1:8080/", Threads: 2, Connections: 10, Duration: time.Second}
	require.NoError(t, ok.Validate())
	cases := []struct {
		name string
		edit func(*Options)
		msg  string
	}{
		{"no threads", func(o *Options) { o.Threads = 0 }, "-t (threads) is 0"},
		{"no connections", func(o *Options) { o.Connections = 0 }, "-c (connections) is 0"},
		{"threads above connections", func(o *Options) { o.Threads = 20 }, "-t (threads) 20 exceeds -c (connections) 10"},
		{"uneven connections", func(o *Options) { o.Threads = 3 }, "wrk would open only 9"},
		{"short duration", func(o *Options) { o.Duration = 500 * time.Millisecond }, "-d (duration) 500ms"},
		{"fractional duration", func(o *Options) { o.Duration = 1500 * time.Millisecond }, "whole seconds"},
		{"fractional timeout", func(o *Options) { o.Timeout = 100 * time.Millisecond }, "--timeout 100ms"},
		{"negative overrun", func(o *Options) { o.Overrun = -time.Second }, "overrun -1s"},
		{"negative startup", func(o *Options) { o.Startup = -time.Second }, "startup bound -1s"},
		{"remote host", func(o *Options) { o.URL = "http://example.com/" }, "loopback only"},
		{"remote ip", func(o *Options) { o.URL = "http://10.0.0.1:8080/" }, "loopback only"},
		{"no scheme", func(o *Options) { o.URL = "127.0.0.1:8080" }, "http://"},
		{"bad cpus", func(o *Options) { o.CPUs = "0-" }, `wrk: CPU list "0-": "0-" is not a CPU number`},
		{"letters for cpus", func(o *Options) { o.CPUs = "abc" }, `wrk: CPU list "abc"`},
		{"veth address not allowed", func(o *Options) { o.URL = "http://169.254.77.1:8080/" }, "loopback only"},
		{"other address than the allowed one", func(o *Options) {
			o.URL, o.Allow = "http://169.254.77.2:8080/", netip.MustParseAddr("169.254.77.1")
		}, "or 169.254.77.1 only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := ok
			tc.edit(&o)
			err := o.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			_, _, err = Run(context.Background(), o)
			assert.ErrorContains(t, err, tc.msg, "Run validates too")
		})
	}
	for _, u := range []string{"http://localhost:80/", "http://127.0.0.2:9/x", "http://[::1]:8080/"} {
		o := ok
		o.URL = u
		assert.NoError(t, o.Validate(), u)
	}
	o := ok
	o.URL, o.Allow = "http://169.254.77.1:8080/", netip.MustParseAddr("169.254.77.1")
	assert.NoError(t, o.Validate(), "the allowed address")
}

func TestCommand(t *testing.T) {
	o := Options{Bin: "/usr/bin/wrk", URL: "http://127.0.0.1:8080/", Threads: 100, Connections: 5000,
		Duration: 30 * time.Second, Timeout: 2 * time.Second, Latency: true, Script: "/r/topobench.lua", CPUs: "1"}
	assert.Equal(t, []string{"taskset", "-c", "1", "stdbuf", "-oL", "/usr/bin/wrk", "-t100", "-c5000", "-d30s", "--timeout", "2s",
		"--latency", "-s", "/r/topobench.lua", "http://127.0.0.1:8080/"}, o.Command())
	o.NetNS = "tb-1-0-cli"
	assert.Equal(t, []string{"ip", "netns", "exec", "tb-1-0-cli", "taskset", "-c", "1", "stdbuf", "-oL", "/usr/bin/wrk", "-t100", "-c5000", "-d30s", "--timeout", "2s",
		"--latency", "-s", "/r/topobench.lua", "http://127.0.0.1:8080/"}, o.Command())
	o.NetNS, o.CPUs, o.Bin, o.Timeout, o.Latency, o.Script = "", "", "", 0, false, ""
	assert.Equal(t, []string{"stdbuf", "-oL", "wrk", "-t100", "-c5000", "-d30s", "http://127.0.0.1:8080/"}, o.Command())
	o.Close = true
	assert.Equal(t, []string{"stdbuf", "-oL", "wrk", "-t100", "-c5000", "-d30s", "-H", "Connection: close", "http://127.0.0.1:8080/"}, o.Command())
}

// TestRunClose checks that Close gives every request a connection of its
// own, as ab without -k does: the server sees about as many connections
// as wrk counts requests.
func TestRunClose(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello World\n"))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	res, raw, err := Run(context.Background(), Options{URL: srv.URL + "/", Threads: 2, Connections: 4, Duration: time.Second, Close: true})
	require.NoError(t, err, "%s", raw)
	assert.Positive(t, res.Requests)
	assert.Zero(t, res.Errors.Total(), "%s", raw)
	assert.GreaterOrEqual(t, conns.Load(), res.Requests, "a connection per request")
}

// TestRun drives the real wrk against an in-process server for about a
// second and checks the parsed figures hang together.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	base := startServer(t)
	script, err := WriteScript(t.TempDir())
	require.NoError(t, err)
	var tee bytes.Buffer
	o := Options{URL: base + "/", Threads: 2, Connections: 10, Duration: time.Second, Latency: true, Script: script, Stdout: &tee}
	start := time.Now()
	res, raw, err := Run(context.Background(), o)
	require.NoError(t, err, "%s", raw)
	wall := time.Since(start)

	assert.Equal(t, string(raw), tee.String(), "Stdout gets the raw output")
	assert.Equal(t, o.URL, res.URL)
	assert.Equal(t, 2, res.Threads)
	assert.Equal(t, 10, res.Connections)
	assert.Equal(t, time.Second, res.Duration)
	assert.Positive(t, res.Requests)
	assert.GreaterOrEqual(t, res.Elapsed, time.Second)
	assert.Less(t, res.Elapsed, wall+10*time.Millisecond)
	// The header arrived while wrk ran (stdbuf -oL), before its clock. wrk
	// prints its elapsed time to 10 ms, and the header is stamped when the
	// reading goroutine runs, later on a busy machine: hence the slack.
	assert.Positive(t, res.Startup)
	assert.Less(t, res.Startup+res.Elapsed, wall+25*time.Millisecond)
	assert.InEpsilon(t, float64(res.Requests)/res.Elapsed.Seconds(), res.RequestsPerSec, 0.01)
	assert.Zero(t, res.Errors.Total(), "a healthy server gives no errors")
	require.NotNil(t, res.Script, "the script's block is parsed")
	assert.Len(t, res.Distribution, 4)
	checkConsistent(t, res)
	p50, _ := res.Percentile(50)
	p99, _ := res.Percentile(99)
	assert.Positive(t, p50)
	assert.LessOrEqual(t, p50, p99)
	assert.LessOrEqual(t, p99, res.MaxLatency())
}

// TestRunErrors checks that socket errors, timeouts and error statuses
// from a real run reach the Result.
func TestRunErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	base := startServer(t)
	script, err := WriteScript(t.TempDir())
	require.NoError(t, err)

	res, raw, err := Run(context.Background(), Options{URL: base + "/flaky", Threads: 2, Connections: 10,
		Duration: 2 * time.Second, Timeout: time.Second, Script: script})
	require.NoError(t, err, "%s", raw)
	assert.Positive(t, res.Errors.Read, "garbage replies are read errors")
	assert.Positive(t, res.Errors.Timeout, "1.5s answers time out under --timeout 1s")
	require.NotNil(t, res.Script)
	assert.Equal(t, res.Errors, res.Script.Errors)

	res, raw, err = Run(context.Background(), Options{URL: base + "/missing", Threads: 1, Connections: 3,
		Duration: time.Second, Script: script})
	require.NoError(t, err, "%s", raw)
	assert.Positive(t, res.Errors.Status)
	assert.InDelta(t, float64(res.Requests)/3, float64(res.Errors.Status), float64(res.Requests)/20+3, "every third answer is a 404")
}

func TestRunPinned(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatalf("taskset (util-linux) is needed for pinning: %v", err)
	}
	base := startServer(t)
	res, raw, cpu, err := RunCPU(context.Background(), Options{URL: base + "/", Threads: 1, Connections: 2, Duration: time.Second, CPUs: "0"})
	require.NoError(t, err, "%s", raw)
	assert.Positive(t, res.Requests)
	// wrk worked for a second on one CPU: its rusage shows some of it and
	// cannot exceed the wall time it had on that CPU.
	assert.Positive(t, cpu.Total())
	assert.Less(t, cpu.Total(), 3*time.Second)
}

// TestRunCancel checks that cancelling stops wrk promptly and reports the
// cancellation, not a parse error.
func TestRunCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	base := startServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	_, raw, err := Run(ctx, Options{URL: base + "/", Threads: 1, Connections: 2, Duration: 20 * time.Second})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	var pe *ParseError
	assert.False(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "interrupted")
	assert.Less(t, time.Since(start), 5*time.Second, "wrk stops on SIGINT")
	assert.Contains(t, string(raw), "Running 20s test", "output so far is kept")
}

func TestRunFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	o := Options{Bin: "/nonexistent/wrk", URL: "http://127.0.0.1:1/", Threads: 1, Connections: 1, Duration: time.Second}
	_, _, err := Run(context.Background(), o)
	assert.ErrorContains(t, err, "/nonexistent/wrk")

	// Nothing listens on port 1: wrk refuses to start and says so on stderr.
	o.Bin = ""
	_, _, err = Run(context.Background(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "running wrk against http://127.0.0.1:1/")
	assert.Contains(t, err.Error(), "unable to connect")
}

func TestVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	v, err := Version(context.Background(), "")
	require.NoError(t, err)
	assert.True(t, strings.Contains(v, "4.") || strings.Contains(v, "3."), "version %q", v)
	_, err = Version(context.Background(), "/nonexistent/wrk")
	assert.Error(t, err)
}

// TestRunHung stops a real wrk with SIGSTOP, as a stuck or starved one
// would stand still, and checks that Run gives up at the limit, says it
// hung and keeps wrk's state.
func TestRunHung(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	base := startServer(t)
	header := make(chan struct{})
	o := Options{URL: base + "/", Threads: 2, Connections: 4, Duration: time.Second, Timeout: time.Second, Overrun: time.Second,
		Stdout: &signalWriter{want: "4 connections", seen: header}}
	type result struct {
		raw []byte
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		_, raw, err := Run(context.Background(), o)
		done <- result{raw, err}
	}()
	var pid int
	// stdbuf execs wrk: the child takes wrk's name once it has.
	require.Eventually(t, func() bool { pid = childNamed(t, "wrk"); return pid > 0 }, 2*time.Second, 5*time.Millisecond)
	// Stop it inside its 1s window, its connections made.
	<-header
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))

	r := <-done
	elapsed := time.Since(start)
	require.Error(t, r.err)
	assert.ErrorIs(t, r.err, ErrHung)
	assert.ErrorIs(t, r.err, context.DeadlineExceeded, "callers that matched the deadline still do")
	var he *HangError
	require.ErrorAs(t, r.err, &he)
	assert.Equal(t, 3*time.Second, he.Limit)
	assert.True(t, he.Started, "line-buffered, wrk's header arrived before it was stopped")
	assert.Equal(t, map[string]int{"T": 3}, he.Threads)
	assert.Equal(t, "wrk against "+base+"/ did not finish within 3s of starting its clock: stopped as hung; 3 of 3 threads stopped (state in the raw output)", r.err.Error())
	assert.GreaterOrEqual(t, elapsed, 3*time.Second)
	assert.Less(t, elapsed, 8*time.Second, "a hung wrk is killed soon after SIGINT")

	st := he.State
	t.Logf("state of the stopped wrk:\n%s", st)
	assert.Contains(t, st, fmt.Sprintf("pid %d at ", pid))
	assert.Contains(t, st, "wrk -t2 -c4 -d1s --timeout 1s "+base+"/", "stdbuf and taskset exec wrk")
	// The main thread and the two load threads, all stopped.
	assert.Contains(t, st, "threads: tid state")
	assert.Contains(t, st, "thread states: T 3")
	assert.Regexp(t, `tcp sockets \(4 of \d+ descriptors\): ESTABLISHED 4; Send-Q total \d+, Recv-Q total \d+`, st)
	assert.Contains(t, st, "-> "+strings.TrimPrefix(base, "http://"))
	assert.Contains(t, string(r.raw), hangMarker+"\n"+st, "the state is kept with the raw output")
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the hung wrk is gone")
}

// signalWriter closes seen once the output contains want.
type signalWriter struct {
	buf  bytes.Buffer
	want string
	seen chan struct{}
}

func (w *signalWriter) Write(b []byte) (int, error) {
	if w.seen == nil {
		return len(b), nil
	}
	w.buf.Write(b)
	if strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
		w.seen = nil
	}
	return len(b), nil
}

// childNamed returns the pid of this process's child with the given
// command name, or 0.
func childNamed(t *testing.T, comm string) int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(s[end+1:])
		if s[open+1:end] == comm && len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			return pid
		}
	}
	return 0
}

package wrk

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os/exec"
	"strings"
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
		{"remote host", func(o *Options) { o.URL = "http://example.com/" }, "loopback only"},
		{"remote ip", func(o *Options) { o.URL = "http://10.0.0.1:8080/" }, "loopback only"},
		{"no scheme", func(o *Options) { o.URL = "127.0.0.1:8080" }, "http://"},
		{"bad cpus", func(o *Options) { o.CPUs = "0-" }, "CPU list"},
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
	assert.Equal(t, []string{"taskset", "-c", "1", "/usr/bin/wrk", "-t100", "-c5000", "-d30s", "--timeout", "2s",
		"--latency", "-s", "/r/topobench.lua", "http://127.0.0.1:8080/"}, o.Command())
	o.NetNS = "tb-1-0-cli"
	assert.Equal(t, []string{"ip", "netns", "exec", "tb-1-0-cli", "taskset", "-c", "1", "/usr/bin/wrk", "-t100", "-c5000", "-d30s", "--timeout", "2s",
		"--latency", "-s", "/r/topobench.lua", "http://127.0.0.1:8080/"}, o.Command())
	o.NetNS, o.CPUs, o.Bin, o.Timeout, o.Latency, o.Script = "", "", "", 0, false, ""
	assert.Equal(t, []string{"wrk", "-t100", "-c5000", "-d30s", "http://127.0.0.1:8080/"}, o.Command())
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

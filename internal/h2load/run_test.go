package h2load

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

var capture = flag.Bool("capture", false, "rewrite the run-*.txt captures in testdata from TestRun's runs")

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// startHello runs cmd/hello with a plain HTTP listener and an HTTPS one
// (a fresh certificate), returning both URLs.
func startHello(t *testing.T) (plain, tls string) {
	t.Helper()
	bin := testenv.HelloBin(t)
	if _, err := exec.LookPath("h2load"); err != nil {
		t.Fatalf("h2load not installed (apt-get install nghttp2-client): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	pair, err := tlscert.Generate(t.TempDir(), tlscert.P256)
	require.NoError(t, err)
	l := topology.Layout{HTTP: testenv.FreeAddr(t)}
	https := testenv.FreeAddr(t)
	h, err := hellorun.Start(ctx, hellorun.Config{
		Bin: bin, Layout: l, Topologies: []topology.Topology{mustLookup(t, topology.Standalone)},
		GOMAXPROCS: 1, Grace: time.Second,
		ExtraArgs: []string{"-https=" + https, "-tls-cert=" + pair.Cert, "-tls-key=" + pair.Key},
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, h.Stop()) })
	return "http://" + l.HTTP + "/", "https://" + https + "/"
}

func mustLookup(t *testing.T, name string) topology.Topology {
	t.Helper()
	top, err := topology.Lookup(name)
	require.NoError(t, err)
	return top
}

// TestRun drives the real h2load against the real cmd/hello, over HTTP/2
// and HTTP/1.1 on TLS and HTTP/1.1 in the clear, for a second each.
func TestRun(t *testing.T) {
	plain, tls := startHello(t)
	for _, tc := range []struct {
		name     string
		o        Options
		protocol string
	}{
		{"h2-tls", Options{URL: tls, Threads: 1, Connections: 2, Streams: 4}, "h2"},
		{"h1-tls", Options{URL: tls, Threads: 1, Connections: 2, Streams: 1, H1: true}, "http/1.1"},
		{"h1-plain", Options{URL: plain, Threads: 1, Connections: 2, Streams: 1, H1: true, Timeout: 2 * time.Second}, "http/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.Duration = time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, raw, cpu, err := Run(ctx, tc.o)
			require.NoError(t, err, "%s", raw)
			assert.Equal(t, tc.protocol, res.Protocol)
			assert.Equal(t, strings.HasPrefix(tc.o.URL, "https:"), res.TLS != nil)
			assert.Positive(t, res.Requests.Done)
			assert.Equal(t, res.Requests.Done, res.Requests.Succeeded)
			assert.Zero(t, res.Figures().Errors.Total())
			assert.Positive(t, cpu.User+cpu.System)
			if *capture {
				require.NoError(t, os.WriteFile(filepath.Join("testdata", "run-"+tc.name+".txt"), raw, 0o644))
			}
		})
	}
}

// TestRunRefused: nothing listening is a clear error, not a run of zeros.
func TestRunRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs h2load")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "http://" + testenv.FreeAddr(t) + "/"
	_, raw, _, err := Run(ctx, Options{URL: url, Threads: 1, Connections: 1, Streams: 1, H1: true, Duration: time.Second})
	require.ErrorIs(t, err, ErrNoAnswer)
	assert.Contains(t, err.Error(), "h2load against "+url+": h2load got no answer: no connection was set up")
	assert.Contains(t, string(raw), "requests: 0 total")
}

// TestRunCancelled: cancelling the context stops h2load early.
func TestRunCancelled(t *testing.T) {
	_, tls := startHello(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, _, err := Run(ctx, Options{URL: tls, Threads: 1, Connections: 1, Streams: 1, Duration: 20 * time.Second})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interrupted")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestOptions: the command line, and every bad option refused naming
// h2load's flag.
func TestOptions(t *testing.T) {
	o := Options{URL: "https://127.0.0.1:8443/", Threads: 2, Connections: 10, Streams: 8, Duration: 15 * time.Second, Timeout: 2 * time.Second, CPUs: "0"}
	require.NoError(t, o.Validate())
	assert.Equal(t, []string{"taskset", "-c", "0", "h2load", "-t2", "-c10", "-m8", "-D15s", "-N2s", "https://127.0.0.1:8443/"}, o.Command())
	h1 := Options{URL: "http://localhost:8080/", Threads: 1, Connections: 3, Streams: 1, H1: true, Duration: time.Second}
	require.NoError(t, h1.Validate())
	assert.Equal(t, []string{"-t1", "-c3", "-m1", "-D1s", "--h1", "http://localhost:8080/"}, h1.Args())

	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no threads", func(o *Options) { o.Threads = 0 }, "h2load -t (threads) is 0"},
		{"fewer connections than threads", func(o *Options) { o.Connections = 1 }, "h2load -c (connections) 1 is fewer than -t (threads) 2"},
		{"no streams", func(o *Options) { o.Streams = 0 }, "h2load -m (streams) is 0"},
		{"pipelined h1", func(o *Options) { o.H1 = true }, "h2load -m (streams) 8 with --h1 would pipeline"},
		{"part seconds", func(o *Options) { o.Duration = 1500 * time.Millisecond }, "h2load -D (duration) 1.5s"},
		{"bad timeout", func(o *Options) { o.Timeout = time.Millisecond }, "h2load -N (timeout) 1ms"},
		{"h2 in the clear", func(o *Options) { o.URL = "http://127.0.0.1:8080/" }, "HTTP/2 goes over TLS (ALPN) here; plain http:// takes --h1"},
		{"not loopback", func(o *Options) { o.URL = "https://10.0.0.1/" }, "load goes to loopback"},
		{"not http", func(o *Options) { o.URL = "ftp://127.0.0.1/" }, "want http:// or https://"},
		{"bad cpus", func(o *Options) { o.CPUs = "x" }, "h2load: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := o
			tc.edit(&bad)
			err := bad.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

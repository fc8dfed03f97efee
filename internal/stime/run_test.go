package stime

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
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

// startHello runs cmd/hello with an HTTPS listener of s (a fresh
// certificate of its key) and returns its URL.
func startHello(t *testing.T, s tlscert.Settings) string {
	t.Helper()
	bin := testenv.HelloBin(t)
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl not installed (apt-get install openssl): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	pair, err := tlscert.Generate(t.TempDir(), s.Key)
	require.NoError(t, err)
	st, err := topology.Lookup(topology.Standalone)
	require.NoError(t, err)
	https := testenv.FreeAddr(t)
	h, err := hellorun.Start(ctx, hellorun.Config{
		Bin: bin, Layout: topology.Layout{HTTP: testenv.FreeAddr(t)}, Topologies: []topology.Topology{st},
		GOMAXPROCS: 1, Grace: time.Second,
		ExtraArgs: []string{"-https=" + https, "-tls-cert=" + pair.Cert, "-tls-key=" + pair.Key,
			"-tls-key-type=" + s.Key.String(), "-tls-version=" + s.Version.String()},
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, h.Stop()) })
	return "https://" + https + "/"
}

// TestRun drives the real s_time against the real cmd/hello over TLS 1.3
// with P-256 and TLS 1.2 with RSA 2048, one process and two, for 2 s
// each: connections made, answered, timed by their marks.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tls   tlscert.Settings
		procs int
	}{
		{"p256-tls13", tlscert.Settings{}, 1},
		{"rsa2048-tls12-two", tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := startHello(t, tc.tls)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			o := Options{URL: url, Procs: tc.procs, Duration: 2 * time.Second, TLS: &tc.tls}
			res, raw, cpu, err := Run(ctx, o)
			require.NoError(t, err, "%s", raw)
			assert.Equal(t, tc.procs, res.Procs)
			assert.Positive(t, res.Connections)
			assert.Zero(t, res.Reused, "-new resumes no session")
			assert.Positive(t, res.BytesPerConn)
			// The marks' span is within the run's -time; s_time's own
			// whole seconds are one more as a rule.
			assert.Greater(t, res.Elapsed, time.Second)
			assert.LessOrEqual(t, res.Elapsed, 3*time.Second)
			assert.Positive(t, res.ConnPerSec)
			assert.Positive(t, cpu.User+cpu.System)
			if *capture {
				require.NoError(t, os.WriteFile(filepath.Join("testdata", "run-"+tc.name+".txt"), raw, 0o644))
			}
		})
	}
}

// TestRunRefused: nothing listening is a clear error with s_time's
// reason, not a run of zeros.
func TestRunRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("runs s_time")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "https://" + testenv.FreeAddr(t) + "/"
	_, raw, _, err := Run(ctx, Options{URL: url, Procs: 2, Duration: time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "running s_time against "+url+": openssl: exit status 1")
	assert.Contains(t, err.Error(), "Connection refused")
	assert.Contains(t, string(raw), "Collecting connection statistics for 1 seconds")
}

// TestRunCancelled: cancelling the context stops s_time early.
func TestRunCancelled(t *testing.T) {
	url := startHello(t, tlscert.Settings{})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, _, err := Run(ctx, Options{URL: url, Procs: 2, Duration: 20 * time.Second})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "interrupted")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestOptions: the command line, and every bad option refused naming
// s_time's flag.
func TestOptions(t *testing.T) {
	rsa12 := tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12}
	o := Options{URL: "https://127.0.0.1:8443/?wait=1ms", Procs: 4, Duration: 15 * time.Second, TLS: &rsa12, CPUs: "0"}
	require.NoError(t, o.Validate())
	assert.Equal(t, []string{"taskset", "-c", "0", "openssl", "s_time", "-connect", "127.0.0.1:8443", "-new", "-time", "15",
		"-www", "/?wait=1ms", "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"}, o.Command())
	v13 := Options{URL: "https://localhost/", Procs: 1, Duration: time.Second, TLS: &tlscert.Settings{}}
	require.NoError(t, v13.Validate())
	assert.Equal(t, []string{"s_time", "-connect", "localhost:443", "-new", "-time", "1", "-www", "/",
		"-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"}, v13.Args())
	v13.TLS = nil
	assert.Equal(t, []string{"s_time", "-connect", "localhost:443", "-new", "-time", "1", "-www", "/"}, v13.Args(), "OpenSSL's defaults")

	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no processes", func(o *Options) { o.Procs = 0 }, "s_time processes: 0, want 1 to 64"},
		{"too many processes", func(o *Options) { o.Procs = MaxProcs + 1 }, "s_time processes: 65, want 1 to 64"},
		{"part seconds", func(o *Options) { o.Duration = 1500 * time.Millisecond }, "s_time -time (duration) 1.5s"},
		{"negative overrun", func(o *Options) { o.Overrun = -time.Second }, "s_time overrun -1s"},
		{"plain http", func(o *Options) { o.URL = "http://127.0.0.1:8080/" }, "s_time speaks TLS only; want https://"},
		{"not loopback", func(o *Options) { o.URL = "https://10.0.0.1/" }, "load goes to loopback"},
		{"bad settings", func(o *Options) { o.TLS = &tlscert.Settings{Version: 7} }, "s_time: tls settings: unknown version"},
		{"bad cpus", func(o *Options) { o.CPUs = "x" }, "s_time: "},
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

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/tlscert"
)

// TestLoadCommandBadInput: bad input is one line naming the flag (or the
// spec file's key), exit status 2, and no usage dump.
func TestLoadCommandBadInput(t *testing.T) {
	dir := t.TempDir()
	spec := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	badKey := spec("bad-key.json", `{"target": "http://127.0.0.1:1/", "conections": 5}`)
	badConns := spec("bad-conns.json", `{"target": "http://127.0.0.1:1/", "connections": 0}`)
	offHost := spec("off-host.json", `{"target": "http://10.0.0.1:80/"}`)
	badPort := spec("bad-port.json", `{"target": "http://127.0.0.1:99999/"}`)
	noTarget := spec("no-target.json", `{"connections": 5}`)
	badTLS := spec("bad-tls.json", `{"target": "https://127.0.0.1:1/", "tls-version": "1.0"}`)
	pair, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	cert := pair.Cert
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load"}, "load: no URL given"},
		{[]string{"load", "http://10.1.2.3:80/"}, "load: URL http://10.1.2.3:80/: host \"10.1.2.3\": not a loopback address"},
		{[]string{"load", "http://example.com/"}, "not a loopback address"},
		{[]string{"load", "http://127.0.0.1:99999/"}, `load: URL "http://127.0.0.1:99999/": port 99999: want 1 to 65535`},
		{[]string{"load", "http://127.0.0.1:0/"}, "port 0"},
		{[]string{"load", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, `load: unexpected argument "http://127.0.0.1:2/"`},
		{[]string{"load", "-rate", "abc", "http://127.0.0.1:1/"}, `load: invalid value "abc" for flag -rate`},
		{[]string{"load", "-connections", "x", "http://127.0.0.1:1/"}, "flag -connections"},
		{[]string{"load", "-allow", "zz", "http://127.0.0.1:1/"}, "flag -allow"},
		{[]string{"load", "-allow", "10.0.0.1", "http://127.0.0.1:1/"}, "load: -allow: 10.0.0.1"},
		{[]string{"load", "-allow", "10.0.0.1", "http://10.0.0.1:80/"}, "another machine's address needs -allow-remote"},
		{[]string{"load", "-allow-remote", "http://10.0.0.1:80/"}, "load: -allow-remote: needs -allow"},
		{[]string{"load", "-allow-remote", "-allow", "10.0.0.1", "http://10.0.0.2:80/"}, `load: URL http://10.0.0.2:80/: host "10.0.0.2": not a loopback address`},
		{[]string{"load", "-allow-remote", "-allow", "224.0.0.1", "http://224.0.0.1:80/"}, "load: -allow: 224.0.0.1: not an address load may go to"},
		{[]string{"load", "-allow-remote", "-allow", "127.0.0.1", "http://127.0.0.1:1/"}, "load: -allow: 127.0.0.1"},
		{[]string{"load", "-allow-remote", "-allow", "10.0.0.1", "-duration", "-1s", "http://10.0.0.1:80/"}, "load: -duration: -1s" /* accepted as far as the address goes; never run */},
		{[]string{"load", "-arrivals", "bursty", "-rate", "10", "http://127.0.0.1:1/"}, "load: -arrivals: "},
		{[]string{"load", "-rate", "-1", "http://127.0.0.1:1/"}, "load: -rate: -1"},
		{[]string{"load", "-connections", "0", "http://127.0.0.1:1/"}, "load: -connections: 0: closed mode needs at least one"},
		{[]string{"load", "-rate", "5", "-connections", "-1", "http://127.0.0.1:1/"}, "load: -connections: -1"},
		{[]string{"load", "-requests", "-1", "http://127.0.0.1:1/"}, "load: -requests: -1"},
		{[]string{"load", "-duration", "-1s", "http://127.0.0.1:1/"}, "load: -duration: -1s"},
		{[]string{"load", "-timeout", "2m", "http://127.0.0.1:1/"}, "load: -timeout: 2m0s"},
		{[]string{"load", "-wait", "61s", "http://127.0.0.1:1/"}, "load: -wait: 1m1s"},
		{[]string{"load", "-rate", "10", "-connections", "20", "-max-connections", "5", "http://127.0.0.1:1/"}, "load: -max-connections: 5: below connections (20)"},
		{[]string{"load", "-procs", "0", "http://127.0.0.1:1/"}, "load: -procs: 0"},
		{[]string{"load", "-nosuchflag", "http://127.0.0.1:1/"}, "load: flag provided but not defined: -nosuchflag"},
		{[]string{"load", "-probe", "10", "http://127.0.0.1:1/"}, "load: -wait: a probe needs one"},
		{[]string{"load", "-probe", "10", "-wait", "1s", "-rate", "5", "http://127.0.0.1:1/"}, "load: -rate: does not apply to a probe"},
		{[]string{"load", "-probe", "100000000", "-wait", "1s", "http://127.0.0.1:1/"}, "load: -probe: 100000000 requests: more connections than the open-files limit allows"},
		{[]string{"load", "-probe", "10", "-wait", "1s", "-within", "10ms", "http://127.0.0.1:1/"}, "load: -within: 10ms is below the wait 1s"},
		{[]string{"load", "-within", "1s", "http://127.0.0.1:1/"}, "load: -within: applies to probe only"},
		{[]string{"load", "-spec", filepath.Join(dir, "none.json")}, "load: -spec: open "},
		{[]string{"load", "-spec", badKey}, `load: -spec ` + badKey + `: json: unknown field "conections"`},
		{[]string{"load", "-spec", badConns}, "load: -spec " + badConns + ": connections: 0: closed mode needs at least one"},
		{[]string{"load", "-spec", badConns, "-connections", "-3"}, "load: -connections: -3" /* the flag, not the file */},
		{[]string{"load", "-spec", offHost}, "load: -spec " + offHost + ": target: http://10.0.0.1:80/: host"},
		{[]string{"load", "-spec", badPort}, "load: -spec " + badPort + `: target: "http://127.0.0.1:99999/": port 99999`},
		{[]string{"load", "-spec", noTarget}, "load: -spec " + noTarget + ": target: none given"},
		{[]string{"load", "-spec", badConns, "http://10.0.0.1:80/"}, "load: URL http://10.0.0.1:80/"},
		{[]string{"load", "-goroutines", "https://127.0.0.1:1/"}, "load: -tls-ca: none given: an https:// target needs the CA file"},
		{[]string{"load", "-goroutines", "-tls-ca", badKey, "http://127.0.0.1:1/"}, "load: -tls-ca: TLS applies to an https:// target only"},
		{[]string{"load", "-goroutines", "-tls-ca", filepath.Join(dir, "none.pem"), "https://127.0.0.1:1/"}, "load: -tls-ca: reading the CA file"},
		{[]string{"load", "-goroutines", "-tls-ca", badKey, "https://127.0.0.1:1/"}, "load: -tls-ca: " + badKey + ": no PEM certificate in it"},
		{[]string{"load", "-tls-version", "1.1", "https://127.0.0.1:1/"}, `load: invalid value "1.1" for flag -tls-version`},
		{[]string{"load", "-tls-key-type", "ed25519", "https://127.0.0.1:1/"}, `load: invalid value "ed25519" for flag -tls-key-type`},
		{[]string{"load", "-tls-ca", cert, "https://127.0.0.1:1/"}, "load: -goroutines: an https:// target needs a goroutine per connection"},
		{[]string{"load", "-spec", badTLS}, "load: -spec " + badTLS + `: tls-version: unknown TLS version "1.0"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Equal(t, 2, exitCode(err))
			assert.Empty(t, stderr.String(), "no usage text for a bad value")
			assert.Empty(t, stdout.String())
		})
	}
}

// TestLoadCommandHelp: -h prints the usage and every flag, and is not an
// error.
func TestLoadCommandHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"load", "-h"}, &stdout, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, 0, exitCode(err))
	assert.Contains(t, stderr.String(), "usage: topobench load")
	for _, f := range []string{"-spec", "-rate", "-probe", "-allow", "-allow-remote", "-within"} {
		assert.Regexp(t, `(?m)^  `+f+`( |$)`, stderr.String())
	}
}

// TestLoadCommandNoneSucceeded: a run in which every request failed
// prints its summary and exits non-zero with one line saying so.
func TestLoadCommandNoneSucceeded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/"
	require.NoError(t, ln.Close())
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	for name, url := range map[string]string{"connection refused": refused, "every answer 503": failing.URL + "/"} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"load", "-quiet", "-connections", "2", "-requests", "10", url}, &stdout, &stderr)
			require.Error(t, err)
			assert.ErrorIs(t, err, load.ErrNoneSucceeded)
			assert.Equal(t, load.ExitNoneSucceeded, exitCode(err))
			assert.Contains(t, err.Error(), "load: no request succeeded")
			assert.NotContains(t, err.Error(), "\n")
			assert.Contains(t, stdout.String(), "errors: connect", "the summary is printed")
		})
	}
}

// TestLoadFlagsAndSpec: the flags and the spec they describe, read from a
// file, make the same options; flags given beside -spec override it.
func TestLoadFlagsAndSpec(t *testing.T) {
	url := "http://127.0.0.1:8080/"
	target, err := load.ParseURL(url)
	require.NoError(t, err)
	pair, err := tlscert.Generate(t.TempDir(), tlscert.RSA2048)
	require.NoError(t, err)
	spec := func(edit func(*load.Spec)) load.Spec {
		s := load.DefaultSpec()
		s.Target = target
		edit(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		args []string
		want load.Spec
	}{
		{"defaults", []string{url}, spec(func(s *load.Spec) {})},
		{"closed", []string{"-connections", "100", "-duration", "15s", "-timeout", "3s", "-json", "-quiet", url},
			spec(func(s *load.Spec) {
				s.Connections, s.Duration, s.Timeout, s.JSON, s.Quiet = 100, 15*time.Second, 3*time.Second, true, true
			})},
		{"open", []string{"-rate", "1000", "-arrivals", "uniform", "-connections", "50", "-max-connections", "5000", "-requests", "100000",
			"-wait", "1s", "-seed", "9", "-procs", "2", "-out", "/tmp/x", url},
			spec(func(s *load.Spec) {
				s.Rate, s.Arrivals, s.Connections, s.MaxConnections, s.Requests = 1000, load.Uniform, 50, 5000, 100000
				s.Wait, s.Seed, s.Procs, s.Out = time.Second, 9, 2, "/tmp/x"
			})},
		{"probe", []string{"-probe", "80", "-wait", "10s", "-within", "12s", "-allow", "169.254.3.1", url},
			spec(func(s *load.Spec) {
				s.Probe, s.Wait, s.Within, s.Allow = 80, 10*time.Second, 12*time.Second, netip.MustParseAddr("169.254.3.1")
			})},
		{"remote, named on purpose", []string{"-allow", "10.0.0.2", "-allow-remote", "http://10.0.0.2:8080/"},
			spec(func(s *load.Spec) {
				s.Allow, s.AllowRemote = netip.MustParseAddr("10.0.0.2"), true
				s.Target = load.Target{Network: "tcp", Address: "10.0.0.2:8080", Host: "10.0.0.2:8080", Path: "/"}
			})},
		{"unix socket", []string{"unix:/tmp/go.sock:/p"}, spec(func(s *load.Spec) {
			s.Target = load.Target{Network: "unix", Address: "/tmp/go.sock", Host: "localhost", Path: "/p"}
		})},
		{"https, a connection a request", []string{"-goroutines", "-close", "-tls-ca", pair.Cert, "-tls-server-name", "localhost",
			"-tls-version", "1.2", "-tls-key-type", "rsa2048", "-tls-resume", "https://127.0.0.1:8443/"},
			spec(func(s *load.Spec) {
				s.Target = load.Target{Network: "tcp", Address: "127.0.0.1:8443", Host: "127.0.0.1:8443", Path: "/", TLS: true}
				s.Goroutines, s.Close = true, true
				s.TLS = load.TLS{CA: pair.Cert, ServerName: "localhost", Settings: tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}}
			})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := parseLoad(tc.args, io.Discard)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			require.NoError(t, got.Validate())

			// The same spec as a file gives the same spec, so the same
			// options.
			b, err := json.Marshal(got)
			require.NoError(t, err)
			path := filepath.Join(t.TempDir(), "spec.json")
			require.NoError(t, os.WriteFile(path, b, 0o644))
			fromFile, _, err := parseLoad([]string{"-spec", path}, io.Discard)
			require.NoError(t, err)
			assert.Equal(t, got, fromFile)
			assert.Equal(t, got.RunOptions(), fromFile.RunOptions())
			assert.Equal(t, got.ProbeOptions(), fromFile.ProbeOptions())
		})
	}

	t.Run("flags override the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "spec.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"target": "http://127.0.0.1:8080/", "rate": 100, "connections": 4, "requests": 50}`), 0o644))
		got, _, err := parseLoad([]string{"-spec", path, "-rate", "200", "http://127.0.0.1:9090/x"}, io.Discard)
		require.NoError(t, err)
		want := load.DefaultSpec()
		want.Target, _ = load.ParseURL("http://127.0.0.1:9090/x")
		want.Rate, want.Connections, want.Requests = 200, 4, 50
		assert.Equal(t, want, got)
	})
}

func TestLoadCommandJSONAndFiles(t *testing.T) {
	srv := httptest.NewServer(hello.NewHandler())
	defer srv.Close()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// Flags after the URL work too.
	err := run(context.Background(), []string{"load", srv.URL + "/", "-rate", "200", "-requests", "40", "-wait", "10ms", "-json", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	var s load.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), stdout.String())
	assert.Equal(t, "open", s.Mode)
	assert.EqualValues(t, 40, s.Requests)
	assert.Contains(t, s.Target, "?wait=10ms")
	assert.GreaterOrEqual(t, s.Latency.P50, 10.0)
	assert.Zero(t, s.Errors.Total())

	h, err := hdr.ReadFile(filepath.Join(dir, "latency"+hdr.EncodedExt))
	require.NoError(t, err)
	assert.EqualValues(t, 40, h.TotalCount())
	f, err := os.Open(filepath.Join(dir, "latency"+hdr.PercentilesExt))
	require.NoError(t, err)
	defer f.Close()
	rows, err := hdr.ReadPercentiles(f)
	require.NoError(t, err)
	assert.EqualValues(t, 40, rows[len(rows)-1].TotalCount)
	_, err = os.Stat(filepath.Join(dir, "summary.json"))
	assert.NoError(t, err)
}

// TestLoadCommandInterrupted: Ctrl-C keeps what was measured, prints it and
// exits non-zero; a progress line came on stderr meanwhile.
func TestLoadCommandInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"load", "-connections", "2", "-duration", "1m", srv.URL + "/"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted")
	assert.Contains(t, stdout.String(), "requests in")
	assert.Contains(t, stdout.String(), "interrupted")
	assert.Contains(t, stderr.String(), "answered")
}

// TestLoadCommandSpecStdin runs "topobench load -spec -" as a process (this
// test binary acting as topobench) with the spec on its standard input.
func TestLoadCommandSpecStdin(t *testing.T) {
	srv := httptest.NewServer(hello.NewHandler())
	defer srv.Close()
	cmd := exec.Command(os.Args[0], "load", "-spec", "-", "-quiet")
	cmd.Env = append(os.Environ(), runAsMainEnv+"=1")
	cmd.Stdin = strings.NewReader(`{"target": "` + srv.URL + `/", "rate": 100, "connections": 2, "requests": 20, "wait": "5ms", "json": true}`)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	var s load.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), stdout.String())
	assert.Equal(t, "open", s.Mode)
	assert.EqualValues(t, 20, s.Requests)
	assert.Contains(t, s.Target, "?wait=5ms")
	assert.Empty(t, stderr.String(), "-quiet given beside the spec")

	// A bad spec on stdin: one line, exit status 2.
	cmd = exec.Command(os.Args[0], "load", "-spec", "-")
	cmd.Env = append(os.Environ(), runAsMainEnv+"=1")
	cmd.Stdin = strings.NewReader(`{"target": "http://127.0.0.1:99999/"}`)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Equal(t, `topobench: load: -spec -: target: "http://127.0.0.1:99999/": port 99999: want 1 to 65535`+"\n", string(out))
}

// TestLoadCommandSession drives "topobench load -session" as a child
// process (this test binary acting as topobench) through its pipes, as the
// sweep does: two pools, alternating windows, a bad command in between,
// and quit, after which it exits 0.
func TestLoadCommandSession(t *testing.T) {
	srvA := httptest.NewServer(hello.NewHandler())
	defer srvA.Close()
	srvB := httptest.NewServer(hello.NewHandler())
	defer srvB.Close()
	cmd := exec.Command(os.Args[0], "load", "-session")
	cmd.Env = append(os.Environ(), runAsMainEnv+"=1")
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()

	c := load.NewSessionClient(stdin, stdout)
	ctx := context.Background()
	for name, url := range map[string]string{"a": srvA.URL, "b": srvB.URL} {
		tg, err := load.ParseTarget(url + "/")
		require.NoError(t, err)
		s := load.DefaultSpec()
		s.Target, s.Connections = tg, 4
		o, err := c.Open(ctx, name, s)
		require.NoError(t, err)
		assert.Equal(t, 4, o.Connections)
	}
	_, err = c.Window(ctx, "c", time.Second)
	var re *load.ReplyError
	require.ErrorAs(t, err, &re)
	for _, name := range []string{"a", "b", "a", "b"} {
		w, err := c.Window(ctx, name, 100*time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, name, w.Pool)
		assert.Positive(t, w.Requests)
		assert.Zero(t, w.Errors.Total())
		res, err := w.Result()
		require.NoError(t, err)
		assert.Equal(t, w.Requests, res.Histogram.TotalCount())
	}
	tot, err := c.Close("a")
	require.NoError(t, err)
	assert.Equal(t, 2, tot.Windows)
	require.NoError(t, c.Quit())
	require.NoError(t, cmd.Wait(), stderr.String())
}

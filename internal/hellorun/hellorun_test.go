package hellorun_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

func tops(t *testing.T, names ...string) []topology.Topology {
	t.Helper()
	ts, err := topology.Parse(strings.Join(names, ","))
	require.NoError(t, err)
	return ts
}

func layout(t *testing.T) topology.Layout {
	t.Helper()
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	return l
}

func TestBuild(t *testing.T) {
	b := testenv.HelloBin(t)
	fi, err := os.Stat(b)
	require.NoError(t, err)
	assert.NotZero(t, fi.Mode().Perm()&0o111, "executable")
	assert.Equal(t, "hello", filepath.Base(b))
}

func TestStartStop(t *testing.T) {
	l := layout(t)
	var stderr bytes.Buffer
	var mu sync.Mutex
	s, err := hellorun.Start(context.Background(), hellorun.Config{
		Bin: testenv.HelloBin(t), Layout: l, Topologies: tops(t, topology.Seed()...), GOMAXPROCS: 1,
		Stderr: writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) }),
	})
	require.NoError(t, err)
	assert.Positive(t, s.Pid())
	assert.False(t, s.Exited())
	info, err := s.Ready()
	require.NoError(t, err)
	assert.Equal(t, 3, info.Listeners)
	assert.Equal(t, 1, info.GOMAXPROCS)
	assert.Equal(t, s.Pid(), info.Pid)
	assert.Positive(t, info.WorkUnitsPerMicrosecond)
	assert.Equal(t, info.WorkUnitsPerMicrosecond, s.WorkCalibration())

	// Exactly the seed listeners: HTTP, FastCGI TCP, FastCGI unix.
	require.NoError(t, hellorun.Probe(context.Background(), "tcp", l.HTTP, false))
	require.NoError(t, hellorun.Probe(context.Background(), "tcp", l.FCGITCP, true))
	require.NoError(t, hellorun.Probe(context.Background(), "unix", l.FCGIUnix, true))
	assert.Error(t, hellorun.Probe(context.Background(), "tcp", l.FastTCP, true), "fast listener should be off")
	_, err = os.Lstat(l.HTTPUnix)
	assert.True(t, os.IsNotExist(err), "http-unix listener should be off")

	require.NoError(t, s.Stop())
	require.NoError(t, s.Stop(), "Stop twice")
	assert.True(t, s.Exited())
	_, err = os.Lstat(l.FCGIUnix)
	assert.True(t, os.IsNotExist(err))

	mu.Lock()
	defer mu.Unlock()
	assert.Contains(t, stderr.String(), "GOMAXPROCS 1")
	assert.Contains(t, stderr.String(), hellorun.ReadyLine)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestStartPinned(t *testing.T) {
	l := layout(t)
	s, err := hellorun.Start(context.Background(), hellorun.Config{Bin: testenv.HelloBin(t), Layout: l, Topologies: tops(t, "standalone"), CPUs: "0"})
	require.NoError(t, err)
	defer s.Stop()
	aff, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Pid()))
	require.NoError(t, err)
	assert.Regexp(t, `Cpus_allowed_list:\s+0\n`, string(aff))
	assert.Contains(t, s.Tail(), "hello: ready", "the pid is hello's own, not taskset's")

	_, err = hellorun.Start(context.Background(), hellorun.Config{Bin: testenv.HelloBin(t), Layout: layout(t), Topologies: tops(t, "standalone"), CPUs: "4095"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "taskset")
}

// TestStartTLS: the HTTPS listener opens with the run's certificate and
// settings, and is ready once a real request over TLS was answered.
func TestStartTLS(t *testing.T) {
	for _, set := range []tlscert.Settings{{}, {Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}} {
		t.Run(set.String(), func(t *testing.T) {
			l := layout(t)
			pair, err := tlscert.Generate(t.TempDir(), set.Key)
			require.NoError(t, err)
			s, err := hellorun.Start(context.Background(), hellorun.Config{
				Bin: testenv.HelloBin(t), Layout: l, Topologies: tops(t, "standalone-tls", "nginx-tls-http"), GOMAXPROCS: 1,
				TLS: &tlscert.Setup{Pair: pair, Settings: set},
			})
			require.NoError(t, err)
			defer s.Stop()
			info, err := s.Ready()
			require.NoError(t, err)
			assert.Equal(t, 2, info.Listeners, "HTTPS for standalone-tls, HTTP for nginx-tls-http")

			cfg, err := tlscert.ClientConfig(pair.Cert, set)
			require.NoError(t, err)
			cfg.ServerName = "127.0.0.1"
			c, err := tls.Dial("tcp", l.HTTPS, cfg)
			require.NoError(t, err)
			defer c.Close()
			cs := c.ConnectionState()
			assert.Equal(t, set.GoVersion(), cs.Version)
			assert.Equal(t, set.Suite(), cs.CipherSuite)
		})
	}
	_, err := hellorun.Start(context.Background(), hellorun.Config{Bin: testenv.HelloBin(t), Layout: layout(t), Topologies: tops(t, "standalone-tls")})
	assert.ErrorContains(t, err, "starting cmd/hello: the HTTPS listener needs a certificate")
}

func TestStartFailures(t *testing.T) {
	b := testenv.HelloBin(t)

	t.Run("port in use", func(t *testing.T) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		l := layout(t)
		l.FCGITCP = busy.Addr().String()
		_, err = hellorun.Start(context.Background(), hellorun.Config{Bin: b, Layout: l, Topologies: tops(t, topology.Seed()...)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "exited before it was ready")
		assert.Contains(t, err.Error(), "hello: -fcgi-tcp: address "+busy.Addr().String()+" already in use", "stderr tail attached")
	})

	t.Run("someone else's socket survives", func(t *testing.T) {
		l := layout(t)
		other, err := net.Listen("unix", l.FCGIUnix)
		require.NoError(t, err)
		defer other.Close()
		_, err = hellorun.Start(context.Background(), hellorun.Config{Bin: b, Layout: l, Topologies: tops(t, "nginx-fcgi-unix")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "another server is listening")
		c, err := net.Dial("unix", l.FCGIUnix)
		require.NoError(t, err)
		c.Close()
	})

	t.Run("nothing to run", func(t *testing.T) {
		_, err := hellorun.Start(context.Background(), hellorun.Config{Bin: b, Layout: layout(t), Topologies: tops(t, "nginx-return")})
		assert.ErrorContains(t, err, "none of the topologies needs it")
		_, err = hellorun.Start(context.Background(), hellorun.Config{Layout: layout(t), Topologies: tops(t, "standalone")})
		assert.ErrorContains(t, err, "no binary")
	})

	t.Run("bad extra flag", func(t *testing.T) {
		_, err := hellorun.Start(context.Background(), hellorun.Config{Bin: b, Layout: layout(t), Topologies: tops(t, "standalone"), ExtraArgs: []string{"-bogus"}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "flag provided but not defined: -bogus")
	})
}

// fakeHello writes a script standing in for a hello that misbehaves.
func fakeHello(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hello")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return path
}

func TestStartDeadlines(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	t.Run("never ready", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		began := time.Now()
		_, err := hellorun.Start(ctx, hellorun.Config{Bin: fakeHello(t, "echo starting >&2; exec sleep 30"), Layout: layout(t), Topologies: tops(t, "standalone")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `wrote no "hello: ready" line`)
		assert.Contains(t, err.Error(), "starting", "stderr tail attached")
		assert.Less(t, time.Since(began), 5*time.Second)
	})
	t.Run("ready but not serving", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := hellorun.Start(ctx, hellorun.Config{Bin: fakeHello(t, "echo 'hello: ready' >&2; exec sleep 30"), Layout: layout(t), Topologies: tops(t, "standalone")})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is not serving its http listener tcp:127.0.0.1:")
		assert.Contains(t, err.Error(), "connection refused")
	})
}

func TestProbeChecksTheResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("something else"))
	}))
	defer srv.Close()
	err := hellorun.Probe(context.Background(), "tcp", srv.Listener.Addr().String(), false)
	assert.ErrorContains(t, err, `body "something else"`)
}

func TestParseReady(t *testing.T) {
	tests := []struct {
		name, line string
		want       hellorun.Ready
		err        string
	}{
		{"today's", "hello: ready: 3 listeners, GOMAXPROCS 2, go1.26.8, pid 12345, work 14.79 units/us\n",
			hellorun.Ready{Listeners: 3, GOMAXPROCS: 2, GoVersion: "go1.26.8", Pid: 12345, WorkUnitsPerMicrosecond: 14.79}, ""},
		{"before work", "hello: ready: 1 listeners, GOMAXPROCS 8, go1.26.8, pid 7",
			hellorun.Ready{Listeners: 1, GOMAXPROCS: 8, GoVersion: "go1.26.8", Pid: 7}, ""},
		{"a field it does not know", "hello: ready: 1 listeners, GOMAXPROCS 8, go1.27rc1, pid 7, work 0.5 units/us, tls off",
			hellorun.Ready{Listeners: 1, GOMAXPROCS: 8, GoVersion: "go1.27rc1", Pid: 7, WorkUnitsPerMicrosecond: 0.5}, ""},
		{"bare", "hello: ready", hellorun.Ready{}, "not a ready line"},
		{"another line", "hello: http on tcp 127.0.0.1:1 (-http, GOMAXPROCS 1)", hellorun.Ready{}, "not a ready line"},
		{"bad pid", "hello: ready: 1 listeners, GOMAXPROCS 8, go1.26.8, pid x", hellorun.Ready{}, `bad field "pid x"`},
		{"bad work", "hello: ready: 1 listeners, GOMAXPROCS 8, go1.26.8, pid 7, work NaN units/us", hellorun.Ready{}, `bad field "work NaN units/us"`},
		{"zero work", "hello: ready: 1 listeners, GOMAXPROCS 8, go1.26.8, pid 7, work 0 units/us", hellorun.Ready{}, "bad field"},
		{"no pid", "hello: ready: 1 listeners, GOMAXPROCS 8", hellorun.Ready{}, "no listener count or pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := hellorun.ParseReady(tt.line)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"

	"github.com/topobench/topobench/internal/supervise"
)

// The test binary doubles as the supervised program: "helper serve ADDR".
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "helper" && os.Args[2] == "serve" {
		ln, err := net.Listen("tcp", os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, os.Getenv("GOMAXPROCS"))
		})}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM)
		go func() { <-sig; srv.Close() }()
		_ = srv.Serve(ln)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func TestUsageErrors(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no program", []string{"-listen", "127.0.0.1:7070"}, "no program given"},
		{"no listen", []string{"--", self}, "-listen is required"},
		{"all interfaces", []string{"-listen", ":7070", "--", self}, "not a loopback address"},
		{"private address", []string{"-listen", "10.0.0.1:7070", "--", self}, "not a loopback address"},
		{"another address than allowed", []string{"-listen", "10.0.0.1:7070", "-allow-host", "10.0.0.2", "--", self}, "not a loopback address"},
		{"allow-host a name", []string{"-listen", "127.0.0.1:7070", "-allow-host", "node-b", "--", self}, "not an IP address"},
		{"bad signal", []string{"-listen", "127.0.0.1:7070", "-stop-signal", "KILL", "--", self}, `-stop-signal "KILL"`},
		{"relative program", []string{"-listen", "127.0.0.1:7070", "--", "hello"}, "want an absolute path"},
		{"bad ready", []string{"-listen", "127.0.0.1:7070", "-ready", "8080", "--", self}, `ready target "8080"`},
		{"check with program", []string{"-check", "http://127.0.0.1:1/", self}, "-check takes no program"},
		{"unknown flag", []string{"-nope"}, "flag provided but not defined: -nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tt.args, io.Discard, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			var ue usageError
			assert.ErrorAs(t, err, &ue)
		})
	}
}

func TestCheck(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(up.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "hello: not running", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)

	require.NoError(t, run(context.Background(), []string{"-check", up.URL}, io.Discard, io.Discard))
	err := run(context.Background(), []string{"-check", down.URL}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503 Service Unavailable: hello: not running")
}

// TestServeRestartAndShutdown runs procd as the compose file does: start at
// once, turn healthy, restart with a GOMAXPROCS, stop everything on SIGTERM.
func TestServeRestartAndShutdown(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	api, app := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testenv.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{
			"-listen", api, "-env", "GOMAXPROCS", "-ready", "http://" + app + "/",
			"--", self, "helper", "serve", app,
		}, io.Discard, &stderr)
	}()

	health := "http://" + api + "/healthz"
	require.Eventually(t, func() bool {
		return supervise.Check(context.Background(), health, time.Second) == nil
	}, 20*time.Second, 20*time.Millisecond, "never healthy: %s", stderr.String())

	// A value the Go runtime would ignore is refused; the program keeps running.
	_, err = supervise.Client{URL: "http://" + api}.Restart(context.Background(), "GOMAXPROCS=abc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `400 Bad Request: env GOMAXPROCS=abc: GOMAXPROCS must be a positive integer, not "abc"`)

	st, err := supervise.Client{URL: "http://" + api}.Restart(context.Background(), "GOMAXPROCS=4")
	require.NoError(t, err)
	resp, err := http.Get("http://" + app + "/")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, "4", string(body))

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("procd did not exit after its context ended")
	}
	assert.Contains(t, stderr.String(), "ready (pid")
	assert.Contains(t, stderr.String(), "stopped")
	assert.ErrorIs(t, syscall.Kill(st.Pid, 0), syscall.ESRCH, "program outlived procd")
	_, err = net.Dial("tcp", api)
	assert.Error(t, err, "API still listening")
}

func TestFirstStartFailureExits(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	addr := taken.Addr().String()
	err = run(context.Background(), []string{
		"-listen", freeAddr(t), "-ready", "tcp:" + freeAddr(t),
		"--", self, "helper", "serve", addr,
	}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited before it was ready: exit status 1")
	assert.Contains(t, err.Error(), "address already in use")
}

// TestInheritedBadGOMAXPROCS: the program inherits procd's environment, so
// procd refuses to start with a GOMAXPROCS the Go runtime would ignore.
func TestInheritedBadGOMAXPROCS(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	t.Setenv("GOMAXPROCS", "abc")
	err = run(context.Background(), []string{
		"-listen", freeAddr(t), "-env", "GOMAXPROCS", "--", self, "helper", "serve", freeAddr(t),
	}, io.Discard, io.Discard)
	require.Error(t, err)
	assert.Equal(t, `environment GOMAXPROCS=abc: GOMAXPROCS must be a positive integer, not "abc"`, err.Error())
	var ve *supervise.ValueError
	assert.ErrorAs(t, err, &ve)
	var ue usageError
	assert.ErrorAs(t, err, &ue)
}

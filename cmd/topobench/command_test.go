package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// TestCompareCommandTarget runs the user's own service (examples/jsonapi)
// through the sweep as a command target, standalone and behind nginx:
// started with the block's processor value, pinned, parity checked
// against its own standalone answer to -path, measured with its CPU time
// as the server's and nginx's as nginx's, and stopped with nothing left.
func TestCompareCommandTarget(t *testing.T) {
	bin := testenv.JSONAPIBin(t) // skips under -short
	spec := "cmd:" + bin + " -listen {addr}"
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-targets", spec, "-topologies", "standalone,nginx-http",
		"-gomaxprocs", "1", "-reps", "1", "-duration", "2s", "-warmup", "1s",
		"-connections", "20", "-path", "/api/x", "-out", dir,
		"-fail-if", "nginx-http ratio < 0.001", "-fail-if", "nginx-http nginx-us > 1e9"}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	// The bounds are judged on the report the sweep wrote: held, each a line.
	assert.Regexp(t, `fail-if "nginx-http ratio < 0.001": held: \S.* nginx-http ratio \d`, stderr.String())
	assert.Regexp(t, `fail-if "nginx-http nginx-us > 1e9": held: \S.* nginx-http nginx-us \d`, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "cmd-jsonapi GOMAXPROCS=1: "+spec+" pid ")
	assert.Contains(t, out, "parity: 2 topologies answer GET and HEAD /api/x as the service does standalone")
	assert.FileExists(t, filepath.Join(dir, "logs", "cmd-jsonapi-g1.log"))
	assert.NotContains(t, out, "cmd/hello", "no block of this plan runs cmd/hello")

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "/api/x", env.Plan.Path)
	assert.Equal(t, []string{spec}, env.Plan.Targets)
	assert.Contains(t, env.Targets["cmd-jsonapi"], bin+" -listen ", "the command as it ran")
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	require.Len(t, runs, 2)
	seen := map[string]bool{}
	for _, r := range runs {
		name := r.Name()
		require.False(t, r.Failed(), "%s: %s", name, r.Error)
		assert.Equal(t, spec, r.Target)
		assert.True(t, strings.HasPrefix(name, "cmd-jsonapi-g1-"), name)
		assert.True(t, strings.HasSuffix(r.URL, "/api/x"), r.URL)
		assert.Positive(t, r.Figures.Requests, name)
		assert.Zero(t, r.Figures.Errors.Status, "%s: every answer a 2xx", name)
		require.NotNil(t, r.CPU, name)
		require.NotNil(t, r.CPU.Server, name)
		assert.Positive(t, r.CPU.Server.Total(), "%s: the service's CPU is the server's", name)
		if r.Topology == "nginx-http" {
			require.NotNil(t, r.CPU.Nginx, name)
			assert.Positive(t, r.CPU.Nginx.Total(), name)
		}
		if allowed.Len() >= 2 {
			assert.NotEmpty(t, r.ServerCPUs, "%s: -cpus auto pins the servers", name)
		}
		seen[r.Topology] = true
	}
	assert.Equal(t, map[string]bool{"standalone": true, "nginx-http": true}, seen)

	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| target cmd-jsonapi | your own service: ")
	assert.Contains(t, string(md), "standalone cmd-jsonapi serves")
	assert.Contains(t, string(md), "'"+spec+"'", "the command line as a shell reads it back")
	assert.Empty(t, leftovers(t, bin), "the service must be stopped")
	assert.Empty(t, leftovers(t, dir))
	socks, _ := filepath.Glob(filepath.Join(dir, "sock", "*"))
	assert.Empty(t, socks, "sockets left behind")
}

// TestCompareCommandNotListening: a command that never listens stops the
// run after the start deadline, once, with one line naming it, the tail of
// its stderr below, and nothing it started left running.
func TestCompareCommandNotListening(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a command target's start deadline (30 s)")
	}
	script := filepath.Join(t.TempDir(), "deaf.sh")
	marker := fmt.Sprintf("%d.25", 1000+os.Getpid()%10000) // a sleep of its own, to look for
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho \"deaf: not listening on $2\" >&2\nsleep "+marker+" &\nwait\n"), 0o755))
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-targets", "cmd:" + script + " -listen {addr}", "-topologies", "standalone,nginx-http",
		"-gomaxprocs", "1", "-reps", "1", "-duration", "1s", "-warmup", "0s",
		"-connections", "10", "-path", "/api/x", "-out", dir}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err))
	first, rest, _ := strings.Cut(err.Error(), "\n")
	assert.Contains(t, first, "starting cmd:"+script+" -listen {addr}")
	assert.Contains(t, first, "no answer to GET /api/x on ")
	assert.Contains(t, rest, "    deaf: not listening on ", "the tail of its stderr, indented")
	// Waited out once, by the calibration (-cpus auto) that started it
	// first: not read as a slow calibration and waited out again.
	assert.Contains(t, first, "cpus auto: starting the servers for the calibration")
	assert.NotContains(t, stderr.String(), "did not finish within")
	assert.Empty(t, leftovers(t, script))
	assert.Empty(t, leftovers(t, "sleep "+marker))
	_, runs, lerr := results.Load(dir)
	require.NoError(t, lerr)
	assert.Empty(t, runs, "nothing measured")
}

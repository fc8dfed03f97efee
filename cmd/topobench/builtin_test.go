package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// TestCompareBuiltin runs the sweep with the built-in engine as its own
// child process (this test binary acting as topobench, see TestMain):
// one topology, open loop at a small rate with a handler wait, and checks
// the record carries the engine's summary and the histogram files sit
// beside it.
func TestCompareBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep")
	}
	t.Setenv(runAsMainEnv, "1")
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-load", "builtin",
		"-topologies", "standalone", "-gomaxprocs", "1", "-reps", "1", "-connections", "4",
		"-rate", "200", "-wait", "5ms", "-duration", "1s", "-warmup", "0s",
		"-free-ports", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))

	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	r := runs[0]
	require.False(t, r.Failed(), r.Error)
	f := r.Figures
	require.NotNil(t, f, "the record holds the engine's figures")
	assert.True(t, f.Histogram)
	assert.InDelta(t, 200, f.TargetRate, 0)
	assert.InDelta(t, 200, float64(f.Requests), 30, "1 s at 200 req/s")
	assert.Zero(t, f.Errors.Total())
	assert.GreaterOrEqual(t, f.P50, 5*time.Millisecond, "every answer waited 5 ms")

	h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+hdr.EncodedExt))
	require.NoError(t, err)
	assert.Equal(t, f.Requests, h.TotalCount())
	hgrm, err := os.Open(filepath.Join(dir, results.RunsDir, r.Name()+hdr.PercentilesExt))
	require.NoError(t, err)
	defer hgrm.Close()
	rows, err := hdr.ReadPercentiles(hgrm)
	require.NoError(t, err)
	assert.Equal(t, f.Requests, rows[len(rows)-1].TotalCount)
	tmp, _ := filepath.Glob(filepath.Join(dir, results.RunsDir, ".*"))
	assert.Empty(t, tmp, "no temporary files left under runs/")
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Latency with the built-in engine")

	// The engine ran from the spec kept beside the record, and a person
	// can run it again: here against a fresh handler (the sweep's servers
	// are gone), the URL replacing the spec's target.
	specPath := filepath.Join(dir, results.RunsDir, r.Name()+"."+loadgen.SpecSuffix)
	assert.Equal(t, []string{"load", "-spec", specPath}, r.Command[len(r.Command)-5:len(r.Command)-2], "%q", r.Command)
	b, err := os.ReadFile(specPath)
	require.NoError(t, err)
	spec, err := load.ReadSpec(bytes.NewReader(b))
	require.NoError(t, err, string(b))
	assert.InDelta(t, 200, spec.Rate, 0)
	assert.Equal(t, 5*time.Millisecond, spec.Wait)
	assert.Equal(t, time.Second, spec.Duration)
	assert.Empty(t, spec.Out, "a rerun writes nothing into the results")
	srv := httptest.NewServer(hello.NewHandler())
	defer srv.Close()
	stdout.Reset()
	stderr.Reset()
	require.NoError(t, run(context.Background(), []string{"load", "-spec", specPath, srv.URL + "/"}, &stdout, &stderr), stderr.String())
	var again load.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &again), stdout.String())
	assert.Equal(t, "open", again.Mode)
	assert.InDelta(t, 200, again.TargetRate, 0)
	assert.Contains(t, again.Target, "?wait=5ms")
	assert.Zero(t, again.Errors.Total())
}

// TestCompare2016 runs the 2016 preset on one topology at 1% of its
// requests: the probe (80 requests of 10 s), then the three target-rate
// scenarios, through the report's 2016 table.
func TestCompare2016(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep of about 40 s")
	}
	t.Setenv(runAsMainEnv, "1")
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2016", "-scale", "0.01",
		"-topologies", "standalone", "-reps", "1", "-warmup", "0s", "-free-ports", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))
	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 4)
	for _, r := range runs {
		require.NotNil(t, r.Figures, r.Name())
		assert.True(t, r.Figures.Histogram, r.Name())
		assert.FileExists(t, filepath.Join(dir, results.RunsDir, r.Name()+hdr.EncodedExt))
		if r.Probe {
			assert.EqualValues(t, 80, r.Figures.Sent)
			assert.EqualValues(t, 80, r.Figures.Concurrent, "cmd/hello serves every request at once")
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "## Compared with the 2016 JVM study")
	assert.Contains(t, string(md), "| **topobench standalone** (GOMAXPROCS=")
	charts, _ := filepath.Glob(filepath.Join(dir, "latency-g*-c100-slow-requests.svg"))
	assert.Len(t, charts, 1)
}

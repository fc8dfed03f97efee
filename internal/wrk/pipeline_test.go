package wrk_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/report"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// TestPipeline runs the real wrk twice against an in-process Go server,
// records the runs as the sweep does (through Result.Figures) and renders
// the report from disk.
func TestPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs wrk")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Hello World\n"))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	dir := filepath.Join(t.TempDir(), "sweep")
	require.NoError(t, results.Create(dir))
	script, err := wrk.WriteScript(dir)
	require.NoError(t, err)
	env := results.Env{
		Command: []string{"topobench", "compare", "-reps", "2"},
		Start:   time.Now(),
		Plan: results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Reps: 2,
			Duration: time.Second, Threads: 1, Connections: []int{4}, Timeout: 2 * time.Second},
	}
	results.FillHost(&env)
	require.NoError(t, results.WriteEnv(dir, env))

	for rep := 1; rep <= 2; rep++ {
		o := wrk.Options{URL: "http://" + ln.Addr().String() + "/", Threads: 1, Connections: 4,
			Duration: time.Second, Timeout: 2 * time.Second, Latency: true, Script: script}
		start := time.Now()
		res, raw, err := wrk.Run(context.Background(), o)
		require.NoError(t, err)
		run := results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 4, Rep: rep}, Start: start, Wall: time.Since(start),
			Command: o.Command(), URL: o.URL, Figures: new(res.Figures())}
		require.NoError(t, results.WriteRun(dir, run, raw))
	}
	env.End = time.Now()
	require.NoError(t, results.WriteEnv(dir, env))

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	require.NoError(t, report.Write(dir, env, runs))

	s := analysis.Summarize(env, runs)
	c, ok := s.Cell(analysis.Key{Group: analysis.Group{Target: "go", GOMAXPROCS: 1, Connections: 4, Load: "wrk"}, Topology: "standalone"})
	require.True(t, ok)
	assert.Equal(t, 2, c.Reps)
	assert.Positive(t, c.ReqPerSec.Min)
	assert.Equal(t, 2, c.Latency.Runs, "the script's percentiles reach the report")
	assert.LessOrEqual(t, c.Latency.P50, c.Latency.P99)
	assert.Zero(t, c.Errors.Total())
	md, err := os.ReadFile(filepath.Join(dir, report.MarkdownFile))
	require.NoError(t, err)
	assert.Contains(t, string(md), "| standalone | ")
	raw, err := os.ReadFile(results.RawPath(dir, runs[0]))
	require.NoError(t, err)
	assert.Contains(t, string(raw), "topobench: begin 1")
}

package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// togetherClient answers together with windows cut into the slices asked
// for, each pool at its own rate, and logs the commands.
type fakeTogether struct {
	fakeClient
	rates map[string]float64
}

func (c *fakeTogether) Together(_ context.Context, pools []string, ws load.WindowSpec) ([]engineWindow, []byte, error) {
	c.log = append(c.log, "together "+strings.Join(pools, ",")+" "+ws.Duration.String())
	n := max(ws.Slices, 1)
	d := ws.Duration / time.Duration(n)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var out []engineWindow
	for i, p := range pools {
		rate := c.rates[p]
		w := engineWindow{
			Figures: results.Figures{Requests: int64(rate * ws.Duration.Seconds()), ReqPerSec: rate, Latency: true, Histogram: true, P50: time.Duration(1e9 / rate), P99: time.Duration(3e9 / rate), Max: time.Second},
			CPU:     results.Usage{User: 0.5}, CallCPU: 1.5, Window: ws.Duration, Start: t0,
			Lead: ws.Lead, LeadAnswers: 100, Drain: 30 * time.Millisecond, Drained: 7, Reconnects: int64(i),
		}
		for k := range ws.Slices {
			sl := load.Slice{Index: k + 1, Start: t0.Add(time.Duration(k) * d), DurationNs: int64(d), Requests: int64(rate * d.Seconds() * float64(k+1)),
				CPUUserNs: int64(10 * time.Millisecond),
				Counters: []load.CounterReading{
					{Path: "/a", Start: "1000", End: "1000"}, // cpuacct.usage in ns: no time
					{Path: "/b", Start: "0", End: "250000000"},
					{Path: "/b/nginx", Start: "0", End: "150000000"},
					{Path: "/b/nginx/user", Start: "0", End: "80000000"}, // ticks: they only divide the total
					{Path: "/b/nginx/sys", Start: "0", End: "40000000"},
					{Path: "/b/server", Start: "0", End: "100000000"},
					{Path: "/b/server/user", Start: "0", End: "70000000"},
					{Path: "/b/server/sys", Start: "0", End: "30000000"},
				}}
			if p == "standalone" {
				sl.Counters[0].End = "500001000"
			}
			w.Slices = append(w.Slices, sl)
		}
		out = append(out, w)
	}
	return out, []byte(`{"windows":[]}`), nil
}

// TestEngineTogether: a together's answer becomes the runs of its pairs:
// without slices one run a pool; with slices one a pool and a slice, each
// with its slice's answers, rate and start, its own side's servers' CPU
// (its counter file's), the lead on the first and the drain on the last;
// with no runs (a warmup) nothing is recorded.
func TestEngineTogether(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "engine")
	require.NoError(t, os.WriteFile(cat, []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755))
	require.NoError(t, results.Create(dir))
	client := &fakeTogether{rates: map[string]float64{"standalone": 1000, "nginx-http": 400}}
	p := smallPlan("standalone", "nginx-http")
	p.Paired = &results.Paired{Pairs: 1, Duet: true}
	g := &builtinGen{plan: p, bin: cat, dir: dir, client: func(w io.Writer, r io.Reader) engineClient { return client }}
	sess, err := g.Begin(context.Background(), true)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.End() })
	ts, ok := sess.(TogetherSession)
	require.True(t, ok, "the engine's session runs pools together")
	ctx := context.Background()
	for _, top := range []string{"standalone", "nginx-http"} {
		require.NoError(t, sess.Open(ctx, top, results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin}, "http://127.0.0.1:8080/"))
	}
	pools := []string{"standalone", "nginx-http"}
	counters := []Counters{{Total: "/a"}, {Total: "/b"}}
	parts := []Counters{{Total: "/a"}, {Total: "/b", Nginx: [3]string{"/b/nginx", "/b/nginx/user", "/b/nginx/sys"}, Server: [3]string{"/b/server", "/b/server/user", "/b/server/sys"}}}

	t.Run("warmup", func(t *testing.T) {
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: time.Second}, nil, counters)
		require.NoError(t, err)
	})
	t.Run("one window", func(t *testing.T) {
		runs := [][]*results.Run{{{}, {}}}
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: 2 * time.Second, Lead: time.Second}, runs, []Counters{{}, {}})
		require.NoError(t, err)
		assert.InDelta(t, 1000, runs[0][0].Figures.ReqPerSec, 1e-9)
		assert.InDelta(t, 400, runs[0][1].Figures.ReqPerSec, 1e-9)
		assert.Equal(t, time.Second, runs[0][1].Lead)
		assert.Contains(t, strings.Join(runs[0][0].Command, " "), "together standalone,nginx-http 2s lead 1s")
	})
	t.Run("slices", func(t *testing.T) {
		runs := [][]*results.Run{{{}, {}}, {{}, {}}, {{}, {}}}
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: 3 * time.Second, Lead: time.Second, Slices: 3}, runs, counters)
		require.NoError(t, err)
		assertSliceRuns(t, runs)
	})
	t.Run("slices with nginx's and the backend's parts", func(t *testing.T) {
		runs := [][]*results.Run{{{}, {}}, {{}, {}}}
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: 2 * time.Second, Slices: 2}, runs, parts)
		require.NoError(t, err)
		for k, rs := range runs {
			sa, tp := rs[0].CPU, rs[1].CPU
			assert.Nil(t, sa.Nginx, "slice %d: a side without parts has none", k+1)
			assert.Empty(t, sa.PartsSpan)
			require.NotNil(t, tp.Nginx)
			require.NotNil(t, tp.Server)
			assert.Equal(t, results.SpanWindow, tp.PartsSpan)
			assert.InDelta(t, 0.10, tp.Nginx.User, 1e-9, "the exact total, divided as the ticks divide it")
			assert.InDelta(t, 0.05, tp.Nginx.System, 1e-9)
			assert.InDelta(t, 0.07, tp.Server.User, 1e-9)
			assert.InDelta(t, 0.03, tp.Server.System, 1e-9)
			assert.InDelta(t, 0.25, tp.Servers.Seconds, 1e-9, "the total is the group's")
			assert.Equal(t, rs[1].Figures.Requests, rs[1].PartsRequests(), "parts over the slice serve the slice's requests")
		}
	})
	t.Run("a part the session did not read", func(t *testing.T) {
		runs := [][]*results.Run{{{}, {}}, {{}, {}}}
		bad := []Counters{{Total: "/a"}, {Total: "/b", Nginx: [3]string{"/b/nginx", "/b/nginx/user", "/missing"}}}
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: 2 * time.Second, Slices: 2}, runs, bad)
		require.ErrorContains(t, err, "did not read /missing")
	})
	t.Run("slices the engine did not cut", func(t *testing.T) {
		runs := [][]*results.Run{{{}, {}}, {{}, {}}}
		_, err := ts.Together(ctx, pools, load.WindowSpec{Duration: 2 * time.Second, Slices: 3}, runs, counters)
		require.ErrorContains(t, err, "3 slices of standalone, want 2")
	})
	t.Run("a pool not open", func(t *testing.T) {
		_, err := ts.Together(ctx, []string{"standalone", "nginx-fcgi-tcp"}, load.WindowSpec{Duration: time.Second}, nil, counters)
		require.ErrorContains(t, err, `no pool "nginx-fcgi-tcp" open`)
	})
	assert.Equal(t, []string{"together standalone,nginx-http 1s", "together standalone,nginx-http 2s", "together standalone,nginx-http 3s",
		"together standalone,nginx-http 2s", "together standalone,nginx-http 2s", "together standalone,nginx-http 2s"},
		slicesOf(client.log, "together "))
}

// assertSliceRuns checks the runs of a together of 3 slices of two pools
// at 1000 and 400 requests a second: each slice's own rate and start,
// each side's servers' CPU from its own counter, the window's latency on
// the last slice, the lead on the first and the drain on the last.
func assertSliceRuns(t *testing.T, runs [][]*results.Run) {
	t.Helper()
	for k, rs := range runs {
		for i, run := range rs {
			require.NotNil(t, run.Figures, "slice %d pool %d", k+1, i)
			want := []float64{1000, 400}[i] * float64(k+1)
			assert.InDelta(t, want, run.Figures.ReqPerSec, 1e-6, "slice %d's own rate", k+1)
			if k < 2 {
				assert.False(t, run.Figures.Latency, "slice %d: the window's latency goes to the last slice alone", k+1)
			} else {
				assert.True(t, run.Figures.Latency, "the last slice has the window's latency")
				assert.Equal(t, time.Duration(1e9/[]float64{1000, 400}[i]), run.Figures.P50)
				assert.Equal(t, time.Second, run.Figures.Max)
			}
			assert.Equal(t, time.Date(2026, 11, 27, 12, 0, k, 0, time.UTC), run.Start)
			require.NotNil(t, run.CPU.Servers)
			assert.Equal(t, results.SpanWindow, run.CPU.Servers.Span)
			assert.Equal(t, time.Second, run.CPU.Servers.Window)
			assert.InDelta(t, []float64{0.5, 0.25}[i], run.CPU.Servers.Seconds, 1e-9, "each side's from its own counter")
			assert.InDelta(t, 1.5, run.CPU.LoadCall, 1e-9, "the whole command's, as the harness samples it")
			assert.Contains(t, strings.Join(run.Command, " "), "slices 3")
			if k == 0 {
				assert.Equal(t, time.Second, run.Lead, "the lead on the first slice")
				assert.Equal(t, int64(i), run.Reconnects)
			} else {
				assert.Zero(t, run.Lead)
			}
			if k == 2 {
				assert.Equal(t, 30*time.Millisecond, run.Drain, "the drain on the last")
			} else {
				assert.Zero(t, run.Drain)
			}
		}
	}
}

func slicesOf(log []string, prefix string) []string {
	var out []string
	for _, l := range log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestEngineTogetherReal: the sweep's client to a real session runs two
// pools together, cut into slices, against real servers.
func TestEngineTogetherReal(t *testing.T) {
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "Hello World\n") }))
	t.Cleanup(fast.Close)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, "Hello World\n")
	}))
	t.Cleanup(slow.Close)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- load.ServeSession(context.Background(), inR, outW, 1); outW.Close() }()
	t.Cleanup(func() { inW.Close(); require.NoError(t, <-done) })
	c := newEngineClient(inW, outR)
	ctx := context.Background()
	for name, srv := range map[string]*httptest.Server{"fast": fast, "slow": slow} {
		spec := load.DefaultSpec()
		tg, err := load.ParseURL(srv.URL + "/")
		require.NoError(t, err)
		spec.Target, spec.Connections, spec.Threads = tg, 4, 2
		require.NoError(t, c.Open(ctx, name, spec))
	}
	tc, ok := c.(togetherClient)
	require.True(t, ok)
	ws, raw, err := tc.Together(ctx, []string{"fast", "slow"}, load.WindowSpec{Duration: 600 * time.Millisecond, Lead: 100 * time.Millisecond, Slices: 3})
	require.NoError(t, err)
	require.Len(t, ws, 2)
	assert.Contains(t, string(raw), `"slices"`)
	for i, w := range ws {
		// A slice's edge the clock reached only after the window's end
		// is not taken: the last slice then spans both.
		require.NotEmpty(t, w.Slices, "pool %d", i)
		require.LessOrEqual(t, len(w.Slices), 3, "pool %d", i)
		if len(w.Slices) < 3 {
			t.Logf("pool %d: %d slices (an edge's timer woke after the window ended)", i, len(w.Slices))
		}
		var sum, ns int64
		for _, sl := range w.Slices {
			sum += sl.Requests
			ns += sl.DurationNs
		}
		assert.Equal(t, w.Figures.Requests, sum)
		assert.Equal(t, w.Window.Nanoseconds(), ns, "pool %d: the slices cover the window", i)
	}
	assert.Greater(t, ws[0].Figures.ReqPerSec, ws[1].Figures.ReqPerSec, "the fast server answers more")
}

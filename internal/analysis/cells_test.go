package analysis

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
)

// engine is a run of the built-in engine on schedule sc with the given
// p50 (the other percentiles scaled from it).
func engine(top string, sc results.Schedule, rep int, p50 time.Duration, f func(*results.Figures)) results.Run {
	fig := &results.Figures{Requests: 1000, Sent: 1000, ReqPerSec: sc.Rate * 0.99, TargetRate: sc.Rate, Histogram: true,
		Latency: true, Mean: p50, P50: p50, P90: 2 * p50, P99: 3 * p50, P999: 4 * p50, P9999: 5 * p50, Max: 6 * p50}
	if f != nil {
		f(fig)
	}
	return results.Run{Cell: results.Cell{Topology: top, GOMAXPROCS: 2, Connections: 100, Load: results.LoadBuiltin, Schedule: sc, Rep: rep}, Figures: fig}
}

func TestLatencyCells(t *testing.T) {
	probe := results.Schedule{Name: Probe2016, Probe: true, Wait: 10 * time.Second, Requests: 800}
	slow := results.Schedule{Name: Slow2016, Rate: 1000, Wait: time.Second, Requests: 1000}
	p := results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{2}, Connections: []int{100},
		Loads: []results.Generator{results.LoadBuiltin}, Schedules: []results.Schedule{probe, slow}, Reps: 3}
	ms := time.Millisecond
	runs := []results.Run{
		engine("nginx-http", slow, 1, 10*ms, func(f *results.Figures) { f.Late, f.Errors.Timeout = 5, 1 }),
		engine("nginx-http", slow, 2, 30*ms, func(f *results.Figures) { f.Late, f.Dropped = 7, 2 }),
		engine("nginx-http", slow, 3, 20*ms, func(f *results.Figures) { f.Latency = false; f.Max = time.Hour }),
		engine("standalone", slow, 1, ms, nil),
		engine("standalone", probe, 1, 10*time.Second, func(f *results.Figures) { f.Concurrent, f.Sent = 700, 800 }),
		engine("standalone", probe, 2, 10*time.Second, func(f *results.Figures) { f.Concurrent, f.Sent = 512, 790 }),
		engine("standalone", probe, 3, 10*time.Second, func(f *results.Figures) { f.Concurrent, f.Sent = 600, 800 }),
		with(engine("standalone", slow, 2, ms, nil), func(r *results.Run) { r.Error = "engine crashed" }),
		ok("standalone", 2, 1, 5000), // wrk keeps no histogram: not an engine cell
	}
	s := Summarize(results.Env{Plan: p}, runs)
	require.Len(t, s.Engine, 3)
	var keys []string
	for _, c := range s.Engine {
		keys = append(keys, c.Key.Path())
	}
	assert.Equal(t, []string{
		"standalone/gomaxprocs=2/connections=100/load=builtin/scenario=concurrency-level/wait=10s",
		"standalone/gomaxprocs=2/connections=100/load=builtin/scenario=slow-requests/rate=1000/wait=1s",
		"nginx-http/gomaxprocs=2/connections=100/load=builtin/scenario=slow-requests/rate=1000/wait=1s",
	}, keys, "the probe (no rate) first, then by rate; topologies in the plan's order")

	pr := s.Engine[0]
	assert.Equal(t, 3, pr.Runs)
	assert.Equal(t, int64(512), pr.Concurrent, "the smallest count over runs")
	assert.Equal(t, int64(790), pr.Sent, "of that run's requests")

	http := s.Engine[2]
	assert.Equal(t, 3, http.Runs)
	assert.Equal(t, int64(3000), http.Requests)
	assert.Equal(t, 1000.0, http.TargetRate)
	assert.Equal(t, 990.0, http.ReqPerSec)
	assert.Equal(t, 20*ms, http.P50, "median of the runs with samples: 10 and 30 ms")
	assert.Equal(t, 60*ms, http.P99)
	assert.Equal(t, 100*ms, http.P9999)
	assert.Equal(t, 180*ms, http.Max, "the largest of the runs with samples")
	assert.Equal(t, int64(12), http.Late)
	assert.Equal(t, int64(2), http.Dropped)
	assert.Equal(t, results.Errors{Timeout: 1}, http.Errors)
	assert.Zero(t, http.Concurrent, "not a probe")
	assert.Equal(t, []string{
		filepath.Join("runs", "g2-nginx-http-c100-builtin-slow-requests-r1"+hdr.EncodedExt),
		filepath.Join("runs", "g2-nginx-http-c100-builtin-slow-requests-r2"+hdr.EncodedExt),
		filepath.Join("runs", "g2-nginx-http-c100-builtin-slow-requests-r3"+hdr.EncodedExt),
	}, http.Histograms, "relative to the results directory, one per run")

	st := s.Engine[1]
	assert.Equal(t, 1, st.Runs, "the failed run is left out")

	assert.Empty(t, Summarize(results.Env{Plan: p}, runs[8:]).Engine, "a sweep of wrk has no engine cells")
}

func TestReferenceCells(t *testing.T) {
	_, rows, err := Reference2013()
	require.NoError(t, err)
	p := plan([]string{"standalone", "nginx-http", "nginx-fcgi-tcp"}, 1)
	runs := append(runsAt("standalone", 1, 40000, 40000, 40000), runsAt("nginx-http", 1, 16000, 16000, 16000)...)
	s := Summarize(finished(p), runs)
	require.Len(t, s.Reference, len(rows), "every 2013 row, measured or not")

	st := s.RefCell(Key{wrkGroup(1), "standalone"})
	require.NotNil(t, st)
	assert.Equal(t, 1.0, st.RefRatio)
	require.NotNil(t, st.ReqPerSec)
	assert.Equal(t, 40000.0, *st.ReqPerSec)

	http := s.RefCell(Key{wrkGroup(1), "nginx-http"})
	require.NotNil(t, http)
	require.NotNil(t, http.Ratio)
	assert.InDelta(t, 0.4, *http.Ratio, 1e-12)
	var ref2013Standalone, ref2013HTTP float64
	for _, r := range rows {
		if r.GOMAXPROCS == 1 && r.Topology == "standalone" {
			ref2013Standalone = r.ReqPerSec
		}
		if r.GOMAXPROCS == 1 && r.Topology == "nginx-http" {
			ref2013HTTP = r.ReqPerSec
		}
	}
	assert.Equal(t, ref2013HTTP, http.RefReqPerSec)
	assert.InDelta(t, ref2013HTTP/ref2013Standalone, http.RefRatio, 1e-12)

	tcp := s.RefCell(Key{wrkGroup(1), "nginx-fcgi-tcp"})
	require.NotNil(t, tcp, "a 2013 row this sweep did not measure")
	assert.Nil(t, tcp.ReqPerSec)
	assert.Nil(t, tcp.Ratio)

	assert.Nil(t, s.RefCell(Key{wrkGroup(1), "nginx-http-unix"}), "2013 did not measure it")
	other := wrkGroup(1)
	other.Connections = 1000
	assert.Nil(t, s.RefCell(Key{other, "nginx-http"}), "2013 ran -c5000 only")

	t.Run("without standalone no ratio", func(t *testing.T) {
		s := Summarize(finished(p), runsAt("nginx-http", 1, 16000))
		http := s.RefCell(Key{wrkGroup(1), "nginx-http"})
		require.NotNil(t, http.ReqPerSec)
		assert.Nil(t, http.Ratio)
	})
	t.Run("a record from before connections was a dimension", func(t *testing.T) {
		var old []results.Run
		for _, r := range runs {
			r.Connections = 0
			old = append(old, r)
		}
		s := Summarize(finished(p), old)
		require.NotNil(t, s.RefCell(Key{wrkGroup(1), "nginx-http"}).Ratio, "the plan's single -c is the run's")
	})
}

func TestSeedCSV(t *testing.T) {
	tests := []struct {
		name, data string
		err        string
	}{
		{"good", "# source\n# machine\nserver,a\nx,1\n", ""},
		{"wrong first column", "name,a\nx,1\n", "unexpected header"},
		{"wrong width", "server,a,b\nx,1,2\n", "unexpected header"},
		{"header only", "server,a\n", "unexpected header"},
		{"ragged row", "server,a\nx,1,2\n", "wrong number of fields"},
		{"empty", "", "unexpected header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, recs, err := seedCSV("test", tt.data, 2, "server")
			if tt.err != "" {
				assert.ErrorContains(t, err, "test CSV: ")
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, []string{"source", "machine"}, src)
			assert.Equal(t, [][]string{{"x", "1"}}, recs)
		})
	}
	assert.Panics(t, func() { referenceCSV("name,a\n", 2, "server") }, "an embedded file that does not parse is a programming error")
}

func TestSeeds2016And2009(t *testing.T) {
	src, recs := Seed2016()
	assert.NotEmpty(t, src)
	for _, r := range recs {
		assert.Len(t, r, 13)
		assert.NotEmpty(t, r[0], "every row names its server")
	}
	src, recs = Seed2009()
	assert.NotEmpty(t, src)
	conns := map[string]bool{}
	for _, r := range recs {
		conns[r[1]] = true
	}
	assert.Equal(t, map[string]bool{"30": true, "100": true, "1000": true, "5000": true}, conns, "the 2009 preset's connection counts")
}

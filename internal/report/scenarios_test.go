package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
)

var (
	fakeProbe    = results.Schedule{Name: analysis.Probe2016, Probe: true, Wait: 10 * time.Second, Requests: 800}
	fakeSlow     = results.Schedule{Name: analysis.Slow2016, Rate: 1000, Wait: time.Second, Requests: 10000}
	fakeHighConc = results.Schedule{Name: analysis.HighConc2016, Rate: 10000, Wait: 100 * time.Millisecond, Requests: 10000}
	fakeOverhead = results.Schedule{Name: analysis.Overhead2016, Rate: 100000, Requests: 10000}
)

// engineRun is a made-up run of the built-in engine: latencies in ms
// from base, scaled per percentile.
func engineRun(top string, sc results.Schedule, rep int, base float64, errs results.Errors, late, dropped, concurrent int64) results.Run {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	f := &results.Figures{
		Sent: int64(sc.Requests), Requests: int64(sc.Requests) - errs.Total() - dropped,
		TargetRate: sc.Rate, ReqPerSec: sc.Rate * 0.99, Late: late, Dropped: dropped, Errors: errs,
		Latency: true, Histogram: true,
		Mean: ms(base * 1.01), P50: ms(base), P90: ms(base * 1.05), P99: ms(base * 1.2), P999: ms(base * 1.5), P9999: ms(base * 1.9), Max: ms(base * 2.5),
	}
	if sc.Probe {
		f.TargetRate, f.ReqPerSec, f.Concurrent = 0, 80, concurrent
	}
	return results.Run{
		Cell: results.Cell{Target: "go", Topology: top, GOMAXPROCS: 2, Connections: 100, Load: results.LoadBuiltin, Schedule: sc, Rep: rep},
		URL:  "http://127.0.0.1:8080/", Figures: f,
	}
}

// scenarioCases are fake sweeps of the 2016 and the 2009 presets.
func scenarioCases() map[string]func() (results.Env, []results.Run) {
	start := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	env := results.Env{Command: []string{"topobench", "compare"}, Start: start, End: start.Add(4 * time.Minute),
		CPUModel: "Fake CPU", CPUs: 2, Kernel: "6.1.0-test", GoVersion: "go1.26", NginxVersion: "1.22.1", WrkVersion: "4.1.0"}
	return map[string]func() (results.Env, []results.Run){
		"scenarios2016": func() (results.Env, []results.Run) {
			e := env
			e.Plan = results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{2}, Connections: []int{100},
				Loads: []results.Generator{results.LoadBuiltin}, Schedules: []results.Schedule{fakeProbe, fakeSlow, fakeHighConc, fakeOverhead},
				Scenario: "2016", MaxConnections: 5000, Reps: 1, Duration: 30 * time.Second, Warmup: 2 * time.Second, Threads: 100, Timeout: 2 * time.Second}
			runs := []results.Run{
				engineRun("standalone", fakeProbe, 1, 10003, results.Errors{}, 0, 0, 800),
				engineRun("standalone", fakeSlow, 1, 1000.5, results.Errors{}, 896, 0, 0),
				engineRun("standalone", fakeHighConc, 1, 101, results.Errors{}, 900, 0, 0),
				engineRun("standalone", fakeOverhead, 1, 2.5, results.Errors{}, 12, 0, 0),
				engineRun("nginx-http", fakeProbe, 1, 10009, results.Errors{Connect: 3}, 0, 0, 512),
				engineRun("nginx-http", fakeSlow, 1, 1002, results.Errors{}, 896, 0, 0),
				engineRun("nginx-http", fakeHighConc, 1, 130, results.Errors{Timeout: 100}, 4461, 0, 0),
				engineRun("nginx-http", fakeOverhead, 1, 800, results.Errors{Read: 2}, 3501, 7, 0),
			}
			return e, runs
		},
		"scenarios2009": func() (results.Env, []results.Run) {
			e := env
			e.Plan = results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{30, 100, 1000, 5000},
				Scenario: "2009", Reps: 1, Duration: 5 * time.Second, Warmup: time.Second, Threads: 100, Timeout: 2 * time.Second}
			var runs []results.Run
			for _, top := range []string{"standalone", "nginx-http"} {
				for i, c := range e.Plan.Connections {
					rate := 40000.0 - float64(i)*3000
					p99 := time.Duration(c) * 20 * time.Microsecond
					if top == "nginx-http" {
						rate, p99 = rate/2, 2*p99
					}
					res := &results.Figures{Requests: int64(rate * 5), ReqPerSec: rate, Latency: true, Max: 3 * p99, P50: p99 / 4, P99: p99}
					if c == 5000 && top == "nginx-http" {
						res.Errors.Timeout = 42
					}
					runs = append(runs, results.Run{Cell: results.Cell{Target: "go", Topology: top, GOMAXPROCS: 1, Connections: c, Load: results.LoadWrk, Rep: 1},
						URL: "http://127.0.0.1:8080/", Figures: res})
				}
			}
			return e, runs
		},
	}
}

// TestScenarioGolden renders summary.md of the fake 2016 and 2009 sweeps
// and compares it with testdata/golden/CASE/summary.md (-update rewrites).
func TestScenarioGolden(t *testing.T) {
	for name, mk := range scenarioCases() {
		t.Run(name, func(t *testing.T) {
			env, runs := mk()
			var b bytes.Buffer
			require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
			golden := filepath.Join("testdata", "golden", name, MarkdownFile)
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./internal/report -update")
			assert.Equal(t, string(want), b.String())
		})
	}
}

// TestScenarioTables checks the new tables' figures by hand, so the golden
// files cannot drift into accepting wrong numbers.
func TestScenarioTables(t *testing.T) {
	cases := scenarioCases()
	t.Run("2016", func(t *testing.T) {
		s := summarize(cases["scenarios2016"]())
		src, rows := s.table2016()
		require.NotEmpty(t, src)
		require.Len(t, rows, 2+21, "2 topologies, then the 21 JVM servers")
		assert.Equal(t, []string{"**topobench standalone** (GOMAXPROCS=2)", "Go", "800 of 800", "0",
			"1010.505", "2501.250", "0", "102.010", "252.500", "0 (0.0%)", "2.525", "6.250", "0"}, rows[0])
		assert.Equal(t, "512 of 800", rows[1][2])
		assert.Equal(t, "3", rows[1][3], "probe errors")
		assert.Equal(t, "100 (1.0%)", rows[1][9], "high-conc errors, count and share")
		assert.Equal(t, "2, 7 dropped", rows[1][12])
		assert.Equal(t, []string{"2016: comsat-jetty-servlet-sync", "fiber-blocking", "54001", "0", "1000.777", "1088.422", "0",
			"110.509", "1103.102", "0%", "189.742", "3015.705", "0"}, rows[2])
		assert.Equal(t, "–", rows[2+8][7], "tomcat rows have no high-concurrency figures")

		lt := s.latencyTables()
		require.Len(t, lt, 4, "one table per schedule")
		var overhead []string
		for _, tb := range lt {
			if strings.Contains(tb.Heading, analysis.Overhead2016) {
				overhead = tb.Rows[1]
			}
		}
		assert.Equal(t, []string{"nginx-http", "100,000", "99,000", "9,991", "1", "808 ms", "800 ms", "840 ms", "960 ms", "1.20 s", "1.52 s", "2.00 s",
			"0/2/0/0", "0", "3501", "7"}, overhead)
	})
	t.Run("2009", func(t *testing.T) {
		s := summarize(cases["scenarios2009"]())
		src, header, rows := s.table2009()
		require.NotEmpty(t, src)
		assert.Equal(t, []string{"server", "c30 req/s", "c30 p99", "c100 req/s", "c100 p99", "c1000 req/s", "c1000 p99", "c5000 req/s", "c5000 p99"}, header)
		require.Len(t, rows, 2+8)
		assert.Equal(t, []string{"**topobench standalone** (GOMAXPROCS=1)", "40,000", "600 µs", "37,000", "2.00 ms", "34,000", "20.0 ms", "31,000", "100 ms"}, rows[0])
		assert.Equal(t, "15,500 (errors)", rows[1][7])
		assert.Equal(t, []string{"2009: java-mina2-noparse", "30,631", "–", "26,846", "–", "31,911", "–", "31,653", "–"}, rows[2+5])
		assert.Equal(t, []string{"2009: go-2009", "14,080", "26 ms", "14,748", "33 ms", "15,799", "47 ms", "16,110", "9005 ms"}, rows[2+7])
	})
	t.Run("none", func(t *testing.T) {
		env, runs := analysistest.Fixture(t)
		s := summarize(env, runs)
		_, rows := s.table2016()
		assert.Empty(t, rows)
		_, _, rows = s.table2009()
		assert.Empty(t, rows)
		assert.Empty(t, s.latencyTables())
	})
}

// TestScenarioCharts writes real histograms beside fake records and checks
// the latency-by-percentile and p99-against-concurrency charts appear.
func TestScenarioCharts(t *testing.T) {
	cases := scenarioCases()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, results.RunsDir), 0o755))
	env, runs := cases["scenarios2016"]()
	for i, r := range runs {
		h := hdr.New()
		for v := int64(1); v <= 10000; v++ {
			require.NoError(t, h.RecordValue(v*int64(i+1)))
		}
		require.NoError(t, hdr.WriteFiles(filepath.Join(dir, results.RunsDir), r.Name(), h))
	}
	require.NoError(t, Write(dir, env, runs))
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	require.NoError(t, err)
	for _, name := range []string{"latency-g2-c100-slow-requests", "latency-g2-c100-concurrency-level"} {
		assert.FileExists(t, filepath.Join(dir, name+".svg"))
		assert.FileExists(t, filepath.Join(dir, name+".png"))
		assert.Contains(t, string(md), "("+name+".svg)")
	}
	svg, err := os.ReadFile(filepath.Join(dir, "latency-g2-c100-slow-requests.svg"))
	require.NoError(t, err)
	assert.Contains(t, string(svg), "99.999%")

	dir2 := t.TempDir()
	env, runs = cases["scenarios2009"]()
	require.NoError(t, Write(dir2, env, runs))
	assert.FileExists(t, filepath.Join(dir2, ConcChart+".svg"))
}

package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

// csvRecords renders summary.csv and reads it back as maps by column.
func csvRecords(t *testing.T, s summary) ([]string, []map[string]string) {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, s.WriteCSV(&b))
	all, err := csv.NewReader(&b).ReadAll()
	require.NoError(t, err, "every row as wide as the header")
	require.NotEmpty(t, all)
	var out []map[string]string
	for _, row := range all[1:] {
		m := map[string]string{}
		for i, v := range row {
			m[all[0][i]] = v
		}
		out = append(out, m)
	}
	return all[0], out
}

// TestCSVDimensions: every dimension is a column of its own, filled for
// every row, so a tool can group by any of them.
func TestCSVDimensions(t *testing.T) {
	envs, runs := scenarioCases()["scenarios2016"]()
	header, rows := csvRecords(t, summarize(envs, runs))
	assert.Equal(t, []string{"target", "gomaxprocs", "connections", "load", "upstream_keepalive", "scenario", "rate", "fraction", "wait", "work", "topology"}, header[:11])
	require.Len(t, rows, 8)
	type dims struct{ target, g, conns, load, scenario, rate, wait, topology string }
	var got []dims
	for _, r := range rows {
		got = append(got, dims{r["target"], r["gomaxprocs"], r["connections"], r["load"], r["scenario"], r["rate"], r["wait"], r["topology"]})
	}
	assert.Equal(t, []dims{
		{"go", "2", "100", "builtin", "concurrency-level", "", "10s", "standalone"},
		{"go", "2", "100", "builtin", "concurrency-level", "", "10s", "nginx-http"},
		{"go", "2", "100", "builtin", "slow-requests", "1000", "1s", "standalone"},
		{"go", "2", "100", "builtin", "slow-requests", "1000", "1s", "nginx-http"},
		{"go", "2", "100", "builtin", "realistic-high-concurrency", "10000", "100ms", "standalone"},
		{"go", "2", "100", "builtin", "realistic-high-concurrency", "10000", "100ms", "nginx-http"},
		{"go", "2", "100", "builtin", "realistic-overhead", "100000", "", "standalone"},
		{"go", "2", "100", "builtin", "realistic-overhead", "100000", "", "nginx-http"},
	}, got, "groups by rate, then the plan's topologies")

	_, rows = csvRecords(t, summarize(scenarioCases()["scenarios2009"]()))
	var conns []string
	for _, r := range rows {
		if r["topology"] == "nginx-http" {
			conns = append(conns, r["connections"])
		}
	}
	assert.Equal(t, []string{"30", "100", "1000", "5000"}, conns)
}

// TestCSVFigures checks a row's figures against the summary they come
// from, and that unknown figures are empty rather than zero.
func TestCSVFigures(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	s := summarize(env, runs)
	_, rows := csvRecords(t, s)
	require.Len(t, rows, len(s.Cells))
	num := func(v string) float64 {
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err, v)
		return f
	}
	for i, c := range s.Cells {
		r := rows[i]
		t.Run(c.Topology, func(t *testing.T) {
			assert.Equal(t, c.Topology, r["topology"])
			assert.Equal(t, strconv.Itoa(c.Reps), r["reps"])
			assert.InDelta(t, c.ReqPerSec.Median, num(r["reqps_median"]), 0.005)
			assert.InDelta(t, *c.ReqPerSec.CILo, num(r["reqps_ci_lo"]), 0.005)
			assert.InDelta(t, *c.ReqPerSec.CIHi, num(r["reqps_ci_hi"]), 0.005)
			assert.InDelta(t, c.RatioToStandalone.Center, num(r["ratio_to_standalone"]), 5e-5)
			assert.Equal(t, strconv.FormatBool(c.RatioToStandalone.Differs), r["ratio_differs"])
			assert.InDelta(t, c.CPU.Server.Center, num(r["cpu_server_us"]), 0.005)
			assert.InDelta(t, c.CPU.Servers.Center, num(r["cpu_servers_us"]), 0.005)
			assert.InDelta(t, *c.CPU.Servers.Lo, num(r["cpu_servers_us_ci_lo"]), 0.005)
			assert.InDelta(t, c.CostRatio.Center, num(r["cost_ratio_to_standalone"]), 5e-5)
			assert.InDelta(t, *c.CostRatio.Lo, num(r["cost_ratio_ci_lo"]), 5e-5)
			assert.InDelta(t, *c.CostRatio.Hi, num(r["cost_ratio_ci_hi"]), 5e-5)
			assert.Equal(t, "6", r["cpu_runs"])
			assert.Equal(t, strconv.Itoa(c.NoisyRuns), r["noisy_runs"])
			assert.Equal(t, strings.Join(c.Notes, ";"), r["notes"])
			assert.InDelta(t, float64(c.Latency.P99)/1e6, num(r["p99_ms"]), 0.0005)
			if c.Topology == analysis.Standalone {
				assert.Empty(t, r["vs_next"], "the fastest has nothing above it")
				assert.Empty(t, r["vs_next_settled"])
				assert.Equal(t, "1", r["rank"])
			}
			if c.Ceiling {
				assert.Empty(t, r["rank"], "ceilings are not ranked")
			}
			if ref := s.RefCell(c.Key); ref != nil {
				assert.InDelta(t, ref.RefReqPerSec, num(r["ref2013_reqps"]), 0.005)
			} else {
				assert.Empty(t, r["ref2013_reqps"])
			}
		})
	}

	t.Run("a cell without successful runs", func(t *testing.T) {
		var some []results.Run
		for _, r := range runs {
			if r.Topology == "nginx-http" || r.Topology == "standalone" {
				r.Figures, r.Error = nil, "boom"
			}
			r.CPU = nil
			some = append(some, r)
		}
		_, rows := csvRecords(t, summarize(env, some))
		var http map[string]string
		for _, r := range rows {
			if r["topology"] == "nginx-http" {
				http = r
			}
		}
		require.NotNil(t, http)
		for _, col := range []string{"reqps_median", "reqps_min", "reqps_ci_lo", "spread", "ratio_to_standalone", "ratio_differs", "cost_ratio_to_standalone", "cost_ratio_ci_lo", "rank", "p50_ms", "cpu_load_us", "cpu_servers_us"} {
			assert.Empty(t, http[col], col)
		}
		assert.Equal(t, "0", http["reps"])
		assert.Equal(t, "6", http["failed"])
		assert.Equal(t, "0", http["cpu_runs"])
		assert.Equal(t, "0", http["latency_runs"])
	})
}

// TestJSONRoundTrip: summary.json decodes into analysis.Summary and
// encodes back to the same bytes: every figure a tool reads is there,
// under one name.
func TestJSONRoundTrip(t *testing.T) {
	for name, mk := range map[string]func() (results.Env, []results.Run){
		"isolated": func() (results.Env, []results.Run) { return analysistest.IsolatedFixture(t) },
		"2016":     scenarioCases()["scenarios2016"],
	} {
		t.Run(name, func(t *testing.T) {
			env, runs := mk()
			s := summarize(env, runs)
			var b bytes.Buffer
			require.NoError(t, s.WriteJSON(&b))
			var got analysis.Summary
			dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
			dec.DisallowUnknownFields()
			require.NoError(t, dec.Decode(&got))
			var again bytes.Buffer
			require.NoError(t, summary{got}.WriteJSON(&again))
			assert.Equal(t, b.String(), again.String())

			require.Len(t, got.Cells, len(s.Cells))
			for i, c := range s.Cells {
				assert.Equal(t, c.Key, got.Cells[i].Key)
				assert.Equal(t, c.ReqPerSec, got.Cells[i].ReqPerSec)
				assert.Equal(t, c.RatioToStandalone, got.Cells[i].RatioToStandalone)
				assert.Equal(t, c.Notes, got.Cells[i].Notes)
			}
			assert.Equal(t, s.Warnings, got.Warnings)
			assert.Equal(t, s.Engine, got.Engine)
			assert.Equal(t, s.Env, got.Env)
		})
	}
}

// TestBenchDimensions reads bench.txt of a sweep of the built-in engine
// back with benchfmt: each run's name carries every dimension that has a
// value, so benchstat can slice by scenario or rate.
func TestBenchDimensions(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	var b bytes.Buffer
	require.NoError(t, WriteBench(&b, env, runs))
	r := benchfmt.NewReader(bytes.NewReader(b.Bytes()), BenchFile)
	var names []string
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			names = append(names, string(rec.Name))
			_, ok := rec.Value("req/s")
			assert.True(t, ok)
			assert.Equal(t, "-t100 -c100 -d30s --timeout 2s", rec.GetConfig("load"))
		case *benchfmt.SyntaxError:
			t.Fatalf("%v", rec)
		}
	}
	require.NoError(t, r.Err())
	require.Len(t, names, len(runs))
	assert.Equal(t, "Topobench/topology=standalone/target=go/gomaxprocs=2/connections=100/load=builtin/scenario=concurrency-level/wait=10s", names[0])
	assert.Equal(t, "Topobench/topology=nginx-http/target=go/gomaxprocs=2/connections=100/load=builtin/scenario=realistic-overhead/rate=100000", names[7])
}

// TestBenchLatencyLeftOut: a run without latency samples has no latency
// values in bench.txt (not zeros benchstat would average in), and a run
// without a rate no sec/op.
func TestBenchLatencyLeftOut(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	r := runs[0]
	r.Figures = &results.Figures{Requests: 0, ReqPerSec: 0, Errors: results.Errors{Timeout: 500}}
	var b bytes.Buffer
	require.NoError(t, WriteBench(&b, env, []results.Run{r}))
	rd := benchfmt.NewReader(bytes.NewReader(b.Bytes()), BenchFile)
	var units []string
	for rd.Scan() {
		if res, ok := rd.Result().(*benchfmt.Result); ok {
			for _, v := range res.Values {
				units = append(units, v.Unit)
			}
		}
	}
	assert.Equal(t, []string{"req/s", "socket-errors", "timeouts", "non2xx"}, units)

	failed := runs[0]
	failed.Figures, failed.Error = nil, ""
	b.Reset()
	require.NoError(t, WriteBench(&b, env, []results.Run{failed}))
	assert.Contains(t, b.String(), "# BenchmarkTopobench/topology=standalone/target=go/gomaxprocs=1/connections=5000/load=wrk rep 1 failed: no load generator result\n")
}

func TestHeader(t *testing.T) {
	start := time.Date(2026, 11, 24, 4, 14, 0, 0, time.FixedZone("X", 3600))
	for _, tt := range []struct {
		name            string
		env             results.Env
		ran, load, cmdl string
	}{
		{"finished", results.Env{Command: []string{"topobench", "compare"}, Start: start, End: start.Add(73*time.Minute + 400*time.Millisecond),
			Plan: results.Plan{Threads: 100, Connections: []int{5000}, Duration: 15 * time.Second, Timeout: 2 * time.Second}},
			"2026-11-24 03:14:00 UTC to 04:27:00 UTC (1h13m0s)", "wrk -t100 -c5000 -d15s --timeout 2s", "topobench compare"},
		{"running", results.Env{Start: start, Plan: results.Plan{Threads: 4, Connections: []int{30, 100}, Duration: time.Second, Close: true}},
			"from 2026-11-24 03:14:00 UTC (did not finish)", `wrk -t4 -c30,100 -d1s -H "Connection: close"`, ""},
		{"over TLS", results.Env{Plan: results.Plan{Threads: 2, Connections: []int{10}, Duration: time.Second, Close: true,
			TLS: &tlscert.Settings{Version: tlscert.TLS12}}},
			"", `wrk -t2 -c10 -d1s -H "Connection: close"; over TLS 1.2, p256, resume off, each path over TLS compared with standalone-tls`, ""},
		{"nothing known", results.Env{}, "", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmdl, ran, load := header(tt.env)
			assert.Equal(t, tt.cmdl, cmdl)
			assert.Equal(t, tt.ran, ran)
			assert.Equal(t, tt.load, load)
		})
	}
}

func TestMachineRows(t *testing.T) {
	env := results.Env{CPUModel: "Fake | CPU", CPUs: 2, Limits: map[string]string{"nofile_soft": "20000", "nofile_hard": "40000"},
		Sysctls: map[string]string{"net.ipv4.tcp_fin_timeout": "15", "net.core.somaxconn": "4096"},
		Targets: map[string]string{"java-pool": "5 threads", "erlang": "one process\nper connection"}}
	rows := machine(env, "none: one loopback")
	assert.Equal(t, [][2]string{
		{"CPU", `Fake \| CPU (2 logical CPUs)`},
		{"kernel", "unknown"}, {"Go", "unknown"}, {"nginx", "unknown"}, {"wrk", "unknown"},
		{"limits", "nofile_hard 40000, nofile_soft 20000"},
		{"isolation", "none: one loopback"},
		{"target erlang", "one process per connection"},
		{"target java-pool", "5 threads"},
	}, rows, "escaped for a table, sorted")
}

// TestSysctlTable: under -isolate netns the namespaces' settings, which are
// what the run listened under, stand beside the host's.
func TestSysctlTable(t *testing.T) {
	host := map[string]string{"net.ipv4.tcp_fin_timeout": "60", "net.core.somaxconn": "4096"}
	for _, tc := range []struct {
		name  string
		netns map[string]string
		head  []string
		rows  [][]string
	}{
		{"loopback", nil, []string{"sysctl", "value"},
			[][]string{{"net.core.somaxconn", "4096"}, {"net.ipv4.tcp_fin_timeout", "60"}}},
		{"netns", map[string]string{"net.core.somaxconn": "65535", "net.ipv4.tcp_tw_reuse": "1"},
			[]string{"sysctl", "host", "in the run's network namespaces"},
			[][]string{{"net.core.somaxconn", "4096", "65535"}, {"net.ipv4.tcp_fin_timeout", "60", "–"}, {"net.ipv4.tcp_tw_reuse", "–", "1"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, rows := sysctlTable(results.Env{Sysctls: host, NetnsSysctls: tc.netns})
			assert.Equal(t, tc.head, head)
			assert.Equal(t, tc.rows, rows)
		})
	}
}

func TestInShort(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	s := summarize(env, runs)
	got := s.inShort(wrkGroup(1))
	assert.True(t, strings.HasPrefix(got, "**GOMAXPROCS=1:** standalone Go serves 37,410 req/s. Behind nginx, fastest first: nginx-http 15,120 (0.40 ± ∞ of standalone), "), got)
	assert.Contains(t, got, "nginx-fcgi-unix 13,306 (0.36 ± ∞ of standalone), nginx-fcgi-tcp 10,210 (0.27 ± ∞ of standalone, with errors).")
	assert.Contains(t, got, "With 3 runs an interval is unknown (± ∞): a ratio needs 4 runs of each.")
	assert.True(t, strings.HasSuffix(got, "The nginx-return ceiling is 59,012 req/s."), got)

	ie, ir := analysistest.IsolatedFixture(t)
	got = summarize(ie, ir).inShort(wrkGroup(1))
	assert.Contains(t, got, "At 95% confidence these runs do not settle the order of nginx-http / nginx-fcgi-unix, nginx-fcgi-unix / nginx-fcgi-tcp.")
	assert.NotContains(t, got, "± ∞", "six rounds: every interval known")

	var noSt []results.Run
	for _, r := range runs {
		if r.Topology != analysis.Standalone {
			noSt = append(noSt, r)
		}
	}
	got = summarize(env, noSt).inShort(wrkGroup(8))
	assert.True(t, strings.HasPrefix(got, "**GOMAXPROCS=8:** standalone was not measured. Behind nginx, fastest first: nginx-fcgi-unix 12,479 (with errors), "), got)
	assert.NotContains(t, got, "of standalone", "no ratio without standalone")
}

func TestRoundsText(t *testing.T) {
	c := func(n int) analysis.Cell { return analysis.Cell{Reps: n} }
	assert.Equal(t, "3 runs", roundsText([]analysis.Cell{c(3), c(3)}))
	assert.Equal(t, "2–6 runs", roundsText([]analysis.Cell{c(6), c(2), c(4)}))
}

// TestScenario2007Golden renders summary.md of a fake 2007 sweep (the
// Java and Erlang servers standalone, short connections) and compares it
// with testdata/golden/scenarios2007/summary.md (-update rewrites it).
func TestScenario2007Golden(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	env := results.Env{Command: []string{"topobench", "compare", "-scenario", "2007"}, Start: start, End: start.Add(3 * time.Minute),
		CPUModel: "Fake CPU", CPUs: 2, Kernel: "6.1.0-test", GoVersion: "go1.26", NginxVersion: "1.22.1", WrkVersion: "4.1.0",
		Targets: map[string]string{"java-threads": "thread per connection, OpenJDK 17", "java-pool": "5 threads", "erlang": "process per connection, +S 1"},
		Plan: results.Plan{Targets: []string{"go", "java-threads", "java-pool", "erlang"}, Topologies: []string{"standalone"}, GOMAXPROCS: []int{1},
			Connections: []int{1000}, Scenario: "2007", Close: true, Reps: 2, Duration: 10 * time.Second, Warmup: time.Second, Threads: 100, Timeout: 2 * time.Second}}
	rates := map[string][]float64{"go": {21000, 20500}, "java-threads": {9000, 9400}, "java-pool": {4100, 3900}, "erlang": {12000, 12500}}
	var runs []results.Run
	for _, target := range env.Plan.Targets {
		for i, v := range rates[target] {
			f := &results.Figures{Requests: int64(v * 10), ReqPerSec: v, Latency: true,
				P50: time.Duration(1e12 / v), P99: time.Duration(5e12 / v), Max: time.Duration(9e12 / v)}
			if target == "java-pool" {
				f.Errors.Timeout = 7
			}
			runs = append(runs, results.Run{Cell: results.Cell{Target: target, Topology: "standalone", GOMAXPROCS: 1, Connections: 1000, Rep: i + 1},
				URL: "http://127.0.0.1:8080/", Figures: f})
		}
	}
	var b bytes.Buffer
	require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
	golden := filepath.Join("testdata", "golden", "scenarios2007", MarkdownFile)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
		require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./internal/report -update")
	assert.Equal(t, string(want), b.String())

	out := b.String()
	assert.Contains(t, out, "## Compared with the 2007 thread-model test")
	var headings []string
	for _, l := range strings.Split(out, "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			headings = append(headings, h)
		}
	}
	assert.Equal(t, []string{"GOMAXPROCS=1 connections=1000", "target=erlang GOMAXPROCS=1 connections=1000",
		"target=java-pool GOMAXPROCS=1 connections=1000", "target=java-threads GOMAXPROCS=1 connections=1000"}, headings, "Go first, then the targets by name")
	assert.Contains(t, out, "**target=erlang GOMAXPROCS=1 connections=1000:** standalone erlang serves 12,250 req/s.")
	assert.Contains(t, out, "| erlang-process-per-connection | erlang | 472 | 2.12 s | 12,250 | 81.6 ms | 408 ms | none |")
	assert.Contains(t, out, "| java-fixed-pool-5-threads | java-pool | 968 | 1.03 s | 4,000 | 250 ms | 1.25 s | timeout 14 |")
	assert.NotContains(t, out, "no run recorded", "no FastCGI path is expected of the other targets")
}

// TestBenchCPU: a run with a CPU record has the CPU µs per request of
// the load generator (whole and user) and of the servers in bench.txt,
// and the engine's ready connections per wake-up, for benchstat.
func TestBenchCPU(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	for _, tc := range []struct {
		name string
		cpu  *results.CPU
		rpw  float64
		want map[string]float64
	}{
		{"no CPU record", nil, 0, map[string]float64{}},
		{"wrk through nginx", &results.CPU{Load: results.Usage{User: 0.5, System: 1.5}, Nginx: &results.Usage{User: 1, System: 1}, Server: &results.Usage{User: 2, System: 1}}, 0,
			map[string]float64{"load-us/req": 20, "load-user-us/req": 5, "servers-us/req": 50}},
		{"engine standalone", &results.CPU{Load: results.Usage{User: 1, System: 1}, Server: &results.Usage{User: 2, System: 1}}, 2.5,
			map[string]float64{"load-us/req": 20, "load-user-us/req": 10, "servers-us/req": 30, "ready/wake": 2.5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runs[0]
			r.Figures = &results.Figures{Requests: 100_000, ReqPerSec: 10_000, ReadyPerWake: tc.rpw}
			r.CPU = tc.cpu
			var b bytes.Buffer
			require.NoError(t, WriteBench(&b, env, []results.Run{r}))
			rd := benchfmt.NewReader(bytes.NewReader(b.Bytes()), BenchFile)
			got := map[string]float64{}
			for rd.Scan() {
				if res, ok := rd.Result().(*benchfmt.Result); ok {
					for _, v := range res.Values {
						if strings.Contains(v.Unit, "us/req") || v.Unit == "ready/wake" {
							got[v.Unit] = v.Value
						}
					}
				}
			}
			require.Len(t, got, len(tc.want))
			for u, v := range tc.want {
				assert.InDelta(t, v, got[u], 1e-9, u)
			}
		})
	}
}

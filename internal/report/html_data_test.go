package report

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// wobble spreads a cell's repetitions by ±1%, the same in every cell, so
// the ratios between cells are exact and their intervals narrow.
var wobble = []float64{1, 1.01, 0.99, 1.005, 0.995, 1}

// closedRuns is a wrk sweep at GOMAXPROCS=gp: each topology's runs at
// rates[top] times the wobble of the round. Topologies run in the order
// given.
func closedRuns(gp int, tops []string, rate map[string]float64) (results.Env, []results.Run) {
	env := results.Env{Plan: results.Plan{Topologies: tops, GOMAXPROCS: []int{gp}, Connections: []int{5000},
		Reps: len(wobble), Duration: 10 * time.Second, Threads: 2, Timeout: 2 * time.Second}}
	var runs []results.Run
	for rep := 1; rep <= len(wobble); rep++ {
		for _, top := range tops {
			r := rate[top] * wobble[rep-1]
			runs = append(runs, results.Run{
				Cell:    results.Cell{Target: "go", Topology: top, GOMAXPROCS: gp, Connections: 5000, Load: results.LoadWrk, Rep: rep},
				Figures: &results.Figures{Requests: int64(r * 10), ReqPerSec: r, Latency: true, P50: time.Millisecond, P99: 4 * time.Millisecond, Max: 9 * time.Millisecond},
			})
		}
	}
	return env, runs
}

// withCPU gives every run a CPU record: nginx and server µs per request
// by topology (a negative figure: not measured), the load generator 20.
func withCPU(runs []results.Run, nginx, server map[string]float64) {
	for i, r := range runs {
		n := float64(r.Figures.Requests) * 1e-6
		per := func(us float64) *results.Usage {
			if us < 0 {
				return nil
			}
			return &results.Usage{User: us * n}
		}
		runs[i].CPU = &results.CPU{Load: *per(20), Nginx: per(nginx[r.Topology]), Server: per(server[r.Topology])}
	}
}

func chartsByTitle(t *testing.T, sweeps ...Sweep) (htmlPage, map[string]chartSpec, map[string]htmlFigure) {
	t.Helper()
	page, data, err := buildPage(sweeps)
	require.NoError(t, err)
	specs, figs := map[string]chartSpec{}, map[string]htmlFigure{}
	for _, c := range data.Charts {
		specs[c.Title] = c
	}
	for _, s := range page.Sections {
		for _, f := range s.Figures {
			figs[f.ID] = f
		}
	}
	return page, specs, figs
}

// TestAnswer: the one sentence per group the page opens with, for each
// shape a closed-loop group can take.
// noFigure is a "–" standing for a figure, not joining an interval's
// bounds.
var noFigure = regexp.MustCompile(`(^|[\s(])–([\s,;.)]|$)`)

func TestAnswer(t *testing.T) {
	all := []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}
	for _, c := range []struct {
		name      string
		tops      []string
		rate      map[string]float64
		errs      string // a topology whose runs had timeouts
		cpu       bool
		want      []string
		wantNot   []string
		wantEmpty bool
	}{
		{name: "nginx costs", tops: all, rate: map[string]float64{"standalone": 10000, "nginx-http": 6000, "nginx-fcgi-tcp": 4000},
			want: []string{"GOMAXPROCS=1: standalone is fastest at 10,000 req/s (95% interval ", ", ahead of nginx-http",
				"; the fastest path through nginx, nginx-http, serves 0.60 of standalone (95% interval 0.", ": nginx costs 40% of the throughput",
				"; the slowest, nginx-fcgi-tcp, 0.40 (95% interval "},
			wantNot: []string{"errors in", "nginx CPU"}},
		{name: "a tie is not settled", tops: all[:2], rate: map[string]float64{"standalone": 10000, "nginx-http": 10000},
			want:    []string{"though these runs do not settle its lead over", ", not measurably different from standalone"},
			wantNot: []string{"ahead of", "the slowest"}},
		{name: "faster than standalone", tops: all[:2], rate: map[string]float64{"standalone": 10000, "nginx-http": 12500},
			want: []string{"nginx-http is fastest at 12,500 req/s", ", ahead of standalone", "serves 1.25", ": 25% more than standalone"}},
		{name: "no standalone", tops: all[1:], rate: map[string]float64{"nginx-http": 6000, "nginx-fcgi-tcp": 4000},
			want:    []string{"GOMAXPROCS=1: nginx-http is fastest at 6,000 req/s (95% interval ", "ahead of nginx-fcgi-tcp."},
			wantNot: []string{"fastest path through nginx"}},
		{name: "errors named", tops: all, rate: map[string]float64{"standalone": 10000, "nginx-http": 6000, "nginx-fcgi-tcp": 4000}, errs: "nginx-fcgi-tcp",
			want: []string{" (errors in nginx-fcgi-tcp: see the table)."}},
		{name: "CPU per request", tops: all[:2], rate: map[string]float64{"standalone": 10000, "nginx-http": 6000}, cpu: true,
			want: []string{" and 36 µs of nginx CPU per request (the server 30 µs, standalone's 25)."}},
		{name: "only the ceiling", tops: []string{analysis.Ceiling}, rate: map[string]float64{analysis.Ceiling: 50000}, wantEmpty: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, runs := closedRuns(1, c.tops, c.rate)
			for i := range runs {
				if runs[i].Topology == c.errs {
					runs[i].Figures.Errors.Timeout = 7
				}
			}
			if c.cpu {
				withCPU(runs, map[string]float64{"nginx-http": 36, "standalone": -1}, map[string]float64{"standalone": 25, "nginx-http": 30})
			}
			s := analysis.Summarize(env, runs)
			require.Len(t, s.Groups(), 1)
			a := answer(s, s.Groups()[0])
			if c.wantEmpty {
				assert.Empty(t, a)
				return
			}
			assert.True(t, strings.HasSuffix(a, "."), a)
			for _, w := range c.want {
				assert.Contains(t, a, w)
			}
			for _, w := range c.wantNot {
				assert.NotContains(t, a, w)
			}
		})
	}
	t.Run("standalone's CPU not measured", func(t *testing.T) {
		env, runs := closedRuns(1, all[:2], map[string]float64{"standalone": 10000, "nginx-http": 6000})
		withCPU(runs, map[string]float64{"nginx-http": 36, "standalone": -1}, map[string]float64{"standalone": 25, "nginx-http": 30})
		for i := range runs {
			if runs[i].Topology == "standalone" {
				runs[i].CPU = nil
			}
		}
		s := analysis.Summarize(env, runs)
		a := answer(s, s.Groups()[0])
		assert.Contains(t, a, " and 36 µs of nginx CPU per request (the server 30 µs).", "standalone's left out")
		assert.NotRegexp(t, noFigure, a)
	})
	// A figure not measured leaves its clause out: the sentence never
	// holds "–".
	for _, c := range []struct {
		name          string
		nginx, server bool
		want          string
	}{
		{"only the servers' sides", false, true, " and its server 30 µs of CPU per request (standalone's 25)."},
		{"only nginx", true, false, " and 36 µs of nginx CPU per request (standalone's server 25 µs)."},
		{"neither", false, false, ": nginx costs 40% of the throughput."},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, runs := closedRuns(1, all[:2], map[string]float64{"standalone": 10000, "nginx-http": 6000})
			withCPU(runs, map[string]float64{"nginx-http": 36, "standalone": -1}, map[string]float64{"standalone": 25, "nginx-http": 30})
			for i := range runs {
				if runs[i].Topology == "nginx-http" && !c.nginx {
					runs[i].CPU.Nginx = nil
				}
				if runs[i].Topology == "nginx-http" && !c.server {
					runs[i].CPU.Server = nil
				}
			}
			s := analysis.Summarize(env, runs)
			a := answer(s, s.Groups()[0])
			assert.Contains(t, a, c.want)
			assert.NotRegexp(t, noFigure, a)
		})
	}
	t.Run("every run failed", func(t *testing.T) {
		env, runs := closedRuns(1, all[:2], map[string]float64{"standalone": 10000, "nginx-http": 6000})
		for i := range runs {
			runs[i].Figures, runs[i].Error = nil, "wrk: connection refused"
		}
		s := analysis.Summarize(env, runs)
		for _, g := range s.Groups() {
			assert.Empty(t, answer(s, g))
		}
	})
}

// TestLatencyAnswer: open-loop and probe groups are answered in what each
// topology achieved, not a ranking.
func TestLatencyAnswer(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	s := analysis.Summarize(env, runs)
	answers := map[string]string{}
	for _, g := range s.Groups() {
		require.True(t, openLoop(g), g.String())
		answers[g.Schedule.Name] = answer(s, g)
	}
	require.Len(t, answers, 4)
	probe := answers[analysis.Probe2016]
	assert.Contains(t, probe, "standalone served 800 of 800 requests concurrently; nginx-http served 512 of 800 requests concurrently ("+results.Errors{Connect: 3}.String()+").")
	assert.NotContains(t, probe, "target")
	slow := answers[analysis.Slow2016]
	assert.Contains(t, slow, ": at a target of 1,000 req/s, standalone achieved 990 req/s with p99 1.20 s; nginx-http achieved 990 req/s with p99 1.20 s.")
	over := answers[analysis.Overhead2016]
	assert.Contains(t, over, "at a target of 100,000 req/s")
	assert.Contains(t, over, "nginx-http achieved 99,000 req/s with p99 960 ms ("+results.Errors{Read: 2}.String()+", 7 dropped).")

	t.Run("nothing answered in time", func(t *testing.T) {
		r := engineRun("nginx-http", fakeSlow, 1, 0, results.Errors{Timeout: 10000}, 0, 0, 0)
		env := env
		env.Plan.Topologies, env.Plan.Schedules = []string{"nginx-http"}, []results.Schedule{fakeSlow}
		s := analysis.Summarize(env, []results.Run{r})
		require.Len(t, s.Groups(), 1)
		assert.Contains(t, answer(s, s.Groups()[0]), "nginx-http answered nothing in time ("+results.Errors{Timeout: 10000}.String()+").")
	})
}

// TestHTMLCPUNotMeasured: a process whose CPU was not measured draws no
// bar and reads "–" in the chart's table, never 0; a topology without a
// CPU record has no category at all.
func TestHTMLCPUNotMeasured(t *testing.T) {
	tops := []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}
	env, runs := closedRuns(1, tops, map[string]float64{"standalone": 10000, "nginx-http": 6000, "nginx-fcgi-tcp": 5000})
	withCPU(runs, map[string]float64{"standalone": -1, "nginx-http": 36, "nginx-fcgi-tcp": 40}, map[string]float64{"standalone": 25, "nginx-http": -1})
	for i := range runs {
		if runs[i].Topology == "nginx-fcgi-tcp" {
			runs[i].CPU = nil
		}
	}
	_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))
	spec, ok := specs["CPU µs per request, GOMAXPROCS=1"]
	require.True(t, ok, "charts: %v", specs)
	assert.Equal(t, []string{"standalone", "nginx-http"}, spec.Cats, "nginx-fcgi-tcp has no CPU record")
	require.Len(t, spec.Series, 3)
	ngx, server, ld := spec.Series[0], spec.Series[1], spec.Series[2]
	assert.Equal(t, "nginx", ngx.Label)
	assert.Equal(t, 0.0, *ngx.Y[0], "standalone has no nginx: no bar")
	assert.Equal(t, 25.0, *server.Y[0])
	assert.Equal(t, 36.0, *ngx.Y[1])
	assert.Equal(t, 36.0, *server.Base[1])
	assert.Equal(t, 36.0, *server.Y[1], "the server not measured adds nothing on top of nginx")
	assert.Equal(t, []*float64{num(20), num(20)}, ld.Y)
	table := figs[spec.ID].Table
	assert.Equal(t, []string{"topology", "nginx µs", "server µs", "load generator µs"}, table.Head)
	assert.Equal(t, [][]string{{"standalone", "–", "25", "20"}, {"nginx-http", "36", "–", "20"}}, table.Rows)
}

// TestHTMLRatioChart: intervals, the 2013 reference only at the
// GOMAXPROCS it measured, and a comparison's sweeps told apart.
func TestHTMLRatioChart(t *testing.T) {
	tops := []string{"standalone", "nginx-http"}
	rate := map[string]float64{"standalone": 10000, "nginx-http": 7000}
	t.Run("no 2013 row at GOMAXPROCS=3", func(t *testing.T) {
		env, runs := closedRuns(3, tops, rate)
		_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))
		spec := specs["Ratio to standalone"]
		require.Len(t, spec.Series, 1)
		assert.Equal(t, "GOMAXPROCS=3", spec.Series[0].Label)
		assert.Equal(t, 1, spec.Slots)
		assert.Equal(t, 1.0, *spec.Ref)
		assert.Equal(t, 0.7, *spec.Series[0].Y[0])
		require.NotNil(t, spec.Series[0].Lo[0])
		assert.Less(t, *spec.Series[0].Lo[0], 0.7)
		assert.Greater(t, *spec.Series[0].Hi[0], 0.7)
		assert.Regexp(t, `^0\.70 \(0\.\d\d–0\.\d\d\)$`, figs[spec.ID].Table.Rows[0][1])
	})
	t.Run("one round has no interval", func(t *testing.T) {
		env, runs := closedRuns(1, tops, rate)
		env.Plan.Reps, runs = 1, runs[:2]
		_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))
		spec := specs["Ratio to standalone"]
		require.Len(t, spec.Series, 2, "the sweep and 2013's")
		assert.Nil(t, spec.Series[0].Lo[0])
		assert.Equal(t, "0.70 (interval unknown)", figs[spec.ID].Table.Rows[0][1])
		assert.Equal(t, "diamond", spec.Series[1].Style)
		assert.Equal(t, spec.Series[0].Color, spec.Series[1].Color, "2013 in the colour of its GOMAXPROCS")
	})
	t.Run("no nginx, no chart", func(t *testing.T) {
		env, runs := closedRuns(1, tops[:1], rate)
		_, specs, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
		assert.NotContains(t, specs, "Ratio to standalone")
	})
	t.Run("open loop has no ratio chart", func(t *testing.T) {
		env, runs := scenarioCases()["scenarios2016"]()
		_, specs, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
		assert.NotContains(t, specs, "Ratio to standalone")
	})
	t.Run("compared", func(t *testing.T) {
		env, runs := closedRuns(3, tops, rate)
		env2, runs2 := closedRuns(3, tops, map[string]float64{"standalone": 10000, "nginx-http": 8000})
		_, specs, figs := chartsByTitle(t, sweepOf("a", "", env, runs), sweepOf("b", "", env2, runs2))
		spec := specs["Ratio to standalone"]
		require.Len(t, spec.Series, 2)
		assert.Equal(t, []string{"A: GOMAXPROCS=3", "B: GOMAXPROCS=3"}, []string{spec.Series[0].Label, spec.Series[1].Label})
		assert.Equal(t, []string{"dot", "ring"}, []string{spec.Series[0].Style, spec.Series[1].Style})
		assert.Equal(t, []int{0, 1}, []int{spec.Series[0].Slot, spec.Series[1].Slot})
		assert.Equal(t, 0.8, *spec.Series[1].Y[0])
		assert.Contains(t, figs[spec.ID].Caption, "rings the other sweeps")
	})
}

func TestSampleRounds(t *testing.T) {
	none := func(int) bool { return false }
	seq := func(from, to, step int) []int {
		var out []int
		for i := from; i <= to; i += step {
			out = append(out, i)
		}
		return out
	}
	for _, c := range []struct {
		name    string
		n       int
		flagged func(int) bool
		want    []int
	}{
		{"few: all", 6, none, seq(1, 6, 1)},
		{"the bound: all", maxRunPoints, none, seq(1, maxRunPoints, 1)},
		{"one over: every other and the last", maxRunPoints + 1, none, seq(1, maxRunPoints+1, 2)},
		{"many: evenly, the last kept", 1000, none, append(seq(1, 996, 5), 1000)},
		{"flagged kept", 1000, func(r int) bool { return r == 333 || r == 334 }, append(append(append(seq(1, 331, 5), 333, 334), seq(336, 996, 5)...), 1000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := sampleRounds(c.n, c.flagged)
			assert.Equal(t, c.want, got)
			assert.LessOrEqual(t, len(got), maxRunPoints+3)
		})
	}
}

// TestHTMLRunsChart: a long sweep's run chart is sampled, its flagged
// runs kept and ringed; failed runs leave a gap and read "failed".
func TestHTMLRunsChart(t *testing.T) {
	tops := []string{"standalone", "nginx-http"}
	env, proto := closedRuns(1, tops, map[string]float64{"standalone": 10000, "nginx-http": 7000})
	// One topology: the ratios' exact U distribution over hundreds of
	// rounds is slow, and the run chart needs none.
	const rounds = 600
	env.Plan.Reps, env.Plan.Topologies = rounds, tops[1:]
	var runs []results.Run
	for rep := 1; rep <= rounds; rep++ {
		for _, p := range proto[1:2] {
			r := p
			r.Rep = rep
			f := *p.Figures
			r.Figures = &f
			switch rep {
			case 250:
				r.Retried = "wrk did not exit"
			case 2:
				r.Figures, r.Error = nil, "wrk: connection refused"
			}
			runs = append(runs, r)
		}
	}
	_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))
	spec, ok := specs["req/s per run, GOMAXPROCS=1"]
	require.True(t, ok)
	assert.Contains(t, spec.X, 250.0, "a flagged round is kept")
	assert.Contains(t, spec.X, float64(rounds), "the last round is kept")
	assert.NotContains(t, spec.X, 2.0, "a failed run is a gap, not a flag: sampled like the others")
	assert.LessOrEqual(t, len(spec.X), maxRunPoints+2)
	assert.Empty(t, spec.XTicks, "too many rounds to label each")
	fig := figs[spec.ID]
	assert.Contains(t, fig.Caption, fmt.Sprintf("%d of %d rounds shown, evenly sampled, flagged ones kept.", len(spec.X), rounds))
	idx := func(rep float64) int {
		for i, x := range spec.X {
			if x == rep {
				return i
			}
		}
		t.Fatalf("round %v not shown", rep)
		return -1
	}
	require.Len(t, spec.Series, 1)
	http := spec.Series[0]
	assert.Equal(t, "nginx-http", http.Label)
	assert.Equal(t, []int{idx(250)}, http.Mark)
	assert.Equal(t, "7,000 (retried)", fig.Table.Rows[idx(250)][1])

	t.Run("every round when few", func(t *testing.T) {
		env, runs := closedRuns(1, tops, map[string]float64{"standalone": 10000, "nginx-http": 7000})
		for i := range runs {
			switch {
			case runs[i].Topology == "nginx-http" && runs[i].Rep == 2:
				runs[i].Figures, runs[i].Error = nil, "wrk: connection refused"
			case runs[i].Topology == "standalone" && runs[i].Rep == 4:
				runs[i].Figures.Errors.Timeout = 3
			}
		}
		_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))
		spec := specs["req/s per run, GOMAXPROCS=1"]
		assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, spec.X)
		assert.Len(t, spec.XTicks, 6)
		assert.Nil(t, spec.Series[1].Y[1], "a failed run leaves a gap")
		rows := figs[spec.ID].Table.Rows
		assert.Equal(t, "failed", rows[1][2])
		assert.Equal(t, "10,050 ("+results.Errors{Timeout: 3}.String()+")", rows[3][1], "wobble 1.005")
		assert.NotContains(t, figs[spec.ID].Caption, "rounds shown")
	})
	t.Run("one round: no chart", func(t *testing.T) {
		env, runs := closedRuns(1, tops, map[string]float64{"standalone": 10000, "nginx-http": 7000})
		env.Plan.Reps, runs = 1, runs[:2]
		_, specs, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
		assert.NotContains(t, specs, "req/s per run, GOMAXPROCS=1")
	})
	t.Run("a probe's rate is its wait: no chart", func(t *testing.T) {
		env, runs := scenarioCases()["scenarios2016"]()
		env.Plan.Reps = 2
		for _, r := range runs[:len(runs):len(runs)] {
			r.Rep = 2
			runs = append(runs, r)
		}
		_, specs, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
		n := 0
		for title := range specs {
			if strings.HasPrefix(title, "req/s per run") {
				n++
				assert.NotContains(t, title, analysis.Probe2016)
			}
		}
		assert.Equal(t, 3, n, "the three open-loop scenarios, not the probe")
	})
}

// TestHTMLEnvTables: the environment as the reader checks it: unknowns
// said, maps sorted, sysctls only when recorded.
func TestHTMLEnvTables(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	env.CPUModel, env.Kernel, env.WrkVersion = "", "", ""
	env.Limits = map[string]string{"nofile": "20000", "nproc": "512"}
	env.Targets = map[string]string{"go": "cmd/hello", "echo": "./echo"}
	env.Sysctls = map[string]string{"net.core.somaxconn": "4096", "net.ipv4.ip_local_port_range": "1024 65535"}
	env.Plan.Scenario = "2016"
	s := analysis.Summarize(env, runs)
	tables := envTables(s, runs)
	require.Len(t, tables, 3)
	rows := map[string]string{}
	var keys []string
	for _, r := range tables[0].Rows {
		rows[r[0]] = r[1]
		keys = append(keys, r[0])
	}
	assert.Equal(t, fmt.Sprintf("unknown (%d logical CPUs)", env.CPUs), rows["CPU"])
	assert.Equal(t, "unknown", rows["kernel"])
	assert.Equal(t, "unknown", rows["wrk"])
	assert.Equal(t, env.NginxVersion, rows["nginx"])
	assert.Equal(t, strings.Join(env.Command, " "), rows["command"])
	assert.Equal(t, env.Start.UTC().Format(time.RFC3339), rows["started"])
	assert.Contains(t, rows["CPU split"], "1 CPU for the servers")
	assert.Equal(t, []string{"limit nofile", "limit nproc", "target echo", "target go"}, keys[len(keys)-4:])

	plan := map[string]string{}
	for _, r := range tables[1].Rows {
		plan[r[0]] = r[1]
	}
	assert.Equal(t, "6 to 6 (-reps auto, within ±5%)", plan["repetitions"])
	assert.Equal(t, "1", plan["GOMAXPROCS"])
	assert.Equal(t, "2016", plan["scenario"])
	assert.Equal(t, [][]string{{"net.core.somaxconn", "4096"}, {"net.ipv4.ip_local_port_range", "1024 65535"}}, tables[2].Rows)

	t.Run("bare", func(t *testing.T) {
		env, runs := closedRuns(1, []string{"standalone"}, map[string]float64{"standalone": 1})
		env.Plan.Connections = []int{10, 100}
		tables := envTables(analysis.Summarize(env, runs), runs)
		require.Len(t, tables, 2, "no sysctls recorded: no table")
		for _, r := range tables[0].Rows {
			assert.NotContains(t, []string{"started", "ended"}, r[0], "times not recorded are left out")
			if r[0] == "CPU" {
				assert.Equal(t, "unknown", r[1])
			}
		}
		plan := map[string]string{}
		for _, r := range tables[1].Rows {
			plan[r[0]] = r[1]
		}
		assert.Equal(t, "10, 100", plan["connections"])
		assert.Equal(t, "6", plan["repetitions"])
		assert.NotContains(t, plan, "scenario")
	})
}

func TestHTMLHelpers(t *testing.T) {
	for v, want := range map[float64]float64{0: 0, 1: 1, 123456: 123500, 0.000123456: 0.0001235, -98766: -98770, 1.00004: 1} {
		assert.Equal(t, want, sig4(v), "%v", v)
	}
	assert.True(t, math.IsNaN(sig4(math.NaN())))
	assert.True(t, math.IsInf(sig4(math.Inf(-1)), -1))

	assert.Equal(t, []string{"A", "B", "Z", "S27", "S30"}, []string{sweepLabel(0), sweepLabel(1), sweepLabel(25), sweepLabel(26), sweepLabel(29)})
	for dir, want := range map[string]string{"results/run-1": "run-1", "results/run-1/": "run-1", "run-2": "run-2", "/a/b//": "b"} {
		assert.Equal(t, want, sweepName(dir), dir)
	}
	assert.Equal(t, []string{"nginx-http", "a|b", "2016 x"}, unmd([]string{"**nginx-http**", `a\|b`, "2016 x"}))
	assert.Equal(t, "GOMAXPROCS=8", groupLabel(analysis.Group{Target: "go", GOMAXPROCS: 8, Connections: 5000, Load: "wrk"}))
	assert.Equal(t, "", joinInts(nil))
	assert.Equal(t, "1, 8", joinInts([]int{1, 8}))
	assert.Equal(t, palette[0], paletteColor(len(palette)), "the palette wraps")
}

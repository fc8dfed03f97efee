package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// finished is a sweep that ran to its end on a 2-CPU machine.
func finished(plan results.Plan) results.Env {
	start := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	return results.Env{Start: start, End: start.Add(time.Hour), CPUs: 2, Plan: plan}
}

// ok is a successful run of cmd/hello under wrk at rate req/s for 10 s,
// with latency samples.
func ok(top string, g, rep int, rate float64) results.Run {
	return results.Run{
		Cell:    results.Cell{Topology: top, GOMAXPROCS: g, Connections: 5000, Rep: rep},
		Figures: &results.Figures{Requests: int64(rate * 10), ReqPerSec: rate, Latency: true, P50: time.Millisecond, P99: 5 * time.Millisecond, Max: 9 * time.Millisecond},
	}
}

func with(r results.Run, f func(*results.Run)) results.Run {
	f(&r)
	return r
}

// warnings lists the summary's warnings of one kind as "cell: msg".
func warnings(s Summary, kind string) []string {
	var out []string
	for _, w := range s.Warnings {
		if w.Kind == kind {
			out = append(out, w.Cell+"|"+w.Msg)
		}
	}
	return out
}

func notes(t *testing.T, s Summary, g int, top string) []string {
	t.Helper()
	c, found := s.Cell(Key{wrkGroup(g), top})
	require.True(t, found, "GOMAXPROCS=%d %s", g, top)
	return c.Notes
}

func plan(tops []string, gs ...int) results.Plan {
	return results.Plan{Topologies: tops, GOMAXPROCS: gs, Connections: []int{5000}, Reps: 3}
}

// three is three steady runs of a cell.
func three(top string, g int, rate float64) []results.Run {
	return []results.Run{ok(top, g, 1, rate), ok(top, g, 2, rate*1.01), ok(top, g, 3, rate*0.99)}
}

func TestWarnGOMAXPROCS(t *testing.T) {
	tops := []string{"standalone"}
	tests := []struct {
		name       string
		gs         []int
		cpus       int
		pin        string // the servers' CPU list
		runsPinned string // as -cpus auto records it per run
		want       []string
	}{
		{"within the machine", []int{1, 2}, 2, "", "", nil},
		{"beyond the machine", []int{1, 8}, 2, "", "",
			[]string{"|GOMAXPROCS=8 exceeds the 2 CPUs of this machine: Go runs more threads than there are cores, competing with wrk and nginx for them; read those rows as an oversubscribed setup, not as a faster one"}},
		{"beyond a pinned CPU", []int{1, 2}, 2, "1", "",
			[]string{"|GOMAXPROCS=2 exceeds the 1 CPU the servers run on (of the machine's 2): Go runs more threads than it has cores, competing with nginx for them; read those rows as an oversubscribed setup, not as a faster one"}},
		{"pinned per run", []int{1, 4}, 4, "", "1-3",
			[]string{"|GOMAXPROCS=4 exceeds the 3 CPUs the servers run on (of the machine's 4): Go runs more threads than it has cores, competing with nginx for them; read those rows as an oversubscribed setup, not as a faster one"}},
		{"pinned to every CPU is the machine", []int{4}, 2, "0-1", "",
			[]string{"|GOMAXPROCS=4 exceeds the 2 CPUs of this machine: Go runs more threads than there are cores, competing with wrk and nginx for them; read those rows as an oversubscribed setup, not as a faster one"}},
		{"unknown CPUs", []int{8}, 0, "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := finished(plan(tops, tt.gs...))
			env.CPUs = tt.cpus
			env.Plan.PinServer = tt.pin
			var runs []results.Run
			for _, g := range tt.gs {
				for _, r := range three("standalone", g, 1000) {
					r.ServerCPUs = tt.runsPinned
					runs = append(runs, r)
				}
			}
			assert.Equal(t, tt.want, warnings(Summarize(env, runs), "gomaxprocs"))
		})
	}

	t.Run("once per value across groups", func(t *testing.T) {
		p := plan(tops, 8)
		p.Connections = []int{30, 100}
		var runs []results.Run
		for _, c := range p.Connections {
			for _, r := range three("standalone", 8, 1000) {
				r.Connections = c
				runs = append(runs, r)
			}
		}
		s := Summarize(finished(p), runs)
		assert.Len(t, s.Groups(), 2)
		assert.Len(t, warnings(s, "gomaxprocs"), 1)
	})
}

func TestWarnInterrupted(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	runs := three("standalone", 1, 1000)
	const msg = "|the sweep did not finish its plan; the tables hold the runs that completed"

	assert.Empty(t, warnings(Summarize(finished(p), runs), "interrupted"))
	env := finished(p)
	env.End = time.Time{}
	assert.Equal(t, []string{msg}, warnings(Summarize(env, runs), "interrupted"), "still running, or killed: no end")
	env = finished(p)
	env.Interrupted = true
	assert.Equal(t, []string{msg}, warnings(Summarize(env, runs), "interrupted"), "stopped, end written")
}

func TestWarnMissing(t *testing.T) {
	p := plan([]string{"standalone", "nginx-http"}, 1, 8)
	runs := append(three("standalone", 1, 1000), three("nginx-http", 8, 400)...)
	s := Summarize(finished(p), runs)
	assert.Equal(t, []string{"|GOMAXPROCS=1 nginx-http: no run recorded", "|GOMAXPROCS=8 standalone: no run recorded"}, warnings(s, "missing"))

	// A cell whose every run failed is recorded: failed, not missing.
	failed := with(ok("nginx-http", 1, 1, 1), func(r *results.Run) { r.Figures, r.Error = nil, "boom" })
	s = Summarize(finished(p), append(runs, failed, with(ok("standalone", 8, 1, 1000), func(*results.Run) {})))
	assert.Empty(t, warnings(s, "missing"))
	assert.Len(t, warnings(s, "failed"), 1)

	// A plan with other targets expects only their cells.
	p.Targets = []string{"go", "erlang"}
	p.Topologies = []string{"standalone", "nginx-fcgi-tcp"}
	p.GOMAXPROCS = []int{1}
	s = Summarize(finished(p), append(three("standalone", 1, 1000), three("nginx-fcgi-tcp", 1, 200)...))
	assert.Equal(t, []string{"|target=erlang GOMAXPROCS=1 standalone: no run recorded"}, warnings(s, "missing"),
		"erlang has no FastCGI path")
}

func TestWarnFailedAndErrors(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	runs := three("standalone", 1, 1000)
	runs[0].Figures.Errors = results.Errors{Timeout: 5, Status: 2}
	runs[1].Figures.Errors = results.Errors{Connect: 1}
	runs = append(runs, with(ok("standalone", 1, 4, 1000), func(r *results.Run) { r.Error = "wrk exited 1" }))
	s := Summarize(finished(p), runs)
	assert.Equal(t, []string{"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: 1 of 4 runs failed (see Failed runs)"}, warnings(s, "failed"))
	assert.Equal(t, []string{"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: connect 1, timeout 5, non-2xx 2 over 3 runs (8 of 30,000 requests); " +
		"a rate with errors is not comparable to one without, and wrk leaves timed-out requests out of its latency figures"}, warnings(s, "errors"),
		"the failed run's figures are not counted")
	assert.Equal(t, []string{"failed", "errors"}, notes(t, s, 1, "standalone"))
	assert.Equal(t, []Failure{{Run: "g1-standalone-c5000-r4", Error: "wrk exited 1"}}, s.Failures)

	t.Run("a run without figures or error", func(t *testing.T) {
		r := with(ok("standalone", 1, 1, 1), func(r *results.Run) { r.Figures = nil })
		s := Summarize(finished(p), []results.Run{r})
		assert.Equal(t, []Failure{{Run: "g1-standalone-c5000-r1", Error: "no load generator result recorded"}}, s.Failures)
	})
	t.Run("status errors alone", func(t *testing.T) {
		runs := three("standalone", 1, 1000)
		runs[2].Figures.Errors.Status = 3864
		s := Summarize(finished(p), runs)
		require.Len(t, warnings(s, "errors"), 1)
		assert.Contains(t, warnings(s, "errors")[0], "non-2xx 3864 over 3 runs (3,864 of 30,000 requests)")
	})
}

func TestWarnSpread(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	for _, tt := range []struct {
		name  string
		rates []float64
		want  []string
	}{
		{"steady", []float64{1000, 1050, 990}, nil},
		{"just within 20%", []float64{900, 1000, 1100}, nil},
		{"wide", []float64{900, 1000, 1250}, []string{"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: repetitions range 900–1,250 req/s, 35% of the median; the median is uncertain"}},
		{"one run has no spread", []float64{1000}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var runs []results.Run
			for i, v := range tt.rates {
				runs = append(runs, ok("standalone", 1, i+1, v))
			}
			s := Summarize(finished(p), runs)
			assert.Equal(t, tt.want, warnings(s, "spread"))
			if tt.want != nil {
				assert.Contains(t, notes(t, s, 1, "standalone"), "spread")
			}
		})
	}
}

func TestWarnCeiling(t *testing.T) {
	p := plan([]string{"standalone", "nginx-http", "nginx-return", "nginx-static"}, 1, 8)
	runs := append(three("nginx-return", 1, 10000), three("standalone", 1, 9100)...) // 91% of the ceiling
	runs = append(runs, three("nginx-http", 1, 8900)...)                             // 89%
	runs = append(runs, three("nginx-static", 1, 9900)...)                           // a ceiling itself
	runs = append(runs, three("standalone", 8, 9900)...)                             // no ceiling at GOMAXPROCS=8
	s := Summarize(finished(p), runs)
	got := warnings(s, "ceiling")
	require.Len(t, got, 1)
	assert.True(t, strings.HasPrefix(got[0], "GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: 9,100 req/s is within 10% of the nginx-return ceiling (10,000 req/s)"), got[0])
	assert.Equal(t, []string{"near ceiling"}, notes(t, s, 1, "standalone"))
	assert.Empty(t, notes(t, s, 1, "nginx-static"))

	t.Run("a ceiling that failed bounds nothing", func(t *testing.T) {
		var runs []results.Run
		for _, r := range three("nginx-return", 1, 10000) {
			r.Figures, r.Error = nil, "boom"
			runs = append(runs, r)
		}
		s := Summarize(finished(p), append(runs, three("standalone", 1, 9900)...))
		assert.Empty(t, warnings(s, "ceiling"))
	})
}

func TestWarnRuns(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	runs := three("standalone", 1, 1000)
	runs[0].Noise = &results.Noise{Busy: 60, Steal: 4.2, Others: 1, Window: 30*time.Second + 40*time.Millisecond, Flagged: "steal 7% of the machine, above 5%"}
	runs[1].Noise = &results.Noise{Busy: 60, Window: 30 * time.Second} // measured, not flagged
	runs[1].Settle = &results.Settle{Waited: 5*time.Second + 10*time.Millisecond, Settled: false, CPUShare: 0.35, ServerRSS: 860 << 20}
	runs[2].Settle = &results.Settle{Waited: 5 * time.Second, Settled: false, CPUShare: 0.2, ServerRSS: 12 << 20, NginxRSS: 512 << 10}
	runs[2].Retried = "wrk did not exit 10s after its duration"
	s := Summarize(finished(p), runs)

	// One line per cell and kind, counting its runs, with the first's detail.
	assert.Equal(t, []string{"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: noisy in 1 of 3 runs; the first, rep 1: the machine was busy with other work: steal 7% of the machine, above 5% (over 30s: steal 4.2 s, CPU outside the run 1.0 s of 60.0 s busy)"},
		warnings(s, "noise"))
	assert.Equal(t, []string{
		"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: unsettled in 2 of 3 runs; the first, rep 2: the servers were still busy after waiting 5s (35% of a CPU; server RSS 860 MiB); the run may carry the previous cell's load",
	}, warnings(s, "unsettled"))
	assert.Equal(t, []string{"GOMAXPROCS=1 standalone|GOMAXPROCS=1 standalone: retried in 1 of 3 runs; the first, rep 3: measured a second time: wrk did not exit 10s after its duration"}, warnings(s, "retried"))

	c, _ := s.Cell(Key{wrkGroup(1), "standalone"})
	assert.Equal(t, 1, c.NoisyRuns)
	assert.Equal(t, 2, c.UnsettledRuns)
	assert.Equal(t, 1, c.RetriedRuns)
	assert.Equal(t, []string{"noisy", "unsettled", "retried"}, c.Notes, "each note once")
}

func TestWarnConvergence(t *testing.T) {
	p := plan([]string{"standalone", "nginx-http", "nginx-fcgi-tcp"}, 1)
	p.Reps = 6
	p.RepsAuto = &results.RepsAuto{Max: 12, Within: 0.05}
	var runs []results.Run
	for rep := 1; rep <= 6; rep++ {
		runs = append(runs, ok("standalone", 1, rep, 1000+float64(rep)))
		runs = append(runs, ok("nginx-http", 1, rep, 400+float64(rep)))              // tight
		runs = append(runs, ok("nginx-fcgi-tcp", 1, rep, 200*(1+0.05*float64(rep)))) // wide
	}
	s := Summarize(finished(p), runs)
	got := warnings(s, "not converged")
	require.Len(t, got, 1)
	assert.Regexp(t, `^GOMAXPROCS=1 nginx-fcgi-tcp\|GOMAXPROCS=1 nginx-fcgi-tcp: ratio to standalone 0\.\d{3} ± \d+% after 6 repetitions, not within ±5% \(-reps auto, at most 12\)$`, got[0])
	assert.Contains(t, notes(t, s, 1, "nginx-fcgi-tcp"), "not converged")

	t.Run("without -reps auto nothing is said", func(t *testing.T) {
		p := p
		p.RepsAuto = nil
		assert.Empty(t, warnings(Summarize(finished(p), runs), "not converged"))
	})
	t.Run("a cell with no successful run", func(t *testing.T) {
		var some []results.Run
		for _, r := range runs {
			if r.Topology == "nginx-http" {
				r.Figures, r.Error = nil, "boom"
			}
			some = append(some, r)
		}
		s := Summarize(finished(p), some)
		assert.Contains(t, warnings(s, "not converged"),
			"GOMAXPROCS=1 nginx-http|GOMAXPROCS=1 nginx-http: ratio to standalone no successful run to compare after 0 repetitions, not within ±5% (-reps auto, at most 12)")
	})
}

// TestSetupWarnings: what went wrong in the run's set-up (env.json's
// warnings) is listed with the sweep-wide warnings, as recorded.
func TestSetupWarnings(t *testing.T) {
	env := results.Env{Plan: plan([]string{"standalone"}, 1), End: time.Now(),
		Warnings: []string{"copying network settings into namespace tb-1-0-srv: sysctl not found in PATH (procps: .ci/install-tools)"}}
	s := Summarize(env, three("standalone", 1, 1000))
	assert.Equal(t, []string{"|copying network settings into namespace tb-1-0-srv: sysctl not found in PATH (procps: .ci/install-tools)"}, warnings(s, "setup"))
	assert.Empty(t, warnings(Summarize(results.Env{Plan: env.Plan, End: env.End}, three("standalone", 1, 1000)), "setup"))
}

// TestLoadBound: a run whose load generator used 90% of its CPUs or more
// is warned of; a cell where most runs were is not ranked.
func TestLoadBound(t *testing.T) {
	bound := func(r results.Run) results.Run { r.LoadShare = 0.96; return r }
	runs := append(three("standalone", 1, 40000), three("nginx-http", 1, 16000)...)
	for i := range runs[:3] {
		if i < 2 {
			runs[i] = bound(runs[i]) // standalone: two of three
		}
	}
	runs[3] = bound(runs[3]) // nginx-http: one of three
	s := Summarize(results.Env{Plan: plan([]string{"standalone", "nginx-http"}, 1), End: time.Now()}, runs)
	st, _ := s.Cell(Key{wrkGroup(1), "standalone"})
	http, _ := s.Cell(Key{wrkGroup(1), "nginx-http"})
	assert.Equal(t, 2, st.LoadBoundRuns)
	assert.Zero(t, st.Rank, "most runs load-bound: not ranked")
	assert.Equal(t, 1, http.LoadBoundRuns)
	assert.Equal(t, 1, http.Rank, "one of three: still ranked, and warned of")
	assert.Contains(t, st.Notes, "load-bound")
	got := warnings(s, "load-bound")
	require.Len(t, got, 2, "one line a cell")
	assert.Contains(t, got[0], "GOMAXPROCS=1 standalone: load-bound in 2 of 3 runs; the first, rep 1: the load generator used 96% of its CPUs")
	assert.Contains(t, got[1], "GOMAXPROCS=1 nginx-http: load-bound in 1 of 3 runs; the first, rep 1:")
}

// TestWarnCostRatio: a cell whose rate's ratio to standalone and CPU
// cost's ratio have intervals that do not overlap is flagged, in the
// direction the two part; ceilings, load-bound cells and cells too few
// for an interval are not.
func TestWarnCostRatio(t *testing.T) {
	wobble := []float64{1, 1.01, 0.99, 1.02, 0.98, 1}
	// runs are n runs of top at about rate req/s, whose nginx and server
	// spent nginx and server µs a request.
	runs := func(top string, n int, rate, nginx, server float64) []results.Run {
		var out []results.Run
		for rep := 1; rep <= n; rep++ {
			r := ok(top, 1, rep, rate*wobble[rep-1])
			per := func(us float64) *results.Usage {
				return &results.Usage{User: us * wobble[n-rep] * float64(r.Figures.Requests) / 1e6}
			}
			r.CPU = &results.CPU{Load: results.Usage{User: 1}, Nginx: per(nginx), Server: per(server)}
			out = append(out, r)
		}
		return out
	}
	// Standalone serves 40k req/s at 25 µs: 25/62 of it is 16.1k.
	standalone := runs("standalone", 6, 40000, 0, 25)
	tests := []struct {
		name string
		cell []results.Run
		want []string // "cell|note"
	}{
		{"rate and cost agree", runs("nginx-http", 6, 16000, 36, 26), nil},
		{"rate below what the cost predicts", runs("nginx-http", 6, 10000, 36, 26), []string{"GOMAXPROCS=1 nginx-http|not CPU-bound"}},
		{"rate above what the cost predicts", runs("nginx-http", 6, 24000, 36, 26), []string{"GOMAXPROCS=1 nginx-http|standalone not CPU-bound"}},
		{"too few runs for an interval", runs("nginx-http", 2, 10000, 36, 26), nil},
		{"load-bound", func() []results.Run {
			rs := runs("nginx-http", 6, 10000, 36, 26)
			for i := range rs[:4] {
				rs[i].LoadShare = 0.95
			}
			return rs
		}(), nil},
		{"a ceiling", runs("nginx-return", 6, 150000, 12, 0), nil},
		{"no CPU records", func() []results.Run {
			rs := runs("nginx-http", 6, 10000, 36, 26)
			for i := range rs {
				rs[i].CPU = nil
			}
			return rs
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top := tt.cell[0].Topology
			s := Summarize(finished(plan([]string{"standalone", top}, 1)), append(slices.Clone(standalone), tt.cell...))
			var got []string
			for _, w := range s.Warnings {
				if w.Kind == "not cpu-bound" {
					c, found := s.Cell(Key{wrkGroup(1), top})
					require.True(t, found)
					require.Equal(t, c.Name(), w.Cell)
					got = append(got, w.Cell+"|"+c.Notes[len(c.Notes)-1])
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("message", func(t *testing.T) {
		s := Summarize(finished(plan([]string{"standalone", "nginx-http"}, 1)), append(slices.Clone(standalone), runs("nginx-http", 6, 10000, 36, 26)...))
		c, _ := s.Cell(Key{wrkGroup(1), "nginx-http"})
		require.NotNil(t, c.CostRatio)
		assert.InDelta(t, 25.0/62, c.CostRatio.Center, 0.005, "standalone's cost over the cell's")
		assert.Equal(t, []string{"GOMAXPROCS=1 nginx-http|GOMAXPROCS=1 nginx-http: serves 0.25 (0.25–0.26) of standalone, less than its CPU cost per request predicts, 0.40 (0.40–0.41), and the 95% intervals do not overlap: its servers' CPU did not set its pace, something else limited it (the load generator, the network, a queue or a lock, other work on the machine taking its CPU); the rate's ratio is the measure, the cost's what the path would serve CPU-bound"},
			warnings(s, "not cpu-bound"))
	})
}

package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// runsAt is one run per rate, reps counted from 1.
func runsAt(top string, g int, rates ...float64) []results.Run {
	var out []results.Run
	for i, v := range rates {
		out = append(out, ok(top, g, i+1, v))
	}
	return out
}

func cellOf(t *testing.T, s Summary, g int, top string) Cell {
	t.Helper()
	c, found := s.Cell(Key{wrkGroup(g), top})
	require.True(t, found, "GOMAXPROCS=%d %s", g, top)
	return c
}

func TestRank(t *testing.T) {
	p := plan([]string{"standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return"}, 1)
	var runs []results.Run
	runs = append(runs, runsAt("standalone", 1, 1000, 1010, 990, 1005, 995, 1000)...)
	runs = append(runs, runsAt("nginx-http", 1, 400, 410, 390, 405, 395, 400)...)
	runs = append(runs, runsAt("nginx-fcgi-tcp", 1, 200, 260, 230, 210, 250, 220)...)  // overlaps unix
	runs = append(runs, runsAt("nginx-fcgi-unix", 1, 240, 205, 235, 215, 245, 225)...) // the faster median
	runs = append(runs, runsAt("nginx-return", 1, 5000, 5000, 5000, 5000, 5000, 5000)...)
	s := Summarize(finished(p), runs)

	type rank struct {
		rank    int
		next    string
		settled bool
	}
	got := map[string]rank{}
	for _, c := range s.Rows(wrkGroup(1)) {
		got[c.Topology] = rank{c.Rank, c.Next, c.Settled()}
	}
	assert.Equal(t, map[string]rank{
		"standalone":      {1, "", false},
		"nginx-http":      {2, "standalone", true},
		"nginx-fcgi-unix": {3, "nginx-http", true},
		"nginx-fcgi-tcp":  {4, "nginx-fcgi-unix", false},
		"nginx-return":    {0, "", false},
	}, got, "ceilings are not ranked; an order the runs do not settle is said so")

	unix, tcp := cellOf(t, s, 1, "nginx-fcgi-unix"), cellOf(t, s, 1, "nginx-fcgi-tcp")
	require.NotNil(t, tcp.VsNext)
	assert.InDelta(t, tcp.ReqPerSec.Median/unix.ReqPerSec.Median, tcp.VsNext.Center, 1e-12)
	assert.False(t, tcp.VsNext.Differs)
	assert.Equal(t, tcp.VsNext, tcp.Over(unix), "VsNext is the cell over the next faster one")
	assert.Nil(t, cellOf(t, s, 1, "standalone").VsNext)

	t.Run("failed cells are not ranked", func(t *testing.T) {
		var some []results.Run
		for _, r := range runs {
			if r.Topology == "nginx-http" {
				r.Figures, r.Error = nil, "boom"
			}
			some = append(some, r)
		}
		s := Summarize(finished(p), some)
		assert.Zero(t, cellOf(t, s, 1, "nginx-http").Rank)
		assert.Equal(t, 2, cellOf(t, s, 1, "nginx-fcgi-unix").Rank)
		assert.Equal(t, "standalone", cellOf(t, s, 1, "nginx-fcgi-unix").Next)
		assert.Nil(t, cellOf(t, s, 1, "nginx-http").Over(cellOf(t, s, 1, "standalone")), "no runs: no ratio")
	})

	t.Run("each group is ranked on its own", func(t *testing.T) {
		p := plan([]string{"standalone", "nginx-http"}, 1, 8)
		runs := append(runsAt("standalone", 1, 100, 100), runsAt("nginx-http", 1, 50, 50)...)
		runs = append(runs, runsAt("standalone", 8, 100, 100)...)
		runs = append(runs, runsAt("nginx-http", 8, 150, 150)...)
		s := Summarize(finished(p), runs)
		assert.Equal(t, 1, cellOf(t, s, 1, "standalone").Rank)
		assert.Equal(t, 2, cellOf(t, s, 8, "standalone").Rank)
		assert.Equal(t, 1, cellOf(t, s, 8, "nginx-http").Rank)
	})
}

func TestRatioToStandalone(t *testing.T) {
	p := plan([]string{"standalone", "nginx-http"}, 1, 8)
	runs := append(runsAt("standalone", 1, 1000, 1000, 1000), runsAt("nginx-http", 1, 400, 400, 400)...)
	runs = append(runs, runsAt("nginx-http", 8, 300, 300, 300)...) // no standalone at 8
	failedSt := runsAt("standalone", 8, 1000)
	failedSt[0].Figures, failedSt[0].Error = nil, "boom"
	s := Summarize(finished(p), append(runs, failedSt...))

	st := cellOf(t, s, 1, "standalone")
	require.NotNil(t, st.RatioToStandalone)
	assert.Equal(t, 1.0, st.RatioToStandalone.Center, "standalone against itself")
	assert.False(t, st.RatioToStandalone.Differs)
	http := cellOf(t, s, 1, "nginx-http")
	require.NotNil(t, http.RatioToStandalone)
	assert.InDelta(t, 0.4, http.RatioToStandalone.Center, 1e-12)
	assert.Equal(t, 3, http.RatioToStandalone.N)
	assert.Equal(t, 3, http.RatioToStandalone.N2)
	assert.Nil(t, cellOf(t, s, 8, "nginx-http").RatioToStandalone, "standalone failed: no ratio")
	assert.Nil(t, cellOf(t, s, 8, "standalone").RatioToStandalone)
}

func TestUnconverged(t *testing.T) {
	probe := results.Schedule{Name: Probe2016, Probe: true, Requests: 10}
	tight := func(top string, g int, base float64) []results.Run {
		return runsAt(top, g, base, base*1.001, base*0.999, base*1.002, base*0.998, base)
	}
	wide := func(top string, g int, base float64) []results.Run {
		return runsAt(top, g, base*0.7, base*1.3, base, base*0.8, base*1.2, base)
	}
	tests := []struct {
		name string
		runs []results.Run
		want []Convergence // Center and HalfWidth checked apart
	}{
		{"every ratio tight", append(tight("standalone", 1, 1000), tight("nginx-http", 1, 400)...), nil},
		{"a wide ratio", append(tight("standalone", 1, 1000), wide("nginx-http", 1, 400)...),
			[]Convergence{{Key: Key{wrkGroup(1), "nginx-http"}, Figure: "ratio to standalone", Reps: 6}}},
		{"a wide standalone widens every ratio", append(wide("standalone", 1, 1000), tight("nginx-http", 1, 400)...),
			[]Convergence{{Key: Key{wrkGroup(1), "nginx-http"}, Figure: "ratio to standalone", Reps: 6}}},
		{"no standalone: the median req/s", append(wide("nginx-http", 1, 400), tight("nginx-return", 1, 900)...),
			[]Convergence{{Key: Key{wrkGroup(1), "nginx-http"}, Figure: "req/s", Reps: 6}}},
		{"standalone alone is tight by definition", tight("standalone", 1, 1000), nil},
		{"too few rounds for an interval", runsAt("nginx-http", 1, 1000, 1000, 1000),
			[]Convergence{{Key: Key{wrkGroup(1), "nginx-http"}, Figure: "req/s", Reps: 3}}},
		{"too few rounds for a ratio", append(runsAt("standalone", 1, 1000, 1000, 1000), runsAt("nginx-http", 1, 400, 400, 400)...),
			[]Convergence{{Key: Key{wrkGroup(1), "nginx-http"}, Figure: "ratio to standalone", Reps: 3}}},
		{"the probe measures no rate", func() []results.Run {
			var out []results.Run
			for _, r := range wide("standalone", 1, 1000) {
				r.Load, r.Schedule = results.LoadBuiltin, probe
				out = append(out, r)
			}
			return out
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := plan([]string{"standalone", "nginx-http", "nginx-return"}, 1)
			s := Summarize(finished(p), tt.runs)
			got := s.Unconverged(0.05)
			require.Len(t, got, len(tt.want))
			for i, cv := range got {
				assert.Equal(t, tt.want[i].Key, cv.Key)
				assert.Equal(t, tt.want[i].Figure, cv.Figure)
				assert.Equal(t, tt.want[i].Reps, cv.Reps)
				assert.False(t, cv.Hopeless, "more rounds can help")
				assert.Greater(t, cv.HalfWidth, 0.05)
			}
		})
	}

	t.Run("hopeless cells", func(t *testing.T) {
		p := plan([]string{"standalone", "nginx-http"}, 1, 8)
		runs := tight("standalone", 1, 1000)
		for _, r := range tight("nginx-http", 1, 400) {
			r.Figures, r.Error = nil, "boom"
			runs = append(runs, r)
		}
		for _, r := range tight("standalone", 8, 1000) {
			r.Figures, r.Error = nil, "boom"
			runs = append(runs, r)
		}
		runs = append(runs, tight("nginx-http", 8, 400)...)
		s := Summarize(finished(p), runs)
		got := s.Unconverged(0.05)
		require.Len(t, got, 2)
		for i, want := range []Key{{wrkGroup(1), "nginx-http"}, {wrkGroup(8), "nginx-http"}} {
			assert.Equal(t, want, got[i].Key, "table order")
			assert.True(t, got[i].Hopeless, "the cell or its standalone has no successful run")
			assert.True(t, math.IsNaN(got[i].Center) || got[i].Key.GOMAXPROCS == 8)
			assert.True(t, math.IsInf(got[i].HalfWidth, 1))
		}
	})

	t.Run("the bound", func(t *testing.T) {
		p := plan([]string{"standalone", "nginx-http"}, 1)
		s := Summarize(finished(p), append(tight("standalone", 1, 1000), wide("nginx-http", 1, 400)...))
		got := s.Unconverged(0.05)
		require.Len(t, got, 1)
		hw := got[0].HalfWidth
		assert.Empty(t, s.Unconverged(hw), "a half-width at the bound is within it")
		assert.Len(t, s.Unconverged(hw*0.999), 1)
		http := cellOf(t, s, 1, "nginx-http")
		assert.Equal(t, http.RatioToStandalone.HalfWidth(), hw)
		assert.Equal(t, http.RatioToStandalone.Center, got[0].Center)
	})
}

func TestCPUPerRequest(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	usage := func(us float64, reqs int64) results.Usage {
		return results.Usage{User: us * float64(reqs) / 1e6}
	}
	runs := runsAt("standalone", 1, 1000, 1000, 1000, 1000)
	for i := range runs {
		n := runs[i].Figures.Requests
		runs[i].CPU = &results.CPU{Load: usage(10+float64(i), n), Nginx: new(usage(0, n)), Server: new(usage(20+2*float64(i), n))}
	}
	runs[3].CPU = nil            // an old record
	runs[2].Figures.Requests = 0 // answered nothing: no per-request figure
	s := Summarize(finished(p), runs)
	c := cellOf(t, s, 1, "standalone")
	require.NotNil(t, c.CPU)
	assert.Equal(t, 2, c.CPU.Load.N, "runs 1 and 2 only")
	assert.InDelta(t, 10.5, c.CPU.Load.Center, 1e-9)
	assert.InDelta(t, 21, c.CPU.Server.Center, 1e-9)
	assert.Zero(t, c.CPU.Nginx.Center)
	assert.False(t, c.CPU.Load.Known(), "two runs: no interval")

	none := Summarize(finished(p), runsAt("standalone", 1, 1000))
	assert.Nil(t, cellOf(t, none, 1, "standalone").CPU, "not measured is not zero")
}

func TestCellLatency(t *testing.T) {
	p := plan([]string{"standalone"}, 1)
	runs := runsAt("standalone", 1, 1000, 1000, 1000, 1000)
	for i, d := range []time.Duration{4, 1, 3, 100} {
		runs[i].Figures.P50 = d * time.Millisecond
		runs[i].Figures.P99 = 2 * d * time.Millisecond
		runs[i].Figures.Max = 3 * d * time.Millisecond
	}
	runs[3].Figures.Latency = false // every request timed out: its figures are not samples
	c := cellOf(t, Summarize(finished(p), runs), 1, "standalone")
	assert.Equal(t, Latency{P50: 3 * time.Millisecond, P99: 6 * time.Millisecond, Max: 9 * time.Millisecond, Runs: 3}, c.Latency)
	assert.Equal(t, int64(40000), c.Requests, "requests count every successful run")
}

func TestSummaryAccessors(t *testing.T) {
	p := plan([]string{"nginx-http", "standalone"}, 8, 1)
	runs := append(runsAt("standalone", 8, 1), runsAt("nginx-http", 1, 1)...)
	runs = append(runs, runsAt("nginx-static", 1, 1)...) // outside the plan: after its topologies
	runs = append(runs, runsAt("mystery", 1, 1)...)      // unknown: last
	s := Summarize(finished(p), runs)
	assert.Equal(t, []Group{wrkGroup(1), wrkGroup(8)}, s.Groups(), "groups by value, not plan order")
	var rows []string
	for _, c := range s.Rows(wrkGroup(1)) {
		rows = append(rows, c.Topology)
	}
	assert.Equal(t, []string{"nginx-http", "nginx-static", "mystery"}, rows, "the plan's order, then the known topologies', then by name")
	assert.Equal(t, []string{"nginx-http", "nginx-static", "mystery", "standalone"}, s.Topologies())
	_, found := s.Cell(Key{wrkGroup(8), "nginx-http"})
	assert.False(t, found)
	assert.Empty(t, s.Rows(wrkGroup(2)))
	assert.Equal(t, "GOMAXPROCS=1 mystery", cellOf(t, s, 1, "mystery").Name())
	assert.False(t, cellOf(t, s, 1, "mystery").Ceiling, "an unknown topology is not a ceiling")
	assert.True(t, cellOf(t, s, 1, "nginx-static").Ceiling)
}

func TestIsolation(t *testing.T) {
	tests := []struct {
		name      string
		plan      results.Plan
		runLoad   string
		runServer string
		want      string
	}{
		{"netns, pinned by the plan", results.Plan{Isolation: results.IsolateNetns, PinLoad: "0", PinServer: "1"}, "", "",
			"netns: two network namespaces joined by a veth pair, the load generator in one and nginx and the servers in the other (nginx's upstream hop on that namespace's loopback); load generator on CPUs 0, servers on CPUs 1"},
		{"netns with a link delay, pinned per run", results.Plan{Isolation: results.IsolateNetns, LinkDelay: 100 * time.Microsecond}, "0", "1",
			"netns: two network namespaces joined by a veth pair delaying each packet 100µs on each end (tc netem), the load generator in one and nginx and the servers in the other (nginx's upstream hop on that namespace's loopback); load generator on CPUs 0, servers on CPUs 1"},
		{"netns unpinned", results.Plan{Isolation: results.IsolateNetns}, "", "",
			"netns: two network namespaces joined by a veth pair, the load generator in one and nginx and the servers in the other (nginx's upstream hop on that namespace's loopback); load generator on every CPU (unpinned), servers on every CPU (unpinned)"},
		{"none, shared", results.Plan{Isolation: results.IsolateNone}, "", "",
			"none: one loopback, as in 2013; the load generator, nginx and the servers share every CPU"},
		{"none, pinned", results.Plan{Isolation: results.IsolateNone, PinLoad: "0"}, "", "",
			"none: one loopback, as in 2013; load generator on CPUs 0, servers on every CPU (unpinned)"},
		{"an old record", results.Plan{}, "0", "1-3", "not recorded (loopback); wrk on CPUs 0; nginx and Go on CPUs 1-3"},
		{"an old record, unpinned", results.Plan{}, "", "", "not recorded (loopback); none: wrk, nginx and Go share every CPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.plan.Topologies, tt.plan.GOMAXPROCS, tt.plan.Connections, tt.plan.Reps = []string{"standalone"}, []int{1}, []int{5000}, 1
			r := ok("standalone", 1, 1, 1000)
			r.LoadCPUs, r.ServerCPUs = tt.runLoad, tt.runServer
			s := Summarize(finished(tt.plan), []results.Run{r})
			assert.Equal(t, tt.want, s.Isolation)
		})
	}
}

package analysis

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// TestSummary checks the computed figures of the fixture by hand, so the
// golden files cannot drift into accepting wrong numbers.
func TestSummary(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	s := Summarize(env, runs)
	assert.Equal(t, []Group{wrkGroup(1), wrkGroup(8)}, s.Groups())
	assert.Equal(t, env.Plan.Topologies, s.Topologies())
	require.Len(t, s.Cells, 10)

	st, ok := s.Cell(Key{wrkGroup(1), "standalone"})
	require.True(t, ok)
	assert.Equal(t, Stat{Median: 37410.02, Min: 36638.75, Max: 38266.17}, st.ReqPerSec, "3 runs: no interval")
	assert.InDelta(t, (38266.17-36638.75)/37410.02, st.Spread, 1e-12)
	assert.Equal(t, 3, st.Reps)
	assert.Equal(t, 130100*time.Microsecond, st.Latency.P50, "median of 129.23, 131.73, 130.10 ms")
	assert.Equal(t, 301200*time.Microsecond, st.Latency.P99)
	require.NotNil(t, st.RatioToStandalone)
	assert.Equal(t, 1.0, st.RatioToStandalone.Center)
	assert.False(t, st.RatioToStandalone.Known(), "3 rounds: no interval")

	http, _ := s.Cell(Key{wrkGroup(1), "nginx-http"})
	assert.InDelta(t, 15120.40/37410.02, http.RatioToStandalone.Center, 1e-12, "median over median")
	assert.Equal(t, "0.40 ± ∞ ~", ratioText(http.RatioToStandalone))

	tcp, _ := s.Cell(Key{wrkGroup(1), "nginx-fcgi-tcp"})
	assert.Equal(t, results.Errors{Timeout: 1067}, tcp.Errors, "errors are summed over runs")
	assert.Equal(t, int64(231934+423923+306309), tcp.Requests)

	unix8, _ := s.Cell(Key{wrkGroup(8), "nginx-fcgi-unix"})
	assert.Equal(t, 2, unix8.Reps)
	assert.Equal(t, 1, unix8.Failed)
	assert.InDelta(t, (12969.57+11987.55)/2, unix8.ReqPerSec.Median, 1e-9, "even count: mean of the middle two")

	ret1, _ := s.Cell(Key{wrkGroup(1), "nginx-return"})
	assert.True(t, ret1.Ceiling)
	assert.Equal(t, 83400*time.Microsecond, ret1.Latency.P50, "distribution only (no script) still gives percentiles")

	kinds := map[string][]string{}
	for _, w := range s.Warnings {
		kinds[w.Kind] = append(kinds[w.Kind], w.Cell)
	}
	assert.Equal(t, []string{""}, kinds["gomaxprocs"], "GOMAXPROCS=8 on 2 CPUs")
	assert.ElementsMatch(t, []string{"GOMAXPROCS=8 nginx-fcgi-unix"}, kinds["failed"])
	assert.ElementsMatch(t, []string{"GOMAXPROCS=8 standalone"}, kinds["ceiling"], "53.2k is within 10% of 57.4k")
	assert.ElementsMatch(t, []string{
		"GOMAXPROCS=1 nginx-fcgi-tcp", "GOMAXPROCS=8 standalone", "GOMAXPROCS=8 nginx-http",
		"GOMAXPROCS=8 nginx-fcgi-tcp", "GOMAXPROCS=8 nginx-fcgi-unix",
	}, kinds["errors"])
	assert.ElementsMatch(t, []string{
		"GOMAXPROCS=1 nginx-http", "GOMAXPROCS=1 nginx-fcgi-tcp", "GOMAXPROCS=1 nginx-fcgi-unix", "GOMAXPROCS=8 nginx-fcgi-tcp",
	}, kinds["spread"])
	assert.Empty(t, kinds["missing"])
	assert.Empty(t, kinds["interrupted"])
	assert.Equal(t, []Failure{{Run: "g8-nginx-fcgi-unix-r2", Error: "wrk against http://127.0.0.1:8083/ did not finish within 42s: context deadline exceeded"}}, s.Failures)

	require.Len(t, s.Reference, 8)
	ref := s.Reference[1]
	assert.Equal(t, "nginx-http", ref.Topology)
	assert.InDelta(t, 39991.57/42745.15, ref.RefRatio, 1e-12)
	require.NotNil(t, ref.ReqPerSec)
	assert.Equal(t, http.ReqPerSec.Median, *ref.ReqPerSec)
	assert.Equal(t, results.Errors{Timeout: 661}, s.Reference[2].RefErrors)
}

func TestReference2013(t *testing.T) {
	source, rows, err := Reference2013()
	require.NoError(t, err)
	require.Len(t, source, 2)
	assert.Contains(t, source[0], "wrk 3.0.4 -t100 -c5000 -d30s")
	require.Len(t, rows, 8)
	assert.Equal(t, RefRow{
		GOMAXPROCS: 8, Topology: "nginx-fcgi-tcp", ReqPerSec: 24026.50, Requests: 721027,
		LatencyAvg: 217690 * time.Microsecond, LatencyStdev: 121220 * time.Microsecond, LatencyMax: 1800 * time.Millisecond,
		Errors: results.Errors{Write: 176, Timeout: 1343},
	}, rows[6])
}

// wrkGroup is the group of the fixture's runs: cmd/hello under wrk -c5000.
func wrkGroup(gomaxprocs int) Group {
	return Group{Target: "go", GOMAXPROCS: gomaxprocs, Connections: 5000, Load: "wrk"}
}

// TestIntervals checks the isolated fixture's figures by hand: with six
// rounds a median's 95% interval runs from the smallest to the largest
// value (order statistics 1 and 6, level 0.969), ratios are taken round
// by round, and CPU per request is known by construction.
func TestIntervals(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	s := Summarize(env, runs)
	g := wrkGroup(1)
	rates := func(topology string) map[int]float64 {
		m := map[int]float64{}
		for _, r := range runs {
			if r.Topology == topology {
				m[r.Rep] = r.Figures.ReqPerSec
			}
		}
		require.Len(t, m, 6)
		return m
	}

	st, _ := s.Cell(Key{g, "standalone"})
	var sv []float64
	for _, v := range rates("standalone") {
		sv = append(sv, v)
	}
	slices.Sort(sv)
	require.NotNil(t, st.ReqPerSec.CILo)
	assert.Equal(t, sv[0], *st.ReqPerSec.CILo)
	assert.Equal(t, sv[5], *st.ReqPerSec.CIHi)
	assert.Equal(t, (sv[2]+sv[3])/2, st.ReqPerSec.Median)

	http, _ := s.Cell(Key{g, "nginx-http"})
	var hv []float64
	for _, v := range rates("nginx-http") {
		hv = append(hv, v)
	}
	slices.Sort(hv)
	// The interval runs over the 36 ratios of an nginx-http run to a
	// standalone run, from the 6th smallest to the 6th largest: the
	// Mann-Whitney critical value for 6 and 6 runs at 0.05 is U=5.
	var pairs []float64
	for _, h := range hv {
		for _, s := range sv {
			pairs = append(pairs, h/s)
		}
	}
	slices.Sort(pairs)
	r := http.RatioToStandalone
	require.NotNil(t, r)
	assert.InDelta(t, ((hv[2]+hv[3])/2)/((sv[2]+sv[3])/2), r.Center, 1e-12, "median over median")
	assert.InDelta(t, pairs[5], *r.Lo, 1e-12)
	assert.InDelta(t, pairs[30], *r.Hi, 1e-12)
	assert.Equal(t, stats.Compare(sv, hv).Significant(), r.Differs, "significant exactly when benchstat's U test is")
	assert.True(t, r.Differs)
	assert.InDelta(t, math.Max(pairs[30]/r.Center-1, 1-pairs[5]/r.Center), r.HalfWidth(), 1e-12)

	require.NotNil(t, http.CPU)
	for _, c := range []struct {
		name        string
		iv          Interval
		med, lo, hi float64
	}{
		{"load", http.CPU.Load, 21.5, 19, 24},
		{"nginx", *http.CPU.Nginx, 43.5, 41, 46},
		{"server", *http.CPU.Server, 37, 32, 42},
	} {
		assert.InDelta(t, c.med, c.iv.Center, 1e-6, c.name)
		assert.InDelta(t, c.lo, *c.iv.Lo, 1e-6, c.name)
		assert.InDelta(t, c.hi, *c.iv.Hi, 1e-6, c.name)
	}
	kinds := map[string][]string{}
	for _, w := range s.Warnings {
		kinds[w.Kind] = append(kinds[w.Kind], w.Cell)
	}
	assert.Equal(t, []string{"GOMAXPROCS=1 nginx-http"}, kinds["noise"])
	assert.Equal(t, []string{"GOMAXPROCS=1 nginx-fcgi-tcp"}, kinds["unsettled"])
	assert.Equal(t, []string{"GOMAXPROCS=1 standalone"}, kinds["retried"])
	assert.Equal(t, []string{"GOMAXPROCS=1 nginx-http", "GOMAXPROCS=1 nginx-fcgi-tcp", "GOMAXPROCS=1 nginx-fcgi-unix"}, kinds["not converged"],
		"nginx-return's ratio is within ±5%")
	assert.Empty(t, s.Unconverged(0.40), "every ratio is within ±40%")
	assert.Contains(t, s.Isolation, "two network namespaces joined by a veth pair")
	assert.Contains(t, s.Isolation, "load generator on CPUs 0, servers on CPUs 1")

}

func TestRatio(t *testing.T) {
	tests := []struct {
		name     string
		num, den []float64
		want     string // the table's "vs standalone"
		differs  bool
	}{
		{"overlapping runs: no difference", []float64{98, 101, 99, 102, 100, 100}, []float64{100, 99, 101, 100, 102, 98}, "1.00 ± 2% ~", false},
		{"every run apart", []float64{48, 50, 49, 51, 50, 52}, []float64{100, 99, 101, 100, 102, 98}, "0.50 ± 3%", true},
		{"four runs each are enough", []float64{48, 50, 49, 51}, []float64{100, 99, 101, 100}, "0.49 ± 4%", true},
		{"three runs each are not", []float64{48, 50, 49}, []float64{100, 99, 101}, "0.49 ± ∞ ~", false},
		{"the counts need not match", []float64{50, 51, 49, 52, 48}, []float64{100, 101, 99, 102}, "0.50 ± 5%", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := RatioOf(tt.num, tt.den)
			require.NotNil(t, r)
			assert.Equal(t, tt.want, ratioText(r))
			assert.Equal(t, tt.differs, r.Differs)
			assert.Equal(t, stats.Compare(tt.den, tt.num).Significant(), r.Differs, "the U test agrees")
		})
	}
	assert.Nil(t, RatioOf([]float64{1, 2}, nil), "no runs to divide by")
	assert.Equal(t, 4, MinRatioRuns())
	assert.Equal(t, 6, MinRounds())
}

// ratioText is the ratio as the report prints it: "0.50 ± 3%", with "~"
// when the interval does not exclude 1.
func ratioText(r *Ratio) string {
	mark := ""
	if !r.Differs {
		mark = " ~"
	}
	return fmt.Sprintf("%.2f ± %s%s", r.Center, numfmt.HalfWidth(r.HalfWidth()), mark)
}

// TestCrossCheckNoGroup: a paired sweep's cross-check is no group: its
// cells are listed apart, not ranked, and a budget's convergence neither
// waits for nor warns about their one run each.
func TestCrossCheckNoGroup(t *testing.T) {
	env, runs := analysistest.PairedSweep()
	env.Plan.RepsAuto = &results.RepsAuto{Max: 30, Within: 0.001, Confidence: 0.975, Budget: time.Minute}
	s := Summarize(env, runs)
	require.Len(t, s.Groups(), 1)
	assert.Equal(t, results.LoadBuiltin, s.Groups()[0].Load)
	checks := s.CrossChecks()
	require.Len(t, checks, 2)
	for _, c := range checks {
		assert.Equal(t, results.LoadWrk, c.Load)
		assert.Zero(t, c.Rank, c.Name())
		assert.NotContains(t, c.Notes, "not converged", c.Name())
	}
	require.NotNil(t, checks[1].RatioToStandalone, "its ratio is computed once, here")
	assert.InDelta(t, 18040.0/41000, checks[1].RatioToStandalone.Center, 1e-9)
	unconverged := s.Unconverged(env.Plan.RepsAuto.Within)
	assert.NotEmpty(t, unconverged, "±0.1% is out of reach of the pairs")
	for _, cv := range unconverged {
		assert.NotEqual(t, results.LoadWrk, cv.Key.Load, "the cross-check is not waited for")
	}
	assert.Equal(t, "load generator on CPUs 0, servers on CPUs 1", s.CPUSplit)
}

// TestSummaryTLSBaseline: in a sweep with paths over TLS, each of them
// is compared with standalone-tls (Go's own TLS), the plain ones with
// standalone.
func TestSummaryTLSBaseline(t *testing.T) {
	rates := map[string]float64{"standalone": 40000, "nginx-http": 16000, "standalone-tls": 20000, "nginx-tls-http": 10000}
	tops := []string{"standalone", "nginx-http", "standalone-tls", "nginx-tls-http"}
	env := results.Env{Plan: results.Plan{Topologies: tops, GOMAXPROCS: []int{1}, Connections: []int{10}, Reps: 3, Duration: time.Second}}
	var runs []results.Run
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for rep := 1; rep <= 3; rep++ {
		for _, top := range tops {
			r := rates[top] * (1 + 0.01*float64(rep))
			runs = append(runs, results.Run{
				Cell:    results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 10, Load: results.LoadWrk, Rep: rep},
				Start:   t0.Add(time.Duration(len(runs)) * time.Second),
				Figures: &results.Figures{Requests: int64(r), ReqPerSec: r},
			})
		}
	}
	s := Summarize(env, runs)
	for top, want := range map[string]float64{"standalone": 1, "nginx-http": 0.4, "standalone-tls": 1, "nginx-tls-http": 0.5} {
		c, ok := s.Cell(Key{Group{Target: "go", GOMAXPROCS: 1, Connections: 10, Load: "wrk"}, top})
		require.True(t, ok, top)
		require.NotNil(t, c.RatioToStandalone, top)
		assert.InDelta(t, want, c.RatioToStandalone.Center, 1e-9, top)
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/third_party/uplot"
)

// htmlCase is a page the golden and the browser tests render: one sweep,
// or a comparison (baseline first).
type htmlCase struct {
	name   string
	sweeps []Sweep
}

func sweepOf(name, dir string, env results.Env, runs []results.Run) Sweep {
	return Sweep{Name: name, Dir: dir, Summary: analysis.Summarize(env, runs), Runs: runs}
}

// htmlCases are the fixtures of the text reports, the 2016 sweep with
// histograms written beside its runs, and a comparison of the isolated
// fixture with a sweep on a machine that ran slower.
func htmlCases(t *testing.T) []htmlCase {
	var out []htmlCase
	g := goldenCases(t)
	for _, name := range []string{"sweep", "isolated", "empty", "paired", "choice", "handler", "latency", "tls-kept", "tls-handshakes", "tls-loads", "tls-mixed"} {
		env, runs := g[name]()
		out = append(out, htmlCase{name, []Sweep{sweepOf(name, analysistest.Dir(), env, runs)}})
	}
	sc := scenarioCases()
	env, runs := sc["scenarios2016"]()
	out = append(out, htmlCase{"scenarios2016", []Sweep{sweepOf("scenarios2016", engineHistograms(t, runs), env, runs)}})
	env, runs = sc["scenarios2009"]()
	out = append(out, htmlCase{"scenarios2009", []Sweep{sweepOf("scenarios2009", "", env, runs)}})
	env, runs = analysistest.CostSweep(true)
	out = append(out, htmlCase{"cost", []Sweep{sweepOf("cost", "", env, runs)}})
	env, runs = clusterFixture()
	out = append(out, htmlCase{"cluster", []Sweep{sweepOf("cluster", "", env, runs)}})
	env, runs = analysistest.IsolatedFixture(t)
	shiftedEnv, shifted := shiftedFixture(t)
	base, other := sweepOf("isolated", "", env, runs), sweepOf("shifted", "", shiftedEnv, shifted)
	compared, err := CompareSweeps([]Sweep{base, other})
	require.NoError(t, err)
	out = append(out, htmlCase{"compare", compared})
	return out
}

// shiftedFixture is the isolated fixture on a machine that ran slower:
// the load generator spent 25% more CPU per request, every rate is 7%
// lower, and nginx-http's 30% higher on top of that, so its ratio to
// standalone changed and the others' did not.
func shiftedFixture(t *testing.T) (results.Env, []results.Run) {
	env, runs := analysistest.IsolatedFixture(t)
	env.Start, env.End = env.Start.Add(time.Hour), env.End.Add(time.Hour)
	var out []results.Run
	for _, r := range runs {
		res := *r.Figures
		res.ReqPerSec *= 0.93
		if r.Topology == "nginx-http" {
			res.ReqPerSec *= 1.3
		}
		r.Figures = &res
		cpu := *r.CPU
		cpu.Load.User, cpu.Load.System = cpu.Load.User*1.25, cpu.Load.System*1.25
		r.CPU = &cpu
		out = append(out, r)
	}
	return env, out
}

// engineHistograms writes a histogram beside every run of the built-in
// engine, as the sweep does, in a new results directory: 2,000 samples
// rising from the run's p50 to 2.5 times it in the last few percent.
func engineHistograms(t *testing.T, runs []results.Run) string {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, results.RunsDir), 0o755))
	for _, r := range runs {
		h := hdr.New()
		base := float64(r.Figures.P50) / float64(time.Microsecond)
		const n = 2000
		for i := range n {
			x := float64(i) / n
			require.NoError(t, h.RecordValue(int64(base*(1+1.5*x*x*x*x*x*x*x*x))))
		}
		require.NoError(t, hdr.WriteFiles(filepath.Join(dir, results.RunsDir), r.Name(), h))
	}
	return dir
}

func renderHTML(t *testing.T, sweeps []Sweep) []byte {
	t.Helper()
	var b bytes.Buffer
	if len(sweeps) == 1 {
		s := sweeps[0]
		require.NoError(t, writeHTML(&b, []Sweep{{Name: s.Name, Dir: s.Dir, Summary: s.Summary, Runs: s.Runs}}))
	} else {
		require.NoError(t, WriteCompareHTML(&b, sweeps))
	}
	return b.Bytes()
}

// TestHTMLGolden renders report.html of each case and compares it with
// testdata/golden/CASE/report.html; go test -update rewrites them. The
// golden files leave uPlot out (a placeholder names it): it is pinned by
// third_party/uplot/SHA256SUMS; and the page's own script and styles,
// the same on every page, which html/page.js and page.css hold and the
// browser test runs.
func TestHTMLGolden(t *testing.T) {
	for _, c := range htmlCases(t) {
		t.Run(c.name, func(t *testing.T) {
			page := renderHTML(t, c.sweeps)
			require.Equal(t, 1, bytes.Count(page, []byte(uplot.JS())), "uPlot inline once")
			page = bytes.Replace(page, []byte(uplot.JS()), []byte("/* uPlot "+uplot.Version()+": third_party/uplot/uPlot.iife.min.js */"), 1)
			for _, asset := range []string{"page.js", "page.css"} {
				b, err := htmlAssets.ReadFile("html/" + asset)
				require.NoError(t, err)
				require.Equal(t, 1, bytes.Count(page, b), "%s inline once", asset)
				page = bytes.Replace(page, b, []byte("/* internal/report/html/"+asset+" */"), 1)
			}
			golden := filepath.Join("testdata", "golden", c.name, HTMLFile)
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, page, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./internal/report -update")
			assert.Equal(t, string(want), string(page))
		})
	}
}

// TestHTMLDeterministic: the same records give the same bytes.
func TestHTMLDeterministic(t *testing.T) {
	for _, c := range htmlCases(t) {
		assert.Equal(t, renderHTML(t, c.sweeps), renderHTML(t, c.sweeps), c.name)
	}
}

// TestHTMLSelfContained: nothing on the page loads from elsewhere.
func TestHTMLSelfContained(t *testing.T) {
	for _, c := range htmlCases(t) {
		page := string(renderHTML(t, c.sweeps))
		for _, bad := range []*regexp.Regexp{
			regexp.MustCompile(`<(script|img|iframe|link)[^>]*\s(src|href)=`),
			regexp.MustCompile(`@import`),
			regexp.MustCompile(`url\(\s*['"]?(https?:)?//`),
		} {
			assert.NotRegexp(t, bad, page, c.name)
		}
		assert.Contains(t, page, "<details>\n<summary>", "%s: the environment is folded", c.name)
	}
}

// TestHTMLData checks the chart data against the summary by hand, so the
// golden files cannot drift into drawing wrong numbers.
func TestHTMLData(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	s := analysis.Summarize(env, runs)
	page, data, err := buildPage([]Sweep{{Name: "isolated", Summary: s, Runs: runs}})
	require.NoError(t, err)
	assert.Equal(t, len(data.Charts), page.Charts)

	byTitle := map[string]chartSpec{}
	for _, c := range data.Charts {
		byTitle[c.Title] = c
	}
	ratio := byTitle["Ratio to standalone"]
	require.NotEmpty(t, ratio.Series)
	assert.Equal(t, []string{"nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return"}, ratio.Cats)
	http, _ := s.Cell(analysis.Key{Group: wrkGroup(1), Topology: "nginx-http"})
	assert.Equal(t, sig4(http.RatioToStandalone.Center), *ratio.Series[0].Y[0])
	assert.Equal(t, sig4(*http.RatioToStandalone.Lo), *ratio.Series[0].Lo[0])
	ref := ratio.Series[len(ratio.Series)-1]
	assert.Equal(t, "2013, GOMAXPROCS=1", ref.Label)
	assert.InDelta(t, 0.94, *ref.Y[0], 0.005, "2013's nginx-http at GOMAXPROCS=1")

	cpu := byTitle["CPU µs per request, GOMAXPROCS=1"]
	require.Len(t, cpu.Series, 3)
	ngx, server, ld := cpu.Series[0], cpu.Series[1], cpu.Series[2]
	// Rep r spent 40+r µs of nginx, 30+2r of server and 18+r of load
	// generator per request: medians over reps 1..6 are 43.5, 37, 21.5.
	assert.InDelta(t, 43.5, *ngx.Y[1], 0.01)
	assert.InDelta(t, 43.5, *server.Base[1], 0.01)
	assert.InDelta(t, 43.5+37, *server.Y[1], 0.01, "the server stacked on nginx")
	assert.InDelta(t, 21.5, *ld.Y[1], 0.01)
	assert.Equal(t, 1, ld.Slot)

	rounds := byTitle["req/s per run, GOMAXPROCS=1"]
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, rounds.X)
	for _, ser := range rounds.Series {
		switch ser.Label {
		case "nginx-http":
			assert.Equal(t, []int{1}, ser.Mark, "rep 2 was noisy")
		case "nginx-fcgi-tcp":
			assert.Equal(t, []int{2}, ser.Mark, "rep 3 was unsettled")
		case "standalone":
			assert.Equal(t, []int{4}, ser.Mark, "rep 5 was retried")
		default:
			assert.Empty(t, ser.Mark, ser.Label)
		}
	}

	require.Len(t, page.Sweeps, 1)
	require.Len(t, page.Sweeps[0].Answers, 1)
	assert.Contains(t, page.Sweeps[0].Answers[0], "GOMAXPROCS=1: standalone is fastest at "+numfmt.Count(s.Rows(wrkGroup(1))[0].ReqPerSec.Median)+" req/s")
	assert.Contains(t, page.Sweeps[0].Answers[0], "the fastest path through nginx, nginx-http, serves "+fmt.Sprintf("%.2f", http.RatioToStandalone.Center))
	assert.Equal(t, "noise 1, unsettled 1, retried 1", page.Sweeps[0].RunCounts)
}

// TestHTMLSpectrum checks the percentile lines against the histograms.
func TestHTMLSpectrum(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	dir := engineHistograms(t, runs)
	_, data, err := buildPage([]Sweep{{Name: "x", Dir: dir, Summary: analysis.Summarize(env, runs), Runs: runs}})
	require.NoError(t, err)
	var spectra []chartSpec
	for _, c := range data.Charts {
		if strings.HasPrefix(c.Title, "Latency by percentile") {
			spectra = append(spectra, c)
		}
	}
	require.Len(t, spectra, 4, "one per scenario")
	sp := spectra[1] // slow-requests: standalone's p50 is 1000.5 ms
	assert.True(t, sp.YLog)
	assert.Equal(t, 0.0, sp.X[0])
	// 2,000 samples reach 3.3 nines.
	assert.InDelta(t, 3.301, sp.X[len(sp.X)-1], 0.001)
	std := sp.Series[0]
	assert.Equal(t, "standalone", std.Label)
	assert.InDelta(t, 1000.5, *std.Y[0], 1, "p0 is the smallest sample, ms")
	assert.InDelta(t, 2.5*1000.5, *std.Y[len(std.Y)-1], 15, "the line ends at the maximum")
}

// TestCompare: the machine statement and the changes of the ratios.
func TestCompare(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	base := sweepOf("a", "", env, runs)
	compare := func(a, b Sweep) Sweep {
		out, err := CompareSweeps([]Sweep{a, b})
		require.NoError(t, err)
		return out[1]
	}
	t.Run("same", func(t *testing.T) {
		same := compare(base, base)
		changes := same.Changes
		require.Len(t, changes, 4)
		for _, c := range changes {
			assert.Zero(t, c.Change, c.Key.String())
			assert.False(t, c.Significant, c.Key.String())
		}
		st := machineStatements(base, same, "A", "B")
		require.Len(t, st, 1)
		assert.Contains(t, st[0], "ran at the same speed")
	})
	t.Run("shifted", func(t *testing.T) {
		senv, sruns := shiftedFixture(t)
		other := compare(base, sweepOf("b", "", senv, sruns))
		changes := other.Changes
		require.Len(t, changes, 4)
		for _, c := range changes {
			if c.Key.Topology == "nginx-http" {
				assert.InDelta(t, 0.3, c.Change, 1e-9)
				assert.True(t, c.Significant)
				assert.Less(t, c.P, 0.05)
				continue
			}
			assert.InDelta(t, 0, c.Change, 1e-9, c.Key.String())
			assert.False(t, c.Significant, c.Key.String())
		}
		st := machineStatements(base, other, "A", "B")
		require.Len(t, st, 1)
		assert.Contains(t, st[0], "The machines differ: the load generator spent +25% CPU per request in B")
	})
}

// TestHTMLSize: a default sweep's page (9 topologies, GOMAXPROCS 1 and 8,
// 12 rounds, CPU measured) stays under 1 MB.
func TestHTMLSize(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	env.Plan.Topologies = []string{"standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return", "nginx-static", "nginx-fcgi-fast-tcp", "nginx-fcgi-fast-unix", "nginx-http-unix"}
	env.Plan.GOMAXPROCS, env.Plan.Reps, env.Plan.RepsAuto = []int{1, 8}, 12, nil
	proto := runs[0]
	var big []results.Run
	for _, g := range env.Plan.GOMAXPROCS {
		for ti, top := range env.Plan.Topologies {
			for rep := 1; rep <= 12; rep++ {
				r := proto
				r.Topology, r.GOMAXPROCS, r.Rep = top, g, rep
				res := *proto.Figures
				res.ReqPerSec = 40000 / float64(ti+1) * (1 + 0.01*float64(rep%5))
				r.Figures = &res
				big = append(big, r)
			}
		}
	}
	page := renderHTML(t, []Sweep{sweepOf("default", "", env, big)})
	t.Logf("report.html of a default-sized sweep: %d bytes", len(page))
	assert.Less(t, len(page), 1<<20)
	var data chartData
	m := regexp.MustCompile(`(?s)<script type="application/json" id="chart-data">(.*?)</script>`).FindSubmatch(page)
	require.NotNil(t, m)
	require.NoError(t, json.Unmarshal(m[1], &data))
	assert.Len(t, data.Charts, 1+2+2, "ratios, CPU per group, rounds per group")
}

package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

func TestLatencyChartName(t *testing.T) {
	g := analysis.Group{Target: "go", GOMAXPROCS: 2, Connections: 100, Load: results.LoadBuiltin}
	with := func(f func(*analysis.Group)) analysis.Group {
		x := g
		f(&x)
		return x
	}
	for _, tt := range []struct {
		group analysis.Group
		want  string
	}{
		{g, "latency-g2-c100-closed"},
		{with(func(x *analysis.Group) { x.Schedule.Name = analysis.Slow2016 }), "latency-g2-c100-slow-requests"},
		{with(func(x *analysis.Group) { x.Schedule.Rate = 2.5 }), "latency-g2-c100-rate2.5"},
		{with(func(x *analysis.Group) { x.Schedule.Rate, x.Schedule.Wait = 1000, 100*time.Millisecond }), "latency-g2-c100-rate1000-wait100ms"},
		{with(func(x *analysis.Group) { x.Schedule.Wait = time.Second }), "latency-g2-c100-closed-wait1s"},
		{with(func(x *analysis.Group) { x.Target = "erlang" }), "latency-erlang-g2-c100-closed"},
		{with(func(x *analysis.Group) { x.Target = "" }), "latency-g2-c100-closed"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, latencyChartName(tt.group))
			assert.NotContains(t, tt.want, "/", "a file name")
		})
	}
}

// TestChartsWithoutHistograms: records copied without their .hdr files
// still render; the latency charts are drawn from what there is.
func TestChartsWithoutHistograms(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	rs, err := Select("charts")
	require.NoError(t, err)
	require.NoError(t, Write(dir, env, runs, rs...))
	assert.FileExists(t, filepath.Join(dir, ReqPSChart+".svg"))
}

// TestChartsBadHistogram: a histogram that does not decode fails the
// chart, naming it, rather than drawing a wrong one.
func TestChartsBadHistogram(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	dir := writeSweep(t, env, runs)
	bad := filepath.Join(dir, results.RunsDir, runs[1].Name()+".hdr")
	require.FileExists(t, bad)
	require.NoError(t, os.WriteFile(bad, []byte("not a histogram"), 0o644))
	rs, err := Select("charts")
	require.NoError(t, err)
	err = Rewrite(dir, rs...)
	assert.ErrorContains(t, err, "chart latency-g2-c100-slow-requests: ")
}

// TestCPUChartPanels: one panel per group that measured CPU, each
// labelled; none at all without CPU records.
func TestCPUChartPanels(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	env.Plan.GOMAXPROCS = []int{1, 4}
	var both []results.Run
	for _, r := range runs {
		both = append(both, r)
		r.GOMAXPROCS = 4
		both = append(both, r)
	}
	dir := t.TempDir()
	require.NoError(t, summarize(env, both).WriteCharts(dir))
	svg, err := os.ReadFile(filepath.Join(dir, CPUChart+".svg"))
	require.NoError(t, err)
	checkSVG(t, svg)
	for _, label := range []string{"GOMAXPROCS=1", "GOMAXPROCS=4"} {
		assert.Contains(t, string(svg), label)
	}
	for _, top := range []string{"standalone", "nginx-http", "nginx-fcgi-tcp"} {
		assert.Contains(t, string(svg), top)
	}

	var old []results.Run
	for _, r := range both {
		r.CPU = nil
		old = append(old, r)
	}
	dir = t.TempDir()
	require.NoError(t, summarize(env, old).WriteCharts(dir))
	assert.NoFileExists(t, filepath.Join(dir, CPUChart+".svg"))
	assert.NoFileExists(t, filepath.Join(dir, CPUChart+".png"))
}

// TestMarkdownLinks: summary.md links exactly the charts the charts
// renderer draws for the sweep.
func TestMarkdownLinks(t *testing.T) {
	for name, mk := range map[string]func() (results.Env, []results.Run){
		"fixture":  func() (results.Env, []results.Run) { return analysistest.Fixture(t) },
		"isolated": func() (results.Env, []results.Run) { return analysistest.IsolatedFixture(t) },
		"2009":     scenarioCases()["scenarios2009"],
		"2016":     scenarioCases()["scenarios2016"],
	} {
		t.Run(name, func(t *testing.T) {
			env, runs := mk()
			dir := writeSweep(t, env, runs)
			require.NoError(t, Rewrite(dir))
			md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
			require.NoError(t, err)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			for _, e := range entries {
				if svg, ok := strings.CutSuffix(e.Name(), ".svg"); ok {
					assert.Contains(t, string(md), "("+svg+".svg)", "summary.md links %s", e.Name())
				}
			}
			links := 0
			for _, l := range strings.Split(string(md), "\n") {
				if i := strings.Index(l, "]("); i >= 0 && strings.Contains(l, ".svg)") {
					target := l[i+2 : strings.Index(l[i:], ".svg)")+i+4]
					assert.FileExists(t, filepath.Join(dir, target), "the link in %q", l)
					links++
				}
			}
			assert.GreaterOrEqual(t, links, 2, "reqps and p99 at least")
		})
	}
}

// TestFailedRunsSection: a failed run's error is quoted whole in a code
// block, and a fence inside it cannot close the block early.
func TestFailedRunsSection(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	runs[0].Figures, runs[0].Error = nil, "wrk said:\n```\nboom\n```"
	var b strings.Builder
	require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
	out := b.String()
	assert.Contains(t, out, "g1-standalone-r1")
	assert.Contains(t, out, "wrk said:\n'''\nboom\n'''")
	assert.Equal(t, "a '''b'''", fence(" a ```b``` \n"))
	assert.Equal(t, `x \| y z`, md("x | y\n z"))
}

package report

import (
	"bytes"
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
	"github.com/topobench/topobench/internal/results"
)

// headerLines are the lines between summary.md's title and its first
// blank line.
func headerLines(t *testing.T, md string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "# topobench results\n\n")
	require.True(t, ok)
	head, _, _ := strings.Cut(rest, "\n\n")
	return strings.Split(head, "\n")
}

// TestReportHeader: each report opens with at most five lines that name the
// command, the date, the machine, the design, nginx's upstream pool
// against the clients and the CPU split; the per-ratio interval methods
// are below the answer.
func TestReportHeader(t *testing.T) {
	auto := func() (results.Env, []results.Run) {
		env, runs := analysistest.PairedSweep()
		env.Plan.UpstreamKeepalive = []results.Keepalive{results.KeepaliveAuto}
		env.Nginx.Keepalive = map[string]int{"auto": 5000}
		return env, runs
	}
	budget := func() (results.Env, []results.Run) {
		env, runs := analysistest.PairedSweep()
		env.Plan.RepsAuto = &results.RepsAuto{Max: 30, Within: 0.05, Confidence: 0.975, Budget: 10 * time.Minute}
		return env, runs
	}
	for _, c := range []struct {
		name   string
		sweep  func() (results.Env, []results.Run)
		design string
		pool   string
		cpus   string
	}{
		{"paired, 2013's pool", analysistest.PairedSweep, "paired windows of 1s", "upstream keepalive 300 (2013's) for 5000 clients",
			"load generator on CPUs 0, servers on CPUs 1"},
		{"paired, sized pool", auto, "6 pairs a topology", "upstream keepalive sized to the clients (auto, 5000) for 5000 clients", "servers on CPUs 1"},
		{"paired on a budget", budget, "on a budget of 10m, sequential at", "upstream keepalive 300 (2013's)", "servers on CPUs 1"},
		{"rounds", func() (results.Env, []results.Run) { return analysistest.IsolatedFixture(t) }, "rounds of wrk -t100 -c5000 -d30s", "upstream keepalive 300 (2013's) for 5000 clients",
			"load generator on CPUs 0, servers on CPUs 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env, runs := c.sweep()
			s := summarize(env, runs)
			var b bytes.Buffer
			require.NoError(t, s.WriteMarkdown(&b))
			lines := headerLines(t, b.String())
			assert.LessOrEqual(t, len(lines), 5, "header:\n%s", strings.Join(lines, "\n"))
			head := strings.Join(lines, "\n")
			for _, want := range []string{"**Command:** `topobench compare", "**Ran:** 2026-", "**Machine:** ", "2 logical CPUs", c.design, c.pool, c.cpus} {
				assert.Contains(t, head, want)
			}
			assert.NotContains(t, head, "correlation allowance", "the interval methods are below the answer")

			// The methods table comes after the results.
			md := b.String()
			if env.Plan.Paired != nil {
				methods := strings.Index(md, "| group | ratio to standalone | pairs | interval | lag-1 |")
				require.Positive(t, methods)
				assert.Greater(t, methods, strings.Index(md, "## Results"))
				assert.Greater(t, methods, strings.Index(md, "## How it was measured"))
			}

			// report.html's header holds the same lines, before the answer.
			page := string(renderHTML(t, []Sweep{sweepOf("x", "", env, runs)}))
			_, hd, ok := strings.Cut(page, `<ul class="head">`)
			require.True(t, ok)
			hd, _, _ = strings.Cut(hd, "</ul>")
			items := regexp.MustCompile(`<li>`).FindAllString(hd, -1)
			assert.LessOrEqual(t, len(items), 5)
			plain := strings.ReplaceAll(hd, "&#39;", "'")
			assert.Contains(t, plain, c.pool)
			assert.Contains(t, plain, c.cpus)
			assert.Less(t, strings.Index(page, `<ul class="head">`), strings.Index(page, `<section id="answer">`))
			assert.Greater(t, strings.Index(page, `<section id="method">`), strings.Index(page, `<section id="answer">`))
		})
	}

	t.Run("no upstream", func(t *testing.T) {
		env := results.Env{Plan: results.Plan{Topologies: []string{"standalone", analysis.Ceiling}}}
		assert.Equal(t, "no upstream pool (no topology passes nginx to a server)", upstreamPool(env))
	})
	t.Run("swept pools", func(t *testing.T) {
		env := results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, Connections: []int{5000},
			UpstreamKeepalive: []results.Keepalive{results.DefaultKeepalive, results.KeepaliveAuto}}}
		assert.Equal(t, "upstream keepalive 300 (2013's) and sized to the clients (auto, 5000) for 5000 clients, a group each", upstreamPool(env))
	})
}

// TestCrossCheckNotAGroup: the paired design's wrk cross-check is no
// group of the sweep (no table, no summary line, no chart of its own) but
// its own section beside the ratio it checks, in both reports; its
// figures are the analysis's, not computed again.
func TestCrossCheckNotAGroup(t *testing.T) {
	env, runs := analysistest.PairedSweep()
	s := summarize(env, runs)
	require.Len(t, s.Groups(), 1)
	assert.Equal(t, results.LoadBuiltin, s.Groups()[0].Load)
	checks := s.CrossChecks()
	require.Len(t, checks, 2, "standalone and nginx-http under wrk")
	http := checks[1]
	require.Equal(t, "nginx-http", http.Topology)
	require.NotNil(t, http.RatioToStandalone)

	v, ok := s.crossCheck()
	require.True(t, ok)
	assert.Equal(t, "Cross-check (wrk)", v.Title)
	require.Len(t, v.Rows, 1)
	assert.Equal(t, []string{"nginx-http", "1", "41,000", "18,040", "0.440", "0.450 ± 1%"}, v.Rows[0])

	dir := t.TempDir()
	require.NoError(t, Write(dir, env, runs, Renderers()...))
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	require.NoError(t, err)
	text := string(md)
	// The cross-check's group would be labelled "GOMAXPROCS=1" (wrk is
	// the usual load), beside the pairs' "GOMAXPROCS=1 load=builtin".
	assert.NotContains(t, text, "### GOMAXPROCS=1\n", "no table of its own")
	assert.NotContains(t, text, "**GOMAXPROCS=1:**", "no summary line of its own")
	assert.NotContains(t, text, "± ∞")
	table := strings.Index(text, "### GOMAXPROCS=1 load=builtin")
	check := strings.Index(text, "### Cross-check (wrk)")
	require.Positive(t, check)
	assert.Greater(t, check, table, "beside the ratio it checks")
	assert.Less(t, check, strings.Index(text, "## How it was measured"))
	assert.Contains(t, text, "| nginx-http | 1 | 41,000 | 18,040 | 0.440 | 0.450 ± 1% |")

	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	html := string(page)
	// (strings.Contains: the page is too long to print on failure.)
	assert.False(t, strings.Contains(html, "<caption>GOMAXPROCS=1</caption>"), "no table of its own")
	assert.False(t, strings.Contains(html, "<li>GOMAXPROCS=1: "), "no answer of its own")
	assert.True(t, strings.Contains(html, "<caption>Cross-check (wrk)</caption>"))
	assert.False(t, strings.Contains(html, `"label":"GOMAXPROCS=1"`), "no chart series of its own")
	assert.Less(t, strings.Index(html, "<caption>GOMAXPROCS=1 load=builtin"), strings.Index(html, "<caption>Cross-check (wrk)"))

	t.Run("connections", func(t *testing.T) {
		s := summarize(env, runs)
		s.Net = []analysis.NetCell{{Key: http.Key, Runs: 1}}
		require.Len(t, s.connView().ConnRows, 1)
		assert.Equal(t, "cross-check (wrk)", s.connView().ConnRows[0][0], "labelled, not a group")
	})
	t.Run("not run", func(t *testing.T) {
		var paired []results.Run
		for _, r := range runs {
			if r.Load != results.LoadWrk {
				paired = append(paired, r)
			}
		}
		v, ok := summarize(env, paired).crossCheck()
		require.True(t, ok)
		assert.Empty(t, v.Rows)
		assert.Contains(t, v.Intro, "did not run")
	})
	t.Run("no cross-check", func(t *testing.T) {
		_, ok := summarize(analysistest.Fixture(t)).crossCheck()
		assert.False(t, ok)
	})
}

// TestLoadsSection: a rounds sweep under two load generators sets them
// side by side after the tables, in both reports, from the analysis's
// ratios; a sweep under one has no such section.
func TestLoadsSection(t *testing.T) {
	env, runs := goldenCases(t)["loads"]()
	dir := t.TempDir()
	require.NoError(t, Write(dir, env, runs, Renderers()...))
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	require.NoError(t, err)
	text := string(md)
	at := strings.Index(text, "### Load generators side by side (builtin over wrk)")
	require.Positive(t, at)
	assert.Greater(t, at, strings.Index(text, "### GOMAXPROCS=1 load=builtin"), "after the tables")
	assert.Less(t, at, strings.Index(text, "## How it was measured"))
	assert.Contains(t, text, "| GOMAXPROCS=1 | standalone | 6 | 1.020 [1.016, 1.024] |")

	page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	require.NoError(t, err)
	assert.True(t, strings.Contains(string(page), "<caption>Load generators side by side (builtin over wrk)</caption>"))

	env, runs = analysistest.IsolatedFixture(t)
	assert.Nil(t, summarize(env, runs).loadsView())
}

package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// TestHTML2009Charts: req/s and p99 against the connections, one line
// per topology, the 2009 servers' table beside with this sweep's rows
// marked.
func TestHTML2009Charts(t *testing.T) {
	env, runs := scenarioCases()["scenarios2009"]()
	page, specs, figs := chartsByTitle(t, sweepOf("x", "", env, runs))

	rate, ok := specs["req/s against concurrency"]
	require.True(t, ok)
	assert.Equal(t, []float64{30, 100, 1000, 5000}, rate.X)
	assert.True(t, rate.XLog)
	assert.False(t, rate.YLog)
	var ticks []string
	for _, tk := range rate.XTicks {
		ticks = append(ticks, tk.L)
	}
	assert.Equal(t, []string{"30", "100", "1000", "5000"}, ticks)
	require.Len(t, rate.Series, 2)
	assert.True(t, strings.HasPrefix(rate.Series[0].Label, "standalone"), rate.Series[0].Label)
	assert.True(t, strings.HasPrefix(rate.Series[1].Label, "nginx-http"), rate.Series[1].Label)
	// standalone 40,000 less 3,000 per step of connections; nginx-http half.
	assert.Equal(t, []*float64{num(40000), num(37000), num(34000), num(31000)}, rate.Series[0].Y)
	assert.Equal(t, []*float64{num(20000), num(18500), num(17000), num(15500)}, rate.Series[1].Y)
	assert.Equal(t, []string{"30", "40,000", "20,000"}, figs[rate.ID].Table.Rows[0])

	p99, ok := specs["p99 latency against concurrency"]
	require.True(t, ok)
	assert.True(t, p99.YLog)
	assert.Equal(t, "ms", p99.YFmt)
	// p99 is 20 µs per connection, twice that through nginx.
	assert.Equal(t, []*float64{num(0.6), num(2), num(20), num(100)}, p99.Series[0].Y)
	assert.Equal(t, []*float64{num(1.2), num(4), num(40), num(200)}, p99.Series[1].Y)
	assert.Equal(t, []string{"5000", "100 ms", "200 ms"}, figs[p99.ID].Table.Rows[3])

	var sec htmlSection
	for _, s := range page.Sections {
		if s.ID == "servers2009" {
			sec = s
		}
	}
	require.Len(t, sec.Tables, 1)
	tb := sec.Tables[0]
	assert.Equal(t, "server", tb.Head[0])
	assert.Len(t, tb.Num, len(tb.Head))
	for i, r := range tb.Rows {
		assert.NotContains(t, r[0], "**", "no markdown on the page")
		assert.Equal(t, !strings.HasPrefix(r[0], "2009"), tb.Marked[i], r[0])
	}
	assert.NotEmpty(t, sec.Source)

	t.Run("a connection count not measured reads –", func(t *testing.T) {
		var some []results.Run
		for _, r := range runs {
			if !(r.Topology == "nginx-http" && r.Connections == 1000) {
				some = append(some, r)
			}
		}
		_, specs, figs := chartsByTitle(t, sweepOf("x", "", env, some))
		rate := specs["req/s against concurrency"]
		assert.Nil(t, rate.Series[1].Y[2])
		assert.Equal(t, "–", figs[rate.ID].Table.Rows[2][2])
	})
	t.Run("one connection count: no section", func(t *testing.T) {
		env, runs := closedRuns(1, []string{"standalone", "nginx-http"}, map[string]float64{"standalone": 1000, "nginx-http": 500})
		page, specs, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
		assert.NotContains(t, specs, "req/s against concurrency")
		for _, s := range page.Sections {
			assert.NotEqual(t, "servers2009", s.ID)
		}
	})
	t.Run("compared: the other sweep dashed", func(t *testing.T) {
		_, specs, figs := chartsByTitle(t, sweepOf("a", "", env, runs), sweepOf("b", "", env, runs))
		rate := specs["req/s against concurrency"]
		require.Len(t, rate.Series, 4)
		assert.Equal(t, []string{"line", "line", "dash", "dash"}, []string{rate.Series[0].Style, rate.Series[1].Style, rate.Series[2].Style, rate.Series[3].Style})
		assert.True(t, strings.HasPrefix(rate.Series[2].Label, "B: standalone"), rate.Series[2].Label)
		assert.Contains(t, figs[rate.ID].Caption, "the other sweeps dashed")
	})
}

// TestHTML2016Table: the JVM study's table with this sweep's rows first
// and marked, and no section without the 2016 scenarios.
func TestHTML2016Table(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	page, _, _ := chartsByTitle(t, sweepOf("x", "", env, runs))
	var sec *htmlSection
	for i := range page.Sections {
		if page.Sections[i].ID == "jvm2016" {
			sec = &page.Sections[i]
		}
	}
	require.NotNil(t, sec)
	require.Len(t, sec.Tables, 1)
	tb := sec.Tables[0]
	assert.Len(t, tb.Head, 13)
	require.GreaterOrEqual(t, len(tb.Rows), 3)
	assert.Equal(t, "topobench standalone (GOMAXPROCS=2)", tb.Rows[0][0])
	assert.Equal(t, "800 of 800", tb.Rows[0][2])
	assert.Equal(t, "512 of 800", tb.Rows[1][2])
	assert.Equal(t, []bool{true, true}, tb.Marked[:2])
	for i, r := range tb.Rows[2:] {
		assert.False(t, tb.Marked[i+2], r[0])
		assert.True(t, strings.HasPrefix(r[0], "2016"), r[0])
	}
	assert.NotEmpty(t, sec.Source)

	env, runs = closedRuns(1, []string{"standalone"}, map[string]float64{"standalone": 1000})
	page, _, _ = chartsByTitle(t, sweepOf("x", "", env, runs))
	for _, s := range page.Sections {
		assert.NotEqual(t, "jvm2016", s.ID)
	}
}

// TestHTMLSpectrumSources: histograms missing are skipped, a damaged one
// fails the page with the cell named, and a sweep without a directory
// has no spectrum.
func TestHTMLSpectrumSources(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	spectra := func(t *testing.T, dir string) (int, error) {
		_, data, err := buildPage([]Sweep{sweepOf("x", dir, env, runs)})
		n := 0
		for _, c := range data.Charts {
			if strings.HasPrefix(c.Title, "Latency by percentile") {
				n++
			}
		}
		return n, err
	}
	n, err := spectra(t, "")
	require.NoError(t, err)
	assert.Zero(t, n, "no directory, no histograms")

	n, err = spectra(t, t.TempDir())
	require.NoError(t, err)
	assert.Zero(t, n, "a record copied without its histograms")

	dir := engineHistograms(t, runs)
	n, err = spectra(t, dir)
	require.NoError(t, err)
	assert.Equal(t, 4, n)

	hdrs, err := filepath.Glob(filepath.Join(dir, results.RunsDir, "*.hdr"))
	require.NoError(t, err)
	require.NotEmpty(t, hdrs)
	require.NoError(t, os.WriteFile(hdrs[0], []byte("not a histogram"), 0o644))
	_, err = spectra(t, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "html report: histograms of ")
}

// TestHTMLSpectrumTable: the percentile table leaves out what too few
// samples cannot say.
func TestHTMLSpectrumTable(t *testing.T) {
	env, runs := scenarioCases()["scenarios2016"]()
	dir := engineHistograms(t, runs)
	_, specs, figs := chartsByTitle(t, sweepOf("x", dir, env, runs))
	var spec chartSpec
	for title, s := range specs {
		if strings.HasPrefix(title, "Latency by percentile") && strings.Contains(title, analysis.Slow2016) {
			spec = s
		}
	}
	require.NotEmpty(t, spec.ID)
	tb := figs[spec.ID].Table
	assert.Equal(t, []string{"topology", "requests", "p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "max"}, tb.Head)
	require.Len(t, tb.Rows, 2)
	std := tb.Rows[0]
	assert.Equal(t, []string{"standalone", "2,000"}, std[:2])
	assert.Equal(t, []string{"–", "–"}, std[6:8], "2,000 samples say nothing of p99.99")
	assert.NotEqual(t, "–", std[5], "p99.9 is within reach")
	// The 2,000 samples rise from 1000.5 ms to 2.5 times it.
	assert.Equal(t, "2.50 s", std[8])
	assert.Len(t, spec.XTicks, len(ninesLabels))
	for _, s := range spec.Series {
		assert.Equal(t, "line", s.Style)
		assert.Len(t, s.Y, len(spec.X))
	}
}

package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
)

func formats(rs []Renderer) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Format())
	}
	return out
}

func TestSelect(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  string
	}{
		{"all", []string{"md", "csv", "json", "bench", "charts", "html"}, ""},
		{DefaultFormats, []string{"md", "csv", "json", "bench", "charts", "html"}, ""},
		{"md", []string{"md"}, ""},
		{"charts,md", []string{"md", "charts"}, "Renderers' order, not the flag's"},
		{" csv , json ", []string{"csv", "json"}, ""},
		{"bench,bench", []string{"bench"}, ""},
		{"pdf", nil, `unknown format "pdf" (known: md, csv, json, bench, charts, html, or all)`},
		{"md,PNG", nil, `unknown format "PNG" (known: md, csv, json, bench, charts, html, or all)`},
		{"", nil, `unknown format "" (known: md, csv, json, bench, charts, html, or all)`},
		{"md,", nil, `unknown format "" (known: md, csv, json, bench, charts, html, or all)`},
		{"md,,csv", nil, `unknown format "" (known: md, csv, json, bench, charts, html, or all)`},
		{"all,md", []string{"md", "csv", "json", "bench", "charts", "html"}, "the error offers all: it is one of the list's names"},
		{" all ", []string{"md", "csv", "json", "bench", "charts", "html"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			rs, err := Select(tt.in)
			if tt.want == nil {
				assert.EqualError(t, err, tt.err)
				assert.Nil(t, rs)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, formats(rs))
		})
	}
	assert.Equal(t, []string{"md", "csv", "json", "bench", "charts", "html"}, formats(Renderers()))
}

// listFiles lists every file under dir, relative to it.
func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	}))
	slices.Sort(out)
	return out
}

// added is what after has that before did not.
func added(before, after []string) []string {
	var out []string
	for _, f := range after {
		if !slices.Contains(before, f) {
			out = append(out, f)
		}
	}
	return out
}

// writeSweep writes a fake sweep as a results directory, histograms
// beside the engine's runs, so Rewrite reads it as it would a real one.
func writeSweep(t *testing.T, env results.Env, runs []results.Run) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, env))
	for i, r := range runs {
		require.NoError(t, results.WriteRun(dir, r, nil))
		if r.Figures != nil && r.Figures.Histogram {
			h := hdr.New()
			for v := int64(1); v <= 1000; v++ {
				require.NoError(t, h.RecordValue(v*int64(i+1)))
			}
			require.NoError(t, hdr.WriteFiles(filepath.Join(dir, results.RunsDir), r.Name(), h))
		}
	}
	return dir
}

// TestRenderersAlone renders each format alone into a results directory
// and checks it writes exactly its own files: -format md must not leave
// charts behind, nor charts a summary.
func TestRenderersAlone(t *testing.T) {
	charts := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, n+".png", n+".svg")
		}
		slices.Sort(out)
		return out
	}
	sweeps := map[string]func(t *testing.T) string{
		"fixture": func(t *testing.T) string { return analysistest.Copy(t) },
		"isolated": func(t *testing.T) string {
			env, runs := analysistest.IsolatedFixture(t)
			return writeSweep(t, env, runs)
		},
		"2016": func(t *testing.T) string {
			env, runs := scenarioCases()["scenarios2016"]()
			return writeSweep(t, env, runs)
		},
		"2009": func(t *testing.T) string {
			env, runs := scenarioCases()["scenarios2009"]()
			return writeSweep(t, env, runs)
		},
	}
	tests := []struct {
		sweep, format string
		want          []string
	}{
		{"fixture", "md", []string{MarkdownFile}},
		{"fixture", "csv", []string{CSVFile}},
		{"fixture", "json", []string{JSONFile}},
		{"fixture", "bench", []string{BenchFile}},
		{"fixture", "charts", charts(P99Chart, ReqPSChart)},
		{"fixture", "md,csv", []string{CSVFile, MarkdownFile}},
		{"fixture", "html", []string{HTMLFile}},
		{"isolated", "charts", charts(CPUChart, P99Chart, ReqPSChart)},
		{"2016", "charts", charts("latency-g2-c100-concurrency-level", "latency-g2-c100-realistic-high-concurrency",
			"latency-g2-c100-realistic-overhead", "latency-g2-c100-slow-requests", P99Chart, ReqPSChart)},
		{"2016", "md", []string{MarkdownFile}},
		{"2009", "charts", charts(ConcChart, P99Chart, ReqPSChart)},
	}
	for _, tt := range tests {
		t.Run(tt.sweep+"/"+tt.format, func(t *testing.T) {
			dir := sweeps[tt.sweep](t)
			before := listFiles(t, dir)
			rs, err := Select(tt.format)
			require.NoError(t, err)
			require.NoError(t, Rewrite(dir, rs...))
			assert.Equal(t, tt.want, added(before, listFiles(t, dir)))
		})
	}
}

// TestRewriteAgain: rendering a directory again gives the same text files
// byte for byte (no timestamps, no map order) and leaves no temporary
// files behind.
func TestRewriteAgain(t *testing.T) {
	dir := analysistest.Copy(t)
	require.NoError(t, Rewrite(dir))
	first := map[string][]byte{}
	for _, f := range []string{MarkdownFile, CSVFile, JSONFile, BenchFile, HTMLFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		first[f] = b
	}
	files := listFiles(t, dir)
	require.NoError(t, Rewrite(dir))
	assert.Equal(t, files, listFiles(t, dir))
	for f, want := range first {
		got, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got), f)
	}
	for _, f := range files {
		assert.NotContains(t, f, ".tmp")
	}
}

// TestWriteErrors: a renderer that cannot write names the file.
func TestWriteErrors(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	missing := filepath.Join(t.TempDir(), "gone")
	for _, format := range []string{"md", "csv", "json", "bench", "charts", "html"} {
		t.Run(format, func(t *testing.T) {
			rs, err := Select(format)
			require.NoError(t, err)
			err = Write(missing, env, runs, rs...)
			require.Error(t, err)
			assert.ErrorContains(t, err, "writing "+missing+string(filepath.Separator))
		})
	}
	assert.NoDirExists(t, missing, "nothing created on the way")
}

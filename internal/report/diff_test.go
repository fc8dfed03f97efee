package report

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// benchSamples reads one of internal/stats' benchmark files (the samples
// its benchstat.golden was printed from) as the runs of a sweep:
// BenchmarkCell/g=G/topo=T becomes topology T at GOMAXPROCS G, the n-th
// line of a name repetition n.
func benchSamples(t *testing.T, name string) *analysis.Samples {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "stats", "testdata", name))
	require.NoError(t, err)
	defer f.Close()
	var runs []results.Run
	reps := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 || !strings.HasPrefix(fs[0], "BenchmarkCell/") {
			continue
		}
		v, err := strconv.ParseFloat(fs[2], 64)
		require.NoError(t, err)
		parts := strings.Split(fs[0], "/")
		require.Len(t, parts, 3, fs[0])
		g, err := strconv.Atoi(strings.TrimPrefix(parts[1], "g="))
		require.NoError(t, err)
		reps[fs[0]]++
		runs = append(runs, results.Run{Cell: results.Cell{Topology: strings.TrimPrefix(parts[2], "topo="), GOMAXPROCS: g, Rep: reps[fs[0]]},
			Figures: &results.Figures{ReqPerSec: v, Requests: int64(v)}})
	}
	require.NoError(t, sc.Err())
	s, err := analysis.NewSamples(name, results.Env{}, runs)
	require.NoError(t, err)
	return s
}

// tableBody cuts the name column off a benchstat-style table (the text up
// to the first "│" of its header) and the lines before the table.
func tableBody(t *testing.T, text string) []string {
	t.Helper()
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		if strings.Contains(l, "│") {
			start = i
			break
		}
	}
	require.GreaterOrEqual(t, start, 0, "no table in:\n%s", text)
	nameW := len([]rune(lines[start][:strings.Index(lines[start], "│")]))
	var out []string
	for _, l := range lines[start:] {
		if l == "" || strings.HasPrefix(l, "¹") {
			break
		}
		r := []rune(l)
		out = append(out, string(r[min(nameW, len(r)):]))
	}
	return out
}

// TestDiffMatchesBenchstat compares the same samples as benchstat did
// (internal/stats/testdata/benchstat.golden, checked against the real
// benchstat there): every column right of the names is benchstat's,
// character for character — centers, intervals, deltas, p-values, sample
// counts, footnote marks, the geomean and the footnotes.
func TestDiffMatchesBenchstat(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("..", "stats", "testdata", "benchstat.golden"))
	require.NoError(t, err)
	c := analysis.Compare(benchSamples(t, "old.txt"), benchSamples(t, "new.txt"))
	var b bytes.Buffer
	require.NoError(t, WriteDiff(&b, c))

	want := tableBody(t, string(golden))
	got := tableBody(t, b.String())
	assert.Equal(t, want, got)

	// benchstat's footnotes end its output; ours follow the tables.
	var wantNotes, gotNotes []string
	for _, l := range strings.Split(string(golden), "\n") {
		if strings.HasPrefix(l, "¹") || strings.HasPrefix(l, "²") {
			wantNotes = append(wantNotes, l)
		}
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "¹") || strings.HasPrefix(l, "²") {
			gotNotes = append(gotNotes, l)
		}
	}
	assert.Equal(t, wantNotes, gotNotes)
	require.Len(t, wantNotes, 2)
}

// diffCases are pairs of fake sweeps whose comparison is kept in
// testdata/golden/diff/CASE.txt.
func diffCases(t *testing.T) map[string]func() (old, new *analysis.Samples) {
	samples := func(name string, env results.Env, runs []results.Run) *analysis.Samples {
		s, err := analysis.NewSamples(name, env, runs)
		require.NoError(t, err)
		return s
	}
	scale := func(runs []results.Run, f func(r results.Run) float64) []results.Run {
		var out []results.Run
		for _, r := range runs {
			if r.Figures != nil {
				fig := *r.Figures
				k := f(r)
				fig.ReqPerSec *= k
				fig.Requests = int64(float64(fig.Requests) * k)
				r.Figures = &fig
			}
			out = append(out, r)
		}
		return out
	}
	cpu := func(runs []results.Run, k float64, g int) []results.Run {
		var out []results.Run
		for _, r := range runs {
			if r.CPU != nil && (g == 0 || r.GOMAXPROCS == g) {
				c := *r.CPU
				c.Load.User *= k
				c.Load.System *= k
				r.CPU = &c
			}
			out = append(out, r)
		}
		return out
	}
	return map[string]func() (*analysis.Samples, *analysis.Samples){
		// The fixture against itself with nginx-http 10% faster and a
		// GOMAXPROCS=8 half only NEW has.
		"fixture": func() (*analysis.Samples, *analysis.Samples) {
			env, runs := analysistest.Fixture(t)
			var g1 []results.Run
			for _, r := range runs {
				if r.GOMAXPROCS == 1 {
					g1 = append(g1, r)
				}
			}
			faster := scale(runs, func(r results.Run) float64 {
				if r.Topology == "nginx-http" {
					return 1.10
				}
				return 1
			})
			newEnv := env
			newEnv.Interrupted = true
			return samples("OLD", env, g1), samples("NEW", newEnv, faster)
		},
		// Six isolated rounds with CPU records; NEW serves 10% less and
		// its load generator spends 12% more CPU a request everywhere:
		// the machine changed.
		"machine": func() (*analysis.Samples, *analysis.Samples) {
			env, runs := analysistest.IsolatedFixture(t)
			slower := scale(runs, func(results.Run) float64 { return 0.9 })
			return samples("OLD", env, runs), samples("NEW", env, cpu(slower, 1.12*0.9, 0))
		},
		// Two GOMAXPROCS values; only the second group's load CPU moved,
		// by too little to move the whole sweep's past 5%.
		"group": func() (*analysis.Samples, *analysis.Samples) {
			env, runs := analysistest.IsolatedFixture(t)
			env.Plan.GOMAXPROCS = []int{1, 2}
			var both []results.Run
			for _, r := range runs {
				both = append(both, r)
				r.GOMAXPROCS = 2
				both = append(both, r)
			}
			return samples("OLD", env, both), samples("NEW", env, cpu(both, 0.92, 2))
		},
		// No standalone on either side: no ratio table.
		"nostandalone": func() (*analysis.Samples, *analysis.Samples) {
			env, runs := analysistest.Fixture(t)
			var some []results.Run
			for _, r := range runs {
				if r.Topology != "standalone" {
					some = append(some, r)
				}
			}
			start := time.Date(2026, 11, 23, 1, 2, 0, 0, time.FixedZone("CET", 3600))
			newEnv := env
			newEnv.Start = start
			return samples("results/a", env, some), samples("results/b", newEnv, some)
		},
	}
}

// TestDiffGolden renders each pair's comparison and compares it with
// testdata/golden/diff/CASE.txt (-update rewrites them).
func TestDiffGolden(t *testing.T) {
	for name, mk := range diffCases(t) {
		t.Run(name, func(t *testing.T) {
			old, new := mk()
			var b bytes.Buffer
			require.NoError(t, WriteDiff(&b, analysis.Compare(old, new)))
			golden := filepath.Join("testdata", "golden", "diff", name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test ./internal/report -update")
			assert.Equal(t, string(want), b.String())
		})
	}
}

// TestDiffContent checks by hand what the golden files hold, so they
// cannot drift into accepting a wrong comparison.
func TestDiffContent(t *testing.T) {
	cases := diffCases(t)
	render := func(name string) string {
		old, new := cases[name]()
		var b bytes.Buffer
		require.NoError(t, WriteDiff(&b, analysis.Compare(old, new)))
		return b.String()
	}

	t.Run("fixture", func(t *testing.T) {
		out := render("fixture")
		assert.Contains(t, out, "old: OLD, started 2026-11-21 22:30 UTC, 3 reps of 30s\n")
		assert.Contains(t, out, "new: NEW, started 2026-11-21 22:30 UTC, 3 reps of 30s, interrupted\n")
		assert.Regexp(t, `(?m)^nginx-http/gomaxprocs=1 +15\.12k ± ∞ ¹ +16\.63k ± ∞ ¹ +~ \(p=0\.700 n=3\) ²$`, out,
			"+10% on three runs each: not significant")
		assert.Regexp(t, `(?m)^standalone/gomaxprocs=8 .* only in NEW$`, out)
		assert.Regexp(t, `(?m)^nginx-http/gomaxprocs=1 +0\.404 ± ∞ ¹ +0\.445 ± ∞ ¹`, out, "the ratio table")
		assert.Contains(t, out, "left out: 0 failed runs of OLD, 1 of NEW\n")
		assert.NotContains(t, out, "load CPU", "neither measured CPU")
		assert.Equal(t, 2, strings.Count(out, "vs base"), "two tables: req/s and vs standalone")
	})
	t.Run("machine", func(t *testing.T) {
		out := render("machine")
		assert.Contains(t, out, "load CPU µs/req")
		assert.Contains(t, out, "the load generator spent +12% CPU per request in NEW over the same cells")
		assert.Regexp(t, `(?m)^geomean +\d+\.\d +\d+\.\d +\+12\.00%$`, out)
		assert.Regexp(t, `(?m)^standalone/gomaxprocs=1 .* -10\.00% \(p=0\.002 n=6\)$`, out, "every rate 10% lower, significant")
		assert.NotContains(t, out, "left out")
	})
	t.Run("group", func(t *testing.T) {
		out := render("group")
		assert.Contains(t, out, "gomaxprocs=2: the load generator spent -8% CPU per request in NEW")
		assert.NotContains(t, out, "gomaxprocs=1: the load generator", "the other group did not move")
	})
	t.Run("no standalone", func(t *testing.T) {
		out := render("nostandalone")
		assert.Contains(t, out, "old: results/a, started 2026-11-21 22:30 UTC")
		assert.Contains(t, out, "new: results/b, started 2026-11-23 00:02 UTC", "in UTC")
		assert.Contains(t, out, "\nno ratios to standalone: neither sweep measured standalone beside another topology at the same GOMAXPROCS\n")
		assert.Regexp(t, `(?m)^geomean .* \+0\.00%$`, out)
	})
}

func TestSuperscript(t *testing.T) {
	for n, want := range map[int]string{1: "¹", 2: "²", 9: "⁹", 10: "¹⁰", 23: "²³"} {
		assert.Equal(t, want, superscript(n))
	}
	f := &footnotes{}
	assert.Equal(t, "¹", f.mark([]string{"a"}))
	assert.Equal(t, "² ¹", f.mark([]string{"b", "a"}), "a note is numbered once")
	assert.Equal(t, "", f.mark(nil))
	var b bytes.Buffer
	f.write(&b)
	assert.Equal(t, "¹ a\n² b\n", b.String())
}

func TestPadding(t *testing.T) {
	assert.Equal(t, "  ab", pad("ab", 4, true))
	assert.Equal(t, "ab  ", pad("ab", 4, false))
	assert.Equal(t, "abc", pad("abc", 2, false), "never cut")
	assert.Equal(t, "± ∞ ", pad("± ∞", 4, false), "runes, not bytes")
	assert.Equal(t, " ab  ", centered("ab", 5))
	assert.Equal(t, "µs", centered("µs", 1))
}

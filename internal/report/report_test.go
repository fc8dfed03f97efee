package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCases are the fake sweeps the golden files are rendered from: the
// fixture, and variants for an interrupted sweep, one where every run of a
// topology failed and standalone is missing, and one with no runs at all.
func goldenCases(t *testing.T) map[string]func() (results.Env, []results.Run) {
	env, runs := analysistest.Fixture(t)
	return map[string]func() (results.Env, []results.Run){
		"sweep": func() (results.Env, []results.Run) { return env, runs },
		"interrupted": func() (results.Env, []results.Run) {
			e := env
			e.End, e.Interrupted = time.Time{}, true
			var some []results.Run
			for _, r := range runs {
				if r.GOMAXPROCS == 1 {
					some = append(some, r)
				}
			}
			return e, some
		},
		"failed": func() (results.Env, []results.Run) {
			e := env
			e.Plan.PinLoad, e.Plan.PinServer = "0", "1"
			var some []results.Run
			for _, r := range runs {
				if r.Topology == "nginx-http" {
					r.Figures, r.Error = nil, "boom\nsecond line"
				}
				if r.Topology != "standalone" {
					some = append(some, r)
				}
			}
			return e, some
		},
		"empty":    func() (results.Env, []results.Run) { return results.Env{}, nil },
		"isolated": func() (results.Env, []results.Run) { return analysistest.IsolatedFixture(t) },
		"cost":     func() (results.Env, []results.Run) { return analysistest.CostSweep(true) },
		"paired":   analysistest.PairedSweep,
		// Every path a user's own service and the FastCGI servers take,
		// paired, at two GOMAXPROCS: the choice settled at one, not at
		// the other; in rounds beside it; and a sweep with no path
		// through nginx to choose.
		"choice":  analysistest.ChoiceSweep,
		"handler": handlerSweep,
		// The choice's sweep with its latency phase at GOMAXPROCS=1, one
		// run flagged.
		"latency": analysistest.LatencySweep,
		// The user's own service behind nginx, on TCP and a unix socket:
		// its paths named as theirs, not net/http.
		"own":         ownSweep,
		"rounds-unix": func() (results.Env, []results.Run) { return analysistest.IsolatedUnixFixture(t) },
		"no-nginx": func() (results.Env, []results.Run) {
			var some []results.Run
			for _, r := range runs {
				if r.Topology == "standalone" || r.Topology == "nginx-return" {
					some = append(some, r)
				}
			}
			return env, some
		},
		// The isolated sweep under wrk and the engine, round by round:
		// the engine 2% faster on standalone with 20% more user time,
		// the same through nginx.
		"loads": func() (results.Env, []results.Run) {
			e, rs := analysistest.IsolatedFixture(t)
			e.Plan.Loads = []results.Generator{results.LoadWrk, results.LoadBuiltin}
			for _, r := range slices.Clone(rs) {
				r.Load = results.LoadBuiltin
				if !r.Failed() {
					f := *r.Figures
					k := 1 + 0.004*float64(r.Rep%3-1)
					if r.Topology == "standalone" {
						k *= 1.02
					}
					f.ReqPerSec *= k
					f.Requests = int64(float64(f.Requests) * k)
					r.Figures = &f
					if r.CPU != nil {
						c := *r.CPU
						c.Load.User *= 1.2 * k
						c.Load.System *= k
						r.CPU = &c
					}
				}
				rs = append(rs, r)
			}
			return e, rs
		},
		// The TLS paths over kept connections (TLS 1.2, RSA, resumed), a
		// handshake a request with one load-bound cell, the same under
		// two generators side by side, and the TLS paths beside plain
		// ones, where their table is a section.
		"tls-kept": func() (results.Env, []results.Run) {
			return analysistest.TLSSweep(analysistest.TLSOptions{TLS: &tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}})
		},
		"tls-handshakes": func() (results.Env, []results.Run) {
			return analysistest.TLSSweep(analysistest.TLSOptions{Close: true, LoadBound: "nginx-tls-http"})
		},
		"tls-loads": func() (results.Env, []results.Run) {
			return analysistest.TLSSweep(analysistest.TLSOptions{Close: true, Loads: []results.Generator{results.LoadBuiltin, "s_time"}, Faster: 1.03})
		},
		"tls-mixed": func() (results.Env, []results.Run) {
			return analysistest.TLSSweep(analysistest.TLSOptions{Plain: true})
		},
		// The isolated sweep with speed probes whose speed the rates
		// followed (as its fifth power, give or take): the fit, the
		// warning, and no ratio moved.
		"speed": func() (results.Env, []results.Run) {
			e, rs := analysistest.IsolatedFixture(t)
			e.Plan.SpeedProbe = true
			sum, n := map[string]float64{}, map[string]float64{}
			for _, r := range rs {
				if !r.Failed() {
					sum[r.Topology] += r.Figures.ReqPerSec
					n[r.Topology]++
				}
			}
			for i, r := range rs {
				if r.Failed() {
					continue
				}
				rel := r.Figures.ReqPerSec / (sum[r.Topology] / n[r.Topology])
				sp := 7.5 * math.Pow(rel, 0.2) * (1 + 0.0005*float64(r.Rep%3-1))
				rs[i].Noise = &results.Noise{Busy: 20, Window: 10 * time.Second, Speed: &results.Speed{Servers: sp, Load: 7.4, Samples: 200}}
			}
			return e, rs
		},
	}
}

// TestGolden renders every text file of each golden case and compares it
// with testdata/golden/CASE/FILE; go test -update rewrites them.
func TestGolden(t *testing.T) {
	for name, load := range goldenCases(t) {
		env, runs := load()
		s := summarize(env, runs)
		renders := []struct {
			file   string
			render func(io.Writer) error
		}{
			{MarkdownFile, s.WriteMarkdown},
			{CSVFile, s.WriteCSV},
			{JSONFile, s.WriteJSON},
			{BenchFile, func(w io.Writer) error { return WriteBench(w, env, runs) }},
		}
		for _, r := range renders {
			t.Run(name+"/"+r.file, func(t *testing.T) {
				var b bytes.Buffer
				require.NoError(t, r.render(&b))
				golden := filepath.Join("testdata", "golden", name, r.file)
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
}

func TestSummarizeEdges(t *testing.T) {
	env, runs := analysistest.Fixture(t)

	t.Run("interrupted and missing", func(t *testing.T) {
		e := env
		e.End, e.Interrupted = time.Time{}, true
		var some []results.Run
		for _, r := range runs {
			if r.GOMAXPROCS == 1 {
				some = append(some, r)
			}
		}
		s := summarize(e, some)
		var kinds []string
		for _, w := range s.Warnings {
			kinds = append(kinds, w.Kind)
		}
		assert.Contains(t, kinds, "interrupted")
		assert.Equal(t, 5, countOf(kinds, "missing"), "every GOMAXPROCS=8 cell")
		assert.NotContains(t, kinds, "gomaxprocs", "no GOMAXPROCS=8 cell was measured")
		var b bytes.Buffer
		require.NoError(t, s.WriteMarkdown(&b))
		assert.Contains(t, b.String(), "(did not finish)")
		assert.Contains(t, b.String(), "| 8 | standalone | 128,403 | 1.00 | none | not measured | – |")
	})

	t.Run("no standalone, all failed", func(t *testing.T) {
		var some []results.Run
		for _, r := range runs {
			if r.Topology == "nginx-http" {
				r.Figures, r.Error = nil, "boom\nsecond line"
			}
			if r.Topology != "standalone" {
				some = append(some, r)
			}
		}
		s := summarize(env, some)
		c, _ := s.Cell(analysis.Key{Group: wrkGroup(1), Topology: "nginx-fcgi-tcp"})
		assert.Nil(t, c.RatioToStandalone)
		h, _ := s.Cell(analysis.Key{Group: wrkGroup(1), Topology: "nginx-http"})
		assert.Equal(t, 0, h.Reps)
		assert.Equal(t, 3, h.Failed)
		for _, render := range []func(io.Writer) error{s.WriteMarkdown, s.WriteCSV, s.WriteJSON} {
			require.NoError(t, render(io.Discard))
		}
		var b bytes.Buffer
		require.NoError(t, WriteBench(&b, env, some))
		assert.Contains(t, b.String(), "# BenchmarkTopobench/topology=nginx-http/target=go/gomaxprocs=1/connections=5000/load=wrk rep 1 failed: boom\n")
	})

	t.Run("empty", func(t *testing.T) {
		s := summarize(results.Env{}, nil)
		var b bytes.Buffer
		require.NoError(t, s.WriteMarkdown(&b))
		assert.Contains(t, b.String(), "No runs recorded.")
		require.NoError(t, s.WriteCharts(t.TempDir()))
	})

	t.Run("every request timed out", func(t *testing.T) {
		r := runs[0]
		res := *r.Figures
		res = results.Figures{Requests: res.Requests, ReqPerSec: res.ReqPerSec, Errors: results.Errors{Timeout: 4}}
		r.Figures = &res
		s := summarize(env, []results.Run{r})
		assert.Equal(t, 0, s.Cells[0].Latency.Runs, "no samples: latency unknown, not zero")
	})
}

func countOf(xs []string, x string) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// TestBenchParses reads bench.txt back with golang.org/x/perf/benchfmt,
// the reader benchstat uses, and checks every successful run came through
// with its dimensions, units and values.
func TestBenchParses(t *testing.T) {
	env, runs := analysistest.Fixture(t)
	var b bytes.Buffer
	require.NoError(t, WriteBench(&b, env, runs))

	r := benchfmt.NewReader(&b, "bench.txt")
	var got []*benchfmt.Result
	units := map[string]string{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			got = append(got, rec.Clone())
		case *benchfmt.UnitMetadata:
			units[rec.Unit] = rec.Value
		case *benchfmt.SyntaxError:
			t.Fatalf("bench.txt: %v", rec)
		}
	}
	require.NoError(t, r.Err())
	assert.Equal(t, map[string]string{
		"req/s": "higher", "p50-sec": "lower", "p99-sec": "lower", "max-sec": "lower",
		"socket-errors": "lower", "timeouts": "lower", "non2xx": "lower",
		"load-us/req": "lower", "load-user-us/req": "lower", "servers-us/req": "lower",
	}, units)

	var ok []results.Run
	for _, r := range runs {
		if !r.Failed() {
			ok = append(ok, r)
		}
	}
	require.Len(t, got, len(ok), "one line per successful run")
	require.Len(t, ok, 29)

	// The dimensions as benchstat's -row and -col see them.
	var pp benchproc.ProjectionParser
	dims, err := pp.Parse("/topology,/gomaxprocs", nil)
	require.NoError(t, err)
	fields := dims.Fields()
	for i, res := range got {
		run := ok[i]
		t.Run(run.Name(), func(t *testing.T) {
			k := dims.Project(res)
			assert.Equal(t, run.Topology, k.Get(fields[0]))
			assert.Equal(t, strconv.Itoa(run.GOMAXPROCS), k.Get(fields[1]))
			assert.Equal(t, "Topobench", string(res.Name.Base()))
			assert.Equal(t, int(run.Figures.Requests), res.Iters)

			want := map[string]float64{
				"sec/op":        1 / run.Figures.ReqPerSec,
				"req/s":         run.Figures.ReqPerSec,
				"socket-errors": float64(run.Figures.Errors.Connect + run.Figures.Errors.Read + run.Figures.Errors.Write),
				"timeouts":      float64(run.Figures.Errors.Timeout),
				"non2xx":        float64(run.Figures.Errors.Status),
				"max-sec":       run.Figures.Max.Seconds(),
			}
			want["p50-sec"], want["p99-sec"] = run.Figures.P50.Seconds(), run.Figures.P99.Seconds()
			require.Len(t, res.Values, len(want))
			for unit, v := range want {
				gotV, ok := res.Value(unit)
				require.True(t, ok, unit)
				// ns/op is written rounded to whole nanoseconds.
				assert.InDelta(t, v, gotV, 1e-4*math.Abs(v), unit)
			}
		})
	}

	first := got[0]
	assert.Equal(t, "Fake CPU @ 2.00GHz", first.GetConfig("cpu"))
	assert.Equal(t, "-t100 -c5000 -d30s --timeout 2s", first.GetConfig("load"))
	assert.Empty(t, first.GetConfig("pin-load"), "empty values are left out")
}

// TestBenchstat runs the real benchstat (from the module cache) over
// bench.txt: once comparing two sweeps, once laid out by dimension.
func TestBenchstat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchstat")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "benchstat")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "golang.org/x/perf/cmd/benchstat")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "building benchstat: %s", out)

	env, runs := analysistest.Fixture(t)
	dir := t.TempDir()
	write := func(name string, runs []results.Run) string {
		var b bytes.Buffer
		require.NoError(t, WriteBench(&b, env, runs))
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
		return path
	}
	var g1 []results.Run
	for _, r := range runs {
		if r.GOMAXPROCS == 1 {
			g1 = append(g1, r)
		}
	}
	old, now := write("old.txt", g1), write("new.txt", runs)

	out, err = exec.CommandContext(ctx, bin, old, now).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Topobench/topology=nginx-fcgi-unix/target=go/gomaxprocs=1/")
	assert.Contains(t, string(out), "req/s")
	assert.Contains(t, string(out), "p99-sec")

	out, err = exec.CommandContext(ctx, bin, "-col", "/gomaxprocs", "-row", "/topology", now).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var rows []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && slices.Contains(env.Plan.Topologies, f[0]) && !slices.Contains(rows, f[0]) {
			rows = append(rows, f[0])
		}
	}
	assert.Equal(t, env.Plan.Topologies, rows, "one row per topology:\n%s", out)
	assert.Contains(t, string(out), "vs base", "GOMAXPROCS=8 compared with 1")
}

// TestWrite renders a copy of the fixture directory and checks every file,
// the charts included.
func TestWrite(t *testing.T) {
	dir := copyFixture(t)
	require.NoError(t, Rewrite(dir))
	for _, f := range []string{MarkdownFile, CSVFile, JSONFile, BenchFile} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/golden/sweep/summary.md")
	require.NoError(t, err)
	assert.Equal(t, string(want), string(md), "Rewrite renders what the golden test checks")

	for _, chart := range []string{ReqPSChart, P99Chart} {
		svg, err := os.ReadFile(filepath.Join(dir, chart+".svg"))
		require.NoError(t, err)
		checkSVG(t, svg)
		assert.Contains(t, string(md), "]("+chart+".svg)", "summary.md links the chart")
		for _, label := range []string{"GOMAXPROCS=1", "GOMAXPROCS=8"} {
			assert.Contains(t, string(svg), label, "legend")
		}

		f, err := os.Open(filepath.Join(dir, chart+".png"))
		require.NoError(t, err)
		img, err := png.Decode(f)
		f.Close()
		require.NoError(t, err)
		assert.Greater(t, img.Bounds().Dx(), 400)
	}
}

func checkSVG(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "SVG is well-formed XML")
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	assert.Equal(t, "svg", root)
}

func copyFixture(t *testing.T) string { return analysistest.Copy(t) }

func TestRewriteErrors(t *testing.T) {
	err := Rewrite(t.TempDir())
	assert.ErrorContains(t, err, "is not a results directory")

	dir := copyFixture(t)
	bad := filepath.Join(dir, "runs", "g1-standalone-r1.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))
	err = Rewrite(dir)
	assert.ErrorContains(t, err, bad)
}

func TestMarkdownEscape(t *testing.T) {
	assert.Equal(t, `a \| b`, md("a | b\nc")[:6])
}

// TestRenderedFigures checks how the tables print the isolated fixture's
// figures (computed and checked in package analysis).
func TestRenderedFigures(t *testing.T) {
	env, runs := analysistest.IsolatedFixture(t)
	s := analysis.Summarize(env, runs)
	g := wrkGroup(1)
	http, _ := s.Cell(analysis.Key{Group: g, Topology: "nginx-http"})
	assert.Equal(t, "22 / 44 / 37", fmtCPU(http.CPU), "medians rounded for the table (half to even)")

	var ranks []string
	for _, c := range s.Rows(g) {
		ranks = append(ranks, c.Topology+":"+fmtRank(c))
	}
	assert.Equal(t, []string{"standalone:1", "nginx-http:2", "nginx-fcgi-tcp:4 ~", "nginx-fcgi-unix:3 ~", "nginx-return:–"}, ranks,
		"the fcgi cells' runs overlap nginx-http's and each other's")

	for _, tt := range []struct {
		num, den []float64
		want     string
	}{
		{[]float64{98, 101, 99, 102, 100, 100}, []float64{100, 99, 101, 100, 102, 98}, "1.00 ± 2% ~"},
		{[]float64{48, 50, 49, 51, 50, 52}, []float64{100, 99, 101, 100, 102, 98}, "0.50 ± 3%"},
		{[]float64{48, 50, 49}, []float64{100, 99, 101}, "0.49 ± ∞ ~"},
	} {
		assert.Equal(t, tt.want, fmtRatio(analysis.RatioOf(tt.num, tt.den)))
	}

	// The ratio by CPU cost sits beside the rate's, never instead of it.
	st, _ := s.Cell(analysis.Key{Group: g, Topology: analysis.Standalone})
	assert.Equal(t, []string{"1.00", "1.00"}, resultRow(st)[5:7])
	assert.Equal(t, []string{"0.41 ± 27%", "0.46 ± 13%"}, resultRow(http)[5:7])

	// Old records without CPU show "–", and the CPU chart is left out.
	old, _ := s.Cell(analysis.Key{Group: g, Topology: "nginx-http"})
	old.CPU, old.CostRatio = nil, nil
	assert.Equal(t, "–", resultRow(old)[6])
	assert.Equal(t, "–", resultRow(old)[8])
	st.CostRatio = nil
	assert.Equal(t, "–", resultRow(st)[6], "standalone without CPU: no 1.00 to show")
}

// wrkGroup is the group of the fixture's runs: cmd/hello under wrk -c5000.
func wrkGroup(gomaxprocs int) analysis.Group {
	return analysis.Group{Target: "go", GOMAXPROCS: gomaxprocs, Connections: 5000, Load: "wrk"}
}

// summarize is the analysis wrapped for this package's renderers.
func summarize(env results.Env, runs []results.Run) summary {
	return summary{analysis.Summarize(env, runs)}
}

// TestAARow: a paired sweep's A/A ratio shows in standalone's row and in
// the group's summary, in summary.md, summary.json and report.html, and
// is flagged when its interval leaves out 1.
func TestAARow(t *testing.T) {
	env, runs := analysistest.PairedSweep()
	s := analysis.Summarize(env, runs)
	st, ok := s.Cell(analysis.Key{Group: s.Groups()[0], Topology: analysis.Standalone})
	require.True(t, ok)
	require.NotNil(t, st.AA)
	assert.True(t, st.AA.Known())
	assert.False(t, st.AA.Differs, "contains 1")
	assert.Equal(t, 6, st.AA.N)
	assert.Regexp(t, `^1\.00; A/A 1\.000 ± [0-9.]+%$`, resultRow(st)[5])

	dir := t.TempDir()
	require.NoError(t, Write(dir, env, runs, Renderers()...))
	for _, f := range []string{"summary.md", "report.html", "summary.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		want := "A/A 1.000"
		if f == "summary.json" {
			want = `"aa_ratio"`
		}
		assert.Contains(t, string(b), want, f)
	}

	st.AA.Differs = true
	assert.Contains(t, resultRow(st)[5], "EXCLUDES 1")
}

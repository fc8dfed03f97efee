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

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// fixture is testdata/sweep: a fake results directory (made-up figures in
// the range this project measures) built to trip every warning.
func fixture(t *testing.T) (results.Env, []results.Run) {
	t.Helper()
	env, runs, err := results.Load("testdata/sweep")
	require.NoError(t, err)
	require.Len(t, runs, 30)
	return env, runs
}

// goldenCases are the fake sweeps the golden files are rendered from: the
// fixture, and variants for an interrupted sweep, one where every run of a
// topology failed and standalone is missing, and one with no runs at all.
func goldenCases(t *testing.T) map[string]func() (results.Env, []results.Run) {
	env, runs := fixture(t)
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
		"isolated": func() (results.Env, []results.Run) { return isolatedFixture(t) },
	}
}

// isolatedFixture is the GOMAXPROCS=1 half of the fixture grown to six
// rounds (rounds 4-6 repeat rounds 1-3 at round-specific factors), run
// with -isolate netns on pinned CPUs and -reps auto, with CPU records
// whose per-request figures are known by construction: rep r spent
// 18+r µs of load generator CPU, 40+r of nginx and 30+2r of server per
// request (halved between user and system). Rep 2 of nginx-http was
// noisy, rep 3 of nginx-fcgi-tcp unsettled and rep 5 of standalone
// retried.
func isolatedFixture(t *testing.T) (results.Env, []results.Run) {
	env, runs := fixture(t)
	env.Plan.GOMAXPROCS = []int{1}
	env.Plan.Reps = 6
	env.Plan.RepsAuto = &results.RepsAuto{Max: 6, Within: 0.05}
	env.Plan.Isolation = results.IsolateNetns
	env.Plan.PinLoad, env.Plan.PinServer = "0", "1"
	// Each round's factor, and nginx-http's own drift in later rounds.
	round := map[int]float64{4: 1.02, 5: 0.97, 6: 1.01}
	var out []results.Run
	for _, r := range runs {
		if r.GOMAXPROCS != 1 {
			continue
		}
		for _, rep := range []int{r.Rep, r.Rep + 3} {
			c := r
			c.Rep = rep
			res := *r.Figures
			if f, ok := round[rep]; ok {
				res.ReqPerSec *= f
				if c.Topology == "nginx-http" {
					res.ReqPerSec *= 1.04
				}
				res.Requests = int64(res.ReqPerSec * 30)
			}
			c.Figures = &res
			n := float64(res.Requests) * 1e-6 / 2
			per := func(us float64) results.Usage { return results.Usage{User: us * n, System: us * n} }
			c.CPU = &results.CPU{Load: per(18 + float64(rep)), Nginx: per(40 + float64(rep)), Server: per(30 + 2*float64(rep))}
			c.Settle = &results.Settle{Waited: 200 * time.Millisecond, Settled: true, CPUShare: 0.01, ServerRSS: 12 << 20, NginxRSS: 8 << 20}
			c.Noise = &results.Noise{Busy: 60, Steal: 0.1, Others: 0.8, Window: 30 * time.Second}
			switch {
			case c.Topology == "nginx-http" && rep == 2:
				c.Noise.Others, c.Noise.Flagged = 9.5, "CPU outside the run 16% of the machine, above 10%"
			case c.Topology == "nginx-fcgi-tcp" && rep == 3:
				c.Settle.Waited, c.Settle.Settled, c.Settle.CPUShare, c.Settle.ServerRSS = 5*time.Second, false, 0.35, 860<<20
			case c.Topology == "standalone" && rep == 5:
				c.Retried = "wrk did not exit 10s after its duration"
			}
			out = append(out, c)
		}
	}
	return env, out
}

// TestGolden renders every text file of each golden case and compares it
// with testdata/golden/CASE/FILE; go test -update rewrites them.
func TestGolden(t *testing.T) {
	for name, load := range goldenCases(t) {
		env, runs := load()
		s := Summarize(env, runs)
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

// TestSummary checks the computed figures of the fixture by hand, so the
// golden files cannot drift into accepting wrong numbers.
func TestSummary(t *testing.T) {
	env, runs := fixture(t)
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
	assert.Equal(t, "0.40 ± ∞ ~", fmtRatio(http.RatioToStandalone))

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

func TestSummarizeEdges(t *testing.T) {
	env, runs := fixture(t)

	t.Run("interrupted and missing", func(t *testing.T) {
		e := env
		e.End, e.Interrupted = time.Time{}, true
		var some []results.Run
		for _, r := range runs {
			if r.GOMAXPROCS == 1 {
				some = append(some, r)
			}
		}
		s := Summarize(e, some)
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
		s := Summarize(env, some)
		c, _ := s.Cell(Key{wrkGroup(1), "nginx-fcgi-tcp"})
		assert.Nil(t, c.RatioToStandalone)
		h, _ := s.Cell(Key{wrkGroup(1), "nginx-http"})
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
		s := Summarize(results.Env{}, nil)
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
		s := Summarize(env, []results.Run{r})
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
	env, runs := fixture(t)
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

	env, runs := fixture(t)
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

func copyFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/sweep")))
	return dir
}

func TestRewriteErrors(t *testing.T) {
	err := Rewrite(t.TempDir())
	assert.ErrorContains(t, err, "is not a results directory")

	dir := copyFixture(t)
	bad := filepath.Join(dir, "runs", "g1-standalone-r1.json")
	require.NoError(t, os.WriteFile(bad, []byte("{"), 0o644))
	err = Rewrite(dir)
	assert.ErrorContains(t, err, bad)
}

func TestFormat(t *testing.T) {
	assert.Equal(t, "0", fmtCount(0))
	assert.Equal(t, "999", fmtCount(999.4))
	assert.Equal(t, "1,000", fmtCount(999.5))
	assert.Equal(t, "128,403", fmtCount(128402.88))
	assert.Equal(t, "1,234,567", fmtCount(1234567))
	assert.Equal(t, "177 µs", fmtDur(177*time.Microsecond))
	assert.Equal(t, "1.91 ms", fmtDur(1910*time.Microsecond))
	assert.Equal(t, "17.1 ms", fmtDur(17130*time.Microsecond))
	assert.Equal(t, "347 ms", fmtDur(346680*time.Microsecond))
	assert.Equal(t, "1.23 s", fmtDur(1230*time.Millisecond))
	assert.Equal(t, `a \| b`, md("a | b\nc")[:6])
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
	assert.True(t, strings.HasPrefix(pinning("0", ""), "wrk on CPUs 0; nginx and Go on unpinned"))
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
	env, runs := isolatedFixture(t)
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
		{"nginx", http.CPU.Nginx, 43.5, 41, 46},
		{"server", http.CPU.Server, 37, 32, 42},
	} {
		assert.InDelta(t, c.med, c.iv.Center, 1e-6, c.name)
		assert.InDelta(t, c.lo, *c.iv.Lo, 1e-6, c.name)
		assert.InDelta(t, c.hi, *c.iv.Hi, 1e-6, c.name)
	}
	assert.Equal(t, "22 / 44 / 37", fmtCPU(http.CPU), "medians rounded for the table (half to even)")

	var ranks []string
	for _, c := range s.Rows(g) {
		ranks = append(ranks, c.Topology+":"+fmtRank(c))
	}
	assert.Equal(t, []string{"standalone:1", "nginx-http:2", "nginx-fcgi-tcp:4 ~", "nginx-fcgi-unix:3 ~", "nginx-return:–"}, ranks,
		"the fcgi cells' runs overlap nginx-http's and each other's")

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

	// Old records without CPU show "–", and the CPU chart is left out.
	old, _ := s.Cell(Key{g, "nginx-http"})
	old.CPU = nil
	assert.Equal(t, "–", resultRow(old)[7])
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
			r := ratioOf(tt.num, tt.den)
			require.NotNil(t, r)
			assert.Equal(t, tt.want, fmtRatio(r))
			assert.Equal(t, tt.differs, r.Differs)
			assert.Equal(t, stats.Compare(tt.den, tt.num).Significant(), r.Differs, "the U test agrees")
		})
	}
	assert.Nil(t, ratioOf([]float64{1, 2}, nil), "no runs to divide by")
	assert.Equal(t, 4, minRatioRuns())
	assert.Equal(t, 6, MinRounds())
}

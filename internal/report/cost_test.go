package report

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/vg"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

func durp(d time.Duration) *time.Duration { return &d }

// TestCostSentence: the sentence a reader takes away for each way a path
// can meet (or miss) the 10% bound.
func TestCostSentence(t *testing.T) {
	g := analysis.Group{GOMAXPROCS: 1, Connections: 100}
	costs := []analysis.Cost{{Work: 0}, {Work: 50 * time.Microsecond}, {Work: 200 * time.Microsecond}}
	for _, c := range []struct {
		name string
		o    analysis.Overhead
		want string
	}{
		{"reached with no work", analysis.Overhead{Group: g, Topology: "nginx-return", Costs: costs, MeasuredFound: true},
			"**nginx-return** (" + g.String() + "): costs ≤ 10% of throughput even for a handler that does no work."},
		{"reached at some work", analysis.Overhead{Group: g, Topology: "nginx-http", Costs: costs, MeasuredFound: true, MeasuredAt: 50 * time.Microsecond},
			"**nginx-http** (" + g.String() + "): costs ≤ 10% of throughput for handlers of ≥ 50µs of CPU on this machine (the least work measured that reached it)."},
		{"never reached, up to the most work", analysis.Overhead{Group: g, Topology: "nginx-fcgi-tcp", Costs: costs},
			"**nginx-fcgi-tcp** (" + g.String() + "): costs more than 10% of throughput at every handler cost measured, up to 200µs."},
		{"with the model's point", analysis.Overhead{Group: g, Topology: "nginx-http", Costs: costs, MeasuredFound: true, MeasuredAt: 200 * time.Microsecond,
			ModelDefined: true, ModelAt: 1234567 * time.Nanosecond},
			"**nginx-http** (" + g.String() + "): costs ≤ 10% of throughput for handlers of ≥ 200µs of CPU on this machine (the least work measured that reached it); the CPU model puts the point at 1.235ms."},
		{"model at zero", analysis.Overhead{Group: g, Topology: "nginx-return", Costs: costs, MeasuredFound: true, ModelDefined: true},
			"**nginx-return** (" + g.String() + "): costs ≤ 10% of throughput even for a handler that does no work; the CPU model puts the point at 0."},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, costSentence(c.o))
		})
	}
}

// TestCostRow: figures not measured read "–", never NaN or 0, and a path
// faster than standalone shows a minus sign, not "+-".
func TestCostRow(t *testing.T) {
	o := analysis.Overhead{Topology: "nginx-http"}
	ratio := &analysis.Ratio{Interval: analysis.Interval{Center: 0.5, N: 1}, Differs: true}
	for _, c := range []struct {
		name string
		cost analysis.Cost
		want []string
	}{
		{"nothing measured", analysis.Cost{Work: 0, Model: math.NaN(), AddedUS: math.NaN(), NginxUS: math.NaN(), ServerUS: math.NaN()},
			[]string{"nginx-http", "0", "–", "–", "–", "–", "–", "–", "–", "–"}},
		{"everything measured", analysis.Cost{Work: 50 * time.Microsecond, Ratio: ratio, Model: 0.4567, NginxUS: 36, ServerUS: 76.4, AddedUS: 37.2,
			Rate: 2000, P50Added: durp(100 * time.Microsecond), P99Added: durp(2500 * time.Microsecond)},
			[]string{"nginx-http", "50µs", fmtRatio(ratio), "0.46", "36", "76", "37", "2,000", "+100 µs", "+2.50 ms"}},
		{"faster than standalone", analysis.Cost{Work: 1500 * time.Nanosecond, Model: math.NaN(), NginxUS: 4.25, ServerUS: math.NaN(), AddedUS: -3,
			Rate: 1000, P50Added: durp(-40 * time.Microsecond), P99Added: durp(0)},
			[]string{"nginx-http", "2µs", "–", "–", "4.2", "–", "-3.0", "1,000", "−40 µs", "+0 µs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, costRow(o, c.cost))
		})
	}
}

func TestFmtWork(t *testing.T) {
	for w, want := range map[time.Duration]string{
		0:                       "0",
		400 * time.Nanosecond:   "0s",
		1499 * time.Nanosecond:  "1µs",
		50 * time.Microsecond:   "50µs",
		time.Millisecond:        "1ms",
		2500 * time.Microsecond: "2.5ms",
	} {
		assert.Equal(t, want, fmtWork(w), "%d ns", w)
	}
}

// TestCostView reads the cost section off the fixture whose cells vary
// the work: standalone spends 25+w µs of server CPU per request,
// nginx-http 36 of nginx and 26+w of server, so the ratio is
// (25+w)/(62+w): 0.40, 0.67, 0.86, 0.97 at 0, 50, 200 and 1000 µs, and
// the model reaches 0.9 at w = 308 µs.
func TestCostView(t *testing.T) {
	env, runs := analysistest.CostSweep(true)
	v := summarize(env, runs).costView()
	require.Len(t, v.CostSentences, 1, "standalone has no sentence")
	assert.Contains(t, v.CostSentences[0], "**nginx-http**")
	assert.Contains(t, v.CostSentences[0], "for handlers of ≥ 1ms of CPU")
	assert.Contains(t, v.CostSentences[0], "the CPU model puts the point at 308µs")
	assert.Equal(t, CostChart, v.CostChart)
	require.Len(t, v.CostTables, 1)
	rows := v.CostTables[0].Rows
	var works, ratios []string
	for _, r := range rows {
		require.Len(t, r, 10)
		works, ratios = append(works, r[0]+" "+r[1]), append(ratios, r[2][:4])
	}
	assert.Equal(t, []string{"nginx-http 0", "nginx-http 50µs", "nginx-http 200µs", "nginx-http 1ms"}, works)
	assert.Equal(t, []string{"0.40", "0.67", "0.86", "0.97"}, ratios)
	// Open loop at 2,000 req/s: nginx adds 100 µs at p50, 400 at p99.
	assert.Equal(t, []string{"2,000", "+100 µs", "+400 µs"}, rows[0][7:])

	t.Run("without open loop", func(t *testing.T) {
		env, runs := analysistest.CostSweep(false)
		v := summarize(env, runs).costView()
		require.Len(t, v.CostTables, 1)
		for _, r := range v.CostTables[0].Rows {
			assert.Equal(t, []string{"–", "–", "–"}, r[7:], "no latency without the open-loop cells")
		}
	})
	t.Run("a sweep without -work has none", func(t *testing.T) {
		env, runs := analysistest.IsolatedFixture(t)
		s := summarize(env, runs)
		assert.Equal(t, costView{}, s.costView())
		var b bytes.Buffer
		require.NoError(t, s.WriteMarkdown(&b))
		assert.NotContains(t, b.String(), "What each path costs a handler that does work")
		assert.NotContains(t, b.String(), CostChart+".svg")
	})
	t.Run("summary.md has it with -work", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
		assert.Contains(t, b.String(), "## What each path costs a handler that does work")
		assert.Contains(t, b.String(), "- "+v.CostSentences[0]+"\n")
		assert.Contains(t, b.String(), "]("+CostChart+".svg)")
	})
}

// costSweepGroups is the cost fixture at GOMAXPROCS 1 and, slower, 2.
func costSweepGroups() (results.Env, []results.Run) {
	env, runs := analysistest.CostSweep(false)
	env.Plan.GOMAXPROCS = []int{1, 2}
	for _, r := range slices.Clone(runs) {
		r.GOMAXPROCS = 2
		f := *r.Figures
		f.ReqPerSec *= 0.9
		r.Figures = &f
		runs = append(runs, r)
	}
	return env, runs
}

// svgText renders a chart to SVG.
func svgText(t *testing.T, s summary) string {
	t.Helper()
	p, err := s.costChart()
	require.NoError(t, err)
	w, err := p.WriterTo(7*vg.Inch, 4*vg.Inch, "svg")
	require.NoError(t, err)
	var b bytes.Buffer
	_, err = w.WriteTo(&b)
	require.NoError(t, err)
	return b.String()
}

// TestCostChart: one legend entry per topology and its model; the group
// named only when the chart holds several.
func TestCostChart(t *testing.T) {
	t.Run("one group", func(t *testing.T) {
		env, runs := analysistest.CostSweep(false)
		svg := svgText(t, summarize(env, runs))
		assert.Contains(t, svg, ">nginx-http<")
		assert.Contains(t, svg, ">nginx-http, CPU model<")
		assert.NotContains(t, svg, "GOMAXPROCS")
	})
	t.Run("several groups", func(t *testing.T) {
		env, runs := costSweepGroups()
		s := summarize(env, runs)
		require.Len(t, s.Overheads(), 2)
		svg := svgText(t, s)
		for _, o := range s.Overheads() {
			assert.Contains(t, svg, ">nginx-http ("+o.Group.String()+")<")
			assert.Contains(t, svg, ">nginx-http ("+o.Group.String()+"), CPU model<")
		}
	})
	t.Run("no CPU, no model", func(t *testing.T) {
		env, runs := analysistest.CostSweep(false)
		for i := range runs {
			runs[i].CPU = nil
		}
		s := summarize(env, runs)
		for _, o := range s.Overheads() {
			assert.False(t, o.ModelDefined)
			assert.Contains(t, costSentence(o), "1ms of CPU on this machine (the least work measured that reached it).")
		}
		svg := svgText(t, s)
		assert.Contains(t, svg, ">nginx-http<")
		assert.NotContains(t, svg, "CPU model")
	})
	t.Run("the chart file is written only with work", func(t *testing.T) {
		for _, c := range []struct {
			name string
			work bool
		}{{"cost", true}, {"isolated", false}} {
			var env results.Env
			var runs []results.Run
			if c.work {
				env, runs = analysistest.CostSweep(true)
			} else {
				env, runs = analysistest.IsolatedFixture(t)
			}
			dir := t.TempDir()
			require.NoError(t, summarize(env, runs).writeScenarioCharts(dir))
			files := strings.Join(listFiles(t, dir), " ")
			assert.Equal(t, c.work, strings.Contains(files, CostChart+".svg"), "%s: %s", c.name, files)
		}
	})
}

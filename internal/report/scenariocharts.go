package report

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
)

// ConcChart is the p99-against-concurrency chart's file name.
const ConcChart = "p99-connections"

// maxNines is how far the latency-by-percentile charts reach: 99.999%.
const maxNines = 5

// latencyGroups are the built-in engine's groups, one chart each.
func (s summary) latencyGroups() []analysis.Group {
	var gs []analysis.Group
	for _, c := range s.Engine {
		if !slices.Contains(gs, c.Group) {
			gs = append(gs, c.Group)
		}
	}
	return gs
}

// latencyChartName names a group's latency-by-percentile chart:
// latency-g2-c100-slow-requests.
func latencyChartName(g analysis.Group) string {
	name := g.Schedule.Name
	if name == "" {
		name = "closed"
		if g.Schedule.Rate > 0 {
			name = "rate" + strconv.FormatFloat(g.Schedule.Rate, 'f', -1, 64)
		}
		if g.Schedule.Fraction > 0 {
			name = "frac" + strconv.FormatFloat(g.Schedule.Fraction, 'f', -1, 64)
		}
		if g.Schedule.Work > 0 {
			name += "-work" + strings.ReplaceAll(g.Schedule.Work.String(), "µ", "u")
		}
		if g.Schedule.Wait > 0 {
			name += "-wait" + g.Schedule.Wait.String()
		}
	}
	prefix := "latency-"
	if g.Target != "" && g.Target != "go" {
		prefix += results.TargetFile(g.Target) + "-" // a command target's name is a command line
	}
	return fmt.Sprintf("%sg%d-c%d-%s", prefix, g.GOMAXPROCS, g.Connections, name)
}

func (s summary) hasConcChart() bool {
	return len(s.Env.Plan.Connections) > 1 && slices.ContainsFunc(s.Cells, func(c analysis.Cell) bool { return c.Latency.Runs > 0 })
}

// writeScenarioCharts writes the latency-by-percentile chart of every
// group of the built-in engine, from the runs' .hdr files (merged over
// repetitions), and the p99 against concurrency chart when the sweep
// varied the connections.
func (s summary) writeScenarioCharts(dir string) error {
	if len(s.Overheads()) > 0 {
		p, err := s.costChart()
		if err != nil {
			return fmt.Errorf("chart %s: %w", CostChart, err)
		}
		if err := saveChart(dir, CostChart, p, 7*vg.Inch); err != nil {
			return err
		}
	}
	for _, g := range s.latencyGroups() {
		p, err := s.percentileChart(dir, g)
		if err != nil {
			return fmt.Errorf("chart %s: %w", latencyChartName(g), err)
		}
		if err := saveChart(dir, latencyChartName(g), p, 7*vg.Inch); err != nil {
			return err
		}
	}
	if s.hasConcChart() {
		p, err := s.concChart()
		if err != nil {
			return fmt.Errorf("chart %s: %w", ConcChart, err)
		}
		return saveChart(dir, ConcChart, p, 7*vg.Inch)
	}
	return nil
}

func saveChart(dir, name string, p *plot.Plot, width vg.Length) error {
	for _, format := range []string{"svg", "png"} {
		wt, err := p.WriterTo(width, 4.5*vg.Inch, format)
		if err != nil {
			return fmt.Errorf("chart %s.%s: %w", name, format, err)
		}
		var b bytes.Buffer
		if _, err := wt.WriteTo(&b); err != nil {
			return fmt.Errorf("chart %s.%s: %w", name, format, err)
		}
		if err := writeFile(filepath.Join(dir, name+"."+format), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// percentileChart plots latency against percentile as HdrHistogram's
// plotter does: x is the number of nines, -log10(1 - p), so 90%, 99%,
// 99.9% ... are evenly spaced; one line per topology.
func (s summary) percentileChart(dir string, g analysis.Group) (*plot.Plot, error) {
	p := plot.New()
	// The group's full label is too wide for a title; the scenario names it.
	title := g.String()
	if g.Schedule.Name != "" {
		title = fmt.Sprintf("%s (GOMAXPROCS=%d)", g.Schedule.Name, g.GOMAXPROCS)
	}
	p.Title.Text = "Latency by percentile: " + title
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms)"
	p.Y.Min = 0
	var ticks []plot.Tick
	for n, label := range []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"} {
		ticks = append(ticks, plot.Tick{Value: float64(n), Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = 0, maxNines
	p.Legend.Top, p.Legend.Left = true, true
	i := 0
	for _, c := range s.Engine {
		if c.Group != g {
			continue
		}
		h, err := mergeHistograms(dir, c.Histograms)
		if err != nil {
			return nil, err
		}
		if h == nil || h.TotalCount() == 0 {
			continue
		}
		// Beyond 1/n of the samples every percentile is the maximum.
		top := math.Min(maxNines, math.Log10(float64(h.TotalCount())))
		var pts plotter.XYs
		for x := 0.0; x <= top+1e-9; x += 0.02 {
			q := 100 * (1 - math.Pow(10, -x))
			pts = append(pts, plotter.XY{X: x, Y: float64(h.ValueAtQuantile(q)) / 1000})
		}
		pts = append(pts, plotter.XY{X: top, Y: float64(h.Max()) / 1000})
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.Topology, l)
		i++
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

// mergeHistograms adds up the runs' histograms; missing files (a record
// copied without them) are skipped, nil when there are none.
func mergeHistograms(dir string, paths []string) (*hdrhistogram.Histogram, error) {
	var sum *hdrhistogram.Histogram
	for _, rel := range paths {
		h, err := hdr.ReadFile(filepath.Join(dir, rel))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = hdr.New()
		}
		sum.Merge(h)
	}
	return sum, nil
}

// concChart plots each topology's p99 (median over runs) against the
// connections, both on log axes, one line per topology and group.
func (s summary) concChart() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "p99 latency against concurrency (median over runs)"
	p.X.Label.Text = "connections"
	p.Y.Label.Text = "p99 latency (ms)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	conns := slices.Clone(s.Env.Plan.Connections)
	slices.Sort(conns)
	var ticks []plot.Tick
	for _, c := range conns {
		ticks = append(ticks, plot.Tick{Value: float64(c), Label: strconv.Itoa(c)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top, p.Legend.Left = true, true
	type line struct {
		label string
		pts   plotter.XYs
	}
	var lines []*line
	byLabel := map[string]*line{}
	for _, c := range s.Cells {
		if c.Latency.Runs == 0 || c.Latency.P99 <= 0 || c.Connections <= 0 {
			continue
		}
		g := c.Group
		g.Connections = 0
		label := c.Topology
		if gs := g.String(); gs != "" {
			label += " " + gs
		}
		l := byLabel[label]
		if l == nil {
			l = &line{label: label}
			byLabel[label] = l
			lines = append(lines, l)
		}
		l.pts = append(l.pts, plotter.XY{X: float64(c.Connections), Y: float64(c.Latency.P99) / 1e6})
	}
	for i, l := range lines {
		slices.SortFunc(l.pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
		lp, pts, err := plotter.NewLinePoints(l.pts)
		if err != nil {
			return nil, err
		}
		lp.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		lp.Dashes = plotutil.Dashes(i / 7)
		pts.Shape = plotutil.Shape(i)
		p.Add(lp, pts)
		p.Legend.Add(strings.TrimSpace(l.label), lp, pts)
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// WriteCharts writes reqps.svg/.png and p99.svg/.png into dir: grouped bar
// charts with the topologies along x and one bar per group (GOMAXPROCS
// value);
// the req/s chart carries min–max bars over the repetitions.
func (s summary) WriteCharts(dir string) error {
	charts := []struct {
		name   string
		title  string
		ylabel string
		value  func(analysis.Cell) (v, lo, hi float64, ok bool)
		ranged bool
	}{
		{ReqPSChart, "Requests per second (median over runs; bars: 95% interval, min–max when unknown)", "requests/s",
			func(c analysis.Cell) (float64, float64, float64, bool) {
				if c.ReqPerSec.CILo != nil && c.ReqPerSec.CIHi != nil {
					return c.ReqPerSec.Median, *c.ReqPerSec.CILo, *c.ReqPerSec.CIHi, c.Reps > 0
				}
				return c.ReqPerSec.Median, c.ReqPerSec.Min, c.ReqPerSec.Max, c.Reps > 0
			}, true},
		{P99Chart, "p99 latency (median over runs; timeouts excluded by wrk)", "p99 latency (ms)",
			func(c analysis.Cell) (float64, float64, float64, bool) {
				v := float64(c.Latency.P99) / 1e6
				return v, v, v, c.Latency.Runs > 0
			}, false},
	}
	for _, ch := range charts {
		p, width, err := s.barChart(ch.title, ch.ylabel, ch.value, ch.ranged)
		if err != nil {
			return fmt.Errorf("chart %s: %w", ch.name, err)
		}
		for _, format := range []string{"svg", "png"} {
			wt, err := p.WriterTo(width, 4*vg.Inch, format)
			if err != nil {
				return fmt.Errorf("chart %s.%s: %w", ch.name, format, err)
			}
			var b bytes.Buffer
			if _, err := wt.WriteTo(&b); err != nil {
				return fmt.Errorf("chart %s.%s: %w", ch.name, format, err)
			}
			if err := writeFile(filepath.Join(dir, ch.name+"."+format), b.Bytes()); err != nil {
				return err
			}
		}
	}
	return s.writeCPUChart(dir)
}

func (s summary) barChart(title, ylabel string, value func(analysis.Cell) (v, lo, hi float64, ok bool), ranged bool) (*plot.Plot, vg.Length, error) {
	topos := s.Topologies()
	gs := s.Groups()
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Y.Min = 0
	p.Y.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		ticks := plot.DefaultTicks{}.Ticks(min, max)
		for i := range ticks {
			if ticks[i].Label != "" {
				if v := ticks[i].Value; v == math.Trunc(v) {
					ticks[i].Label = numfmt.Count(v)
				} else {
					ticks[i].Label = strconv.FormatFloat(v, 'g', 4, 64)
				}
			}
		}
		return ticks
	})
	p.Legend.Top = true
	p.Legend.Left = false
	p.X.Tick.Label.Rotation = math.Pi / 6
	p.X.Tick.Label.XAlign = draw.XRight
	p.X.Tick.Label.YAlign = draw.YCenter

	ymax := 0.0
	barW := vg.Points(16)
	if len(gs) > 3 {
		barW = vg.Points(42 / float64(len(gs)))
	}
	for gi, g := range gs {
		vals := make(plotter.Values, len(topos))
		var bars []errBar
		for ti, t := range topos {
			c, ok := s.Cell(analysis.Key{Group: g, Topology: t})
			if !ok {
				continue
			}
			v, lo, hi, ok := value(c)
			hi = math.Max(v, hi)
			if !ok {
				continue
			}
			vals[ti] = v
			ymax = math.Max(ymax, hi)
			if ranged {
				bars = append(bars, errBar{x: float64(ti), lo: lo, hi: hi})
			}
		}
		if len(topos) == 0 {
			break
		}
		b, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return nil, 0, err
		}
		b.Color = plotutil.Color(gi)
		b.LineStyle.Width = 0
		b.Offset = barW * vg.Length(float64(gi)-float64(len(gs)-1)/2)
		p.Add(b)
		p.Legend.Add(g.String(), b)
		if len(bars) > 0 {
			p.Add(&errBars{bars: bars, offset: b.Offset, cap: barW / 3})
		}
	}
	if len(topos) > 0 {
		p.NominalX(topos...)
		// Room for the outer bars of the first and last group, and above
		// the tallest bar for the legend.
		p.X.Min, p.X.Max = -0.6, float64(len(topos))-0.4
		p.Y.Max = 1.25 * ymax
	}
	p.Add(plotter.NewGrid())
	width := vg.Length(math.Max(6, 1.5+0.28*float64(len(topos)*max(len(gs), 1)))) * vg.Inch
	return p, width, nil
}

type errBar struct{ x, lo, hi float64 }

// errBars draws vertical min–max bars shifted by the same offset as the
// bar chart they belong to (the offset is in drawing units, which
// plotter.YErrorBars cannot express).
type errBars struct {
	bars   []errBar
	offset vg.Length
	cap    vg.Length
}

func (e *errBars) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	ls := draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	for _, b := range e.bars {
		x := trX(b.x) + e.offset
		lo, hi := trY(b.lo), trY(b.hi)
		c.StrokeLine2(ls, x, lo, x, hi)
		c.StrokeLine2(ls, x-e.cap, lo, x+e.cap, lo)
		c.StrokeLine2(ls, x-e.cap, hi, x+e.cap, hi)
	}
}

// DataRange makes the axes include the top of every bar.
func (e *errBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, b := range e.bars {
		xmin, xmax = math.Min(xmin, b.x), math.Max(xmax, b.x)
		ymin, ymax = math.Min(ymin, b.lo), math.Max(ymax, b.hi)
	}
	return xmin, xmax, ymin, ymax
}

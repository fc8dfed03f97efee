package report

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// CostChart is the ratio-against-work chart (CostChart.svg, .png).
const CostChart = "cost"

// costView is the part of summary.md that says what each path costs a
// service that does work: a sentence per topology, the table, the chart.
type costView struct {
	CostSentences []string
	CostTables    []resultTable
	CostChart     string
}

func (s summary) costView() costView {
	var v costView
	overheads := s.Overheads()
	if len(overheads) == 0 {
		return v
	}
	v.CostChart = CostChart
	byGroup := map[analysis.Group]*resultTable{}
	var order []analysis.Group
	for _, o := range overheads {
		v.CostSentences = append(v.CostSentences, costSentence(o))
		t, ok := byGroup[o.Group]
		if !ok {
			t = &resultTable{Heading: o.Group.Heading(s.ServerCPUs, s.Env.CPUs)}
			byGroup[o.Group] = t
			order = append(order, o.Group)
		}
		for _, c := range o.Costs {
			t.Rows = append(t.Rows, costRow(o, c))
		}
	}
	for _, g := range order {
		v.CostTables = append(v.CostTables, *byGroup[g])
	}
	return v
}

// costSentence says, for one topology, from which handler cost on its
// overhead stays within analysis.OverheadBound of throughput.
func costSentence(o analysis.Overhead) string {
	bound := numfmt.Pct(analysis.OverheadBound)
	s := fmt.Sprintf("**%s** (%s): ", o.Topology, o.Group)
	switch {
	case o.MeasuredFound && o.MeasuredAt == 0:
		s += fmt.Sprintf("costs ≤ %s of throughput even for a handler that does no work", bound)
	case o.MeasuredFound:
		s += fmt.Sprintf("costs ≤ %s of throughput for handlers of ≥ %s of CPU on this machine (the least work measured that reached it)", bound, fmtWork(o.MeasuredAt))
	default:
		last := o.Costs[len(o.Costs)-1]
		s += fmt.Sprintf("costs more than %s of throughput at every handler cost measured, up to %s", bound, fmtWork(last.Work))
	}
	if o.ModelDefined {
		s += fmt.Sprintf("; the CPU model puts the point at %s", fmtWork(o.ModelAt))
	}
	return s + "."
}

func costRow(o analysis.Overhead, c analysis.Cost) []string {
	micros := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return numfmt.Micros(v)
	}
	model := "–"
	if !math.IsNaN(c.Model) {
		model = fmt.Sprintf("%.2f", c.Model)
	}
	lat := func(d *time.Duration) string {
		if d == nil {
			return "–"
		}
		sign := "+"
		if *d < 0 {
			sign = "−"
			return sign + numfmt.Dur(-*d)
		}
		return sign + numfmt.Dur(*d)
	}
	rate := "–"
	if c.Rate > 0 {
		rate = numfmt.Count(c.Rate)
	}
	return []string{o.Topology, fmtWork(c.Work), fmtRatio(c.Ratio), model, micros(c.NginxUS), micros(c.ServerUS), micros(c.AddedUS), rate, lat(c.P50Added), lat(c.P99Added)}
}

func fmtWork(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.Round(time.Microsecond).String()
}

// costChart plots each topology's ratio to standalone against the
// handler's work (log axis; no work at the left edge), with its interval,
// and the CPU model's line beside it, dashed.
func (s summary) costChart() (*plot.Plot, error) {
	overheads := s.Overheads()
	p := plot.New()
	p.Title.Text = "Ratio to standalone against the handler's work"
	p.X.Label.Text = "handler work per request (µs of CPU, log scale; 0 at the left edge)"
	p.Y.Label.Text = "req/s over standalone's"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min, p.Y.Max = 0, 1.1
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.YOffs = vg.Points(24)
	// Zero work sits one decade left of the least work measured.
	least := math.Inf(1)
	for _, o := range overheads {
		for _, c := range o.Costs {
			if c.Work > 0 {
				least = math.Min(least, us(c.Work))
			}
		}
	}
	if math.IsInf(least, 1) {
		least = 10
	}
	x := func(w time.Duration) float64 {
		if w == 0 {
			return least / 10
		}
		return us(w)
	}
	for i, o := range overheads {
		var pts, model plotter.XYs
		var bars plotter.YErrors
		for _, c := range o.Costs {
			if c.Ratio != nil {
				pts = append(pts, plotter.XY{X: x(c.Work), Y: c.Ratio.Center})
				lo, hi := c.Ratio.Center, c.Ratio.Center
				if c.Ratio.Known() {
					lo, hi = *c.Ratio.Lo, *c.Ratio.Hi
				}
				bars = append(bars, struct{ Low, High float64 }{c.Ratio.Center - lo, hi - c.Ratio.Center})
			}
		}
		if o.ModelDefined && len(o.Costs) > 0 {
			hi := us(o.Costs[len(o.Costs)-1].Work) * 3
			model = append(model, plotter.XY{X: x(0), Y: o.ModelRatio(0)})
			for w := least / 2; w <= hi; w *= 1.25 {
				model = append(model, plotter.XY{X: w, Y: o.ModelRatio(time.Duration(w * float64(time.Microsecond)))})
			}
		}
		label := o.Topology
		if overheads[0].Group != overheads[len(overheads)-1].Group {
			label += " (" + o.Group.String() + ")"
		}
		if len(pts) > 0 {
			l, sc, err := plotter.NewLinePoints(pts)
			if err != nil {
				return nil, err
			}
			l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
			l.Width = vg.Points(1.5)
			eb := &plotter.YErrorBars{XYs: pts, YErrors: bars, LineStyle: l.LineStyle, CapWidth: vg.Points(4)}
			p.Add(l, sc, eb)
			p.Legend.Add(label, l, sc)
		}
		if len(model) > 1 {
			ml, err := plotter.NewLine(model)
			if err != nil {
				return nil, err
			}
			ml.Color = plotutil.Color(i)
			ml.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ml)
			p.Legend.Add(label+", CPU model", ml)
		}
	}
	p.Add(plotter.NewGrid())
	return p, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

package report

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/topobench/topobench/internal/analysis"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// writeCPUChart writes cpu.svg/.png: for each group a panel with a bar
// pair per topology, nginx and the server stacked (the cost of a request
// on the server side) and the load generator beside it. Nothing is
// written when no run measured CPU.
func (s summary) writeCPUChart(dir string) error {
	var panels [][]*plot.Plot
	topos := 0
	for _, g := range s.Groups() {
		p, n, err := s.cpuPanel(g)
		if err != nil {
			return fmt.Errorf("chart %s: %w", CPUChart, err)
		}
		if p != nil {
			panels = append(panels, []*plot.Plot{p})
			topos = max(topos, n)
		}
	}
	if len(panels) == 0 {
		return nil
	}
	w := vg.Length(max(6, 1.5+0.6*float64(topos))) * vg.Inch
	h := vg.Length(3*len(panels)) * vg.Inch
	for _, format := range []string{"svg", "png"} {
		var c interface {
			vg.CanvasSizer
			io.WriterTo
		}
		switch format {
		case "svg":
			c = vgsvg.New(w, h)
		default:
			c = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
		}
		dc := draw.New(c)
		tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Points(8)}
		for i, cs := range plot.Align(panels, tiles, dc) {
			panels[i][0].Draw(cs[0])
		}
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("chart %s.%s: %w", CPUChart, format, err)
		}
		if err := writeFile(filepath.Join(dir, CPUChart+"."+format), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// cpuPanel is one group's panel; nil when no cell of the group measured
// CPU. n is the number of topologies on it.
func (s summary) cpuPanel(g analysis.Group) (p *plot.Plot, n int, err error) {
	var names []string
	var ngx, srv, load plotter.Values
	for _, c := range s.Rows(g) {
		if c.CPU == nil {
			continue
		}
		names = append(names, c.Topology)
		// A group not measured draws no bar.
		ngx = append(ngx, zeroIfNaN(c.CPU.Nginx.Median()))
		srv = append(srv, zeroIfNaN(c.CPU.Server.Median()))
		load = append(load, c.CPU.Load.Center)
	}
	if len(names) == 0 {
		return nil, 0, nil
	}
	server := "server"
	if g.Target != "" {
		server += " (" + g.Target + ")"
	}
	p = plot.New()
	p.Title.Text = "CPU per request, " + g.String() + " (median over runs)"
	p.Y.Label.Text = "CPU µs per request"
	p.Y.Min = 0
	p.Legend.Top = true
	p.X.Tick.Label.Rotation = 0.5
	p.X.Tick.Label.XAlign = draw.XRight
	barW := vg.Points(18)
	bn, err := plotter.NewBarChart(ngx, barW)
	if err != nil {
		return nil, 0, err
	}
	bs, err := plotter.NewBarChart(srv, barW)
	if err != nil {
		return nil, 0, err
	}
	bl, err := plotter.NewBarChart(load, barW)
	if err != nil {
		return nil, 0, err
	}
	bs.StackOn(bn)
	bn.Offset, bs.Offset, bl.Offset = -barW/2, -barW/2, barW/2
	for i, b := range []*plotter.BarChart{bn, bs, bl} {
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
	}
	p.Add(bn, bs, bl, plotter.NewGrid())
	p.Legend.Add("nginx", bn)
	p.Legend.Add(server, bs)
	p.Legend.Add("load generator", bl)
	p.NominalX(names...)
	top := 0.0
	for i := range names {
		top = max(top, ngx[i]+srv[i], load[i])
	}
	p.X.Min, p.X.Max = -0.6, float64(len(names))-0.4
	p.Y.Max = 1.3*top + 1
	return p, len(names), nil
}

func zeroIfNaN(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}

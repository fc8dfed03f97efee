package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/topology"
)

// chartData is the JSON document html/page.js draws from: one entry per
// chart, in page order. Every slice, no map: the same records give the
// same bytes.
type chartData struct {
	Charts []chartSpec `json:"charts"`
}

// chartSpec is one chart. Kind "cat" lays out categories (topologies)
// along x, each with Slots positions side by side; kind "xy" has numeric
// x values shared by every series.
type chartSpec struct {
	ID     string      `json:"id"`
	Kind   string      `json:"kind"`
	Title  string      `json:"title"`
	XLabel string      `json:"xlabel"`
	YLabel string      `json:"ylabel"`
	Cats   []string    `json:"cats,omitempty"`
	Slots  int         `json:"slots,omitempty"`
	X      []float64   `json:"x,omitempty"`
	XTicks []chartTick `json:"xticks,omitempty"`
	XLog   bool        `json:"xlog,omitempty"`
	YLog   bool        `json:"ylog,omitempty"`
	// XFmt and YFmt name how hover values print: "count", "ratio",
	// "us", "ms", "nines", "int".
	XFmt string `json:"xfmt,omitempty"`
	YFmt string `json:"yfmt"`
	// Ref draws a horizontal reference line (1.0: standalone).
	Ref    *float64      `json:"ref,omitempty"`
	Series []chartSeries `json:"series"`
}

type chartTick struct {
	V float64 `json:"v"`
	L string  `json:"l"`
}

// chartSeries is one legend entry. Style is "dot", "ring" or "diamond"
// (a marker with an interval whisker from Lo to Hi), "bar" (from Base,
// or 0, to Y), or "line" or "dash" (xy charts). Mark lists the indices
// of flagged points, drawn ringed in black.
type chartSeries struct {
	Label string     `json:"label"`
	Color string     `json:"color"`
	Style string     `json:"style"`
	Slot  int        `json:"slot"`
	Y     []*float64 `json:"y"`
	Lo    []*float64 `json:"lo,omitempty"`
	Hi    []*float64 `json:"hi,omitempty"`
	Base  []*float64 `json:"base,omitempty"`
	Mark  []int      `json:"mark,omitempty"`
}

// palette is Tableau 10: distinct, and legible in grey when printed.
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

func paletteColor(i int) string { return palette[i%len(palette)] }

func num(v float64) *float64 {
	v = sig4(v)
	return &v
}

type chartBuilder struct {
	sweeps []Sweep
	data   chartData
}

// add registers a chart and returns its figure, with the chart's id.
func (b *chartBuilder) add(c chartSpec, caption string, table htmlTable) htmlFigure {
	c.ID = fmt.Sprintf("chart-%d", len(b.data.Charts)+1)
	b.data.Charts = append(b.data.Charts, c)
	table.Caption = "Numbers of the chart: " + caption
	return htmlFigure{ID: c.ID, Caption: caption, Table: table}
}

// prefix labels a sweep's series in a comparison: "B: ".
func (b *chartBuilder) prefix(i int) string {
	if len(b.sweeps) < 2 {
		return ""
	}
	return sweepLabel(i) + ": "
}

func (b *chartBuilder) sections() ([]htmlSection, error) {
	var out []htmlSection
	if s, ok := b.ratioSection(); ok {
		out = append(out, s)
	}
	if s, ok := b.cpuSection(); ok {
		out = append(out, s)
	}
	s, ok, err := b.spectrumSection()
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, s)
	}
	if s, ok := b.costSection(); ok {
		out = append(out, s)
	}
	if s, ok := b.handlerSection(); ok {
		out = append(out, s)
	}
	if s, ok := b.section2016(); ok {
		out = append(out, s)
	}
	if s, ok := b.section2009(); ok {
		out = append(out, s)
	}
	if s, ok := b.clusterSection(); ok {
		out = append(out, s)
	}
	if s, ok := b.runsSection(); ok {
		out = append(out, s)
	}
	return out, nil
}

// groups lists the groups of every sweep in table order; with groups
// of the baseline first. A cross-check is no group (analysis.Summary.Groups).
func (b *chartBuilder) groups(keep func(analysis.Cell) bool) []analysis.Group {
	var gs []analysis.Group
	for _, sw := range b.sweeps {
		for _, c := range sw.Summary.Cells {
			if keep(c) && !sw.Summary.CrossCheck(c) && !slices.Contains(gs, c.Group) {
				gs = append(gs, c.Group)
			}
		}
	}
	slices.SortStableFunc(gs, analysis.CompareGroups)
	return gs
}

// topologies lists the topologies of every sweep in report order.
func (b *chartBuilder) topologies(keep func(analysis.Cell) bool) []string {
	var ts []string
	for _, sw := range b.sweeps {
		for _, c := range sw.Summary.Cells {
			if keep(c) && !slices.Contains(ts, c.Topology) {
				ts = append(ts, c.Topology)
			}
		}
	}
	return ts
}

// topoColor gives a topology the same colour on every chart.
func (b *chartBuilder) topoColor(t string) string {
	return paletteColor(slices.Index(b.topologies(func(analysis.Cell) bool { return true }), t))
}

func groupLabel(g analysis.Group) string {
	if l := g.String(); l != "" {
		return l
	}
	return "all runs"
}

// ratioSection is the ratio chart: each topology's ratio to standalone
// with its 95% interval, per group (and sweep), beside 2013's.
func (b *chartBuilder) ratioSection() (htmlSection, bool) {
	has := func(c analysis.Cell) bool {
		return !topology.IsBaseline(c.Topology) && c.RatioToStandalone != nil && !openLoop(c.Group)
	}
	cats := b.topologies(has)
	if len(cats) == 0 {
		return htmlSection{}, false
	}
	groups := b.groups(has)
	spec := chartSpec{Kind: "cat", Title: "Ratio to standalone", XLabel: "topology", YLabel: "req/s ÷ standalone's", Cats: cats, YFmt: "ratio", Ref: num(1)}
	table := htmlTable{Head: []string{"topology"}, Num: []bool{false}}
	for i := range cats {
		table.Rows = append(table.Rows, []string{cats[i]})
	}
	for _, ser := range b.measuredRatioSeries(cats, groups) {
		addRatioSeries(&spec, &table, ser, ratioWithInterval)
	}
	for _, ser := range ratio2013Series(cats, groups) {
		addRatioSeries(&spec, &table, ser, ratioAlone)
	}
	caption := "Each topology's req/s over standalone's in the same group, with the 95% interval of the ratio (whiskers; none where the runs are too few), beside the 2013 run's ratios (diamonds). The line at 1 is standalone."
	if len(b.sweeps) > 1 {
		caption += " Filled markers are the baseline (A), rings the other sweeps."
	}
	sec := htmlSection{ID: "ratios", Title: "Ratios to standalone, and 2013's", Figures: []htmlFigure{b.add(spec, caption, table)}}
	src, _, _ := analysis.Reference2013()
	sec.Source = src
	return sec, true
}

// addRatioSeries puts a series in the next slot of the ratio chart and
// its values, printed by cell, in a column of the chart's table.
func addRatioSeries(spec *chartSpec, table *htmlTable, ser chartSeries, cell func(chartSeries, int) string) {
	ser.Slot = spec.Slots
	spec.Series = append(spec.Series, ser)
	spec.Slots++
	table.Head, table.Num = append(table.Head, ser.Label), append(table.Num, true)
	for i := range table.Rows {
		table.Rows[i] = append(table.Rows[i], cell(ser, i))
	}
}

// ratioWithInterval prints a measured ratio with its interval.
func ratioWithInterval(ser chartSeries, i int) string {
	if ser.Y[i] == nil {
		return "–"
	}
	v := fmt.Sprintf("%.2f", *ser.Y[i])
	if ser.Lo[i] != nil {
		return v + fmt.Sprintf(" (%.2f–%.2f)", *ser.Lo[i], *ser.Hi[i])
	}
	return v + " (interval unknown)"
}

// ratioAlone prints a ratio that has no interval (2013's).
func ratioAlone(ser chartSeries, i int) string {
	if ser.Y[i] == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *ser.Y[i])
}

// measuredRatioSeries is a series per sweep and group that has a ratio
// for at least one of cats, in chart order.
func (b *chartBuilder) measuredRatioSeries(cats []string, groups []analysis.Group) []chartSeries {
	var out []chartSeries
	for si, sw := range b.sweeps {
		for gi, g := range groups {
			ser := chartSeries{Label: b.prefix(si) + groupLabel(g), Color: paletteColor(gi), Style: "dot"}
			if si > 0 {
				ser.Style = "ring"
			}
			any := false
			for _, t := range cats {
				c, ok := sw.Summary.Cell(analysis.Key{Group: g, Topology: t})
				if !ok || c.RatioToStandalone == nil {
					ser.Y, ser.Lo, ser.Hi = append(ser.Y, nil), append(ser.Lo, nil), append(ser.Hi, nil)
					continue
				}
				r := c.RatioToStandalone
				any = true
				ser.Y = append(ser.Y, num(r.Center))
				if r.Known() {
					ser.Lo, ser.Hi = append(ser.Lo, num(*r.Lo)), append(ser.Hi, num(*r.Hi))
				} else {
					ser.Lo, ser.Hi = append(ser.Lo, nil), append(ser.Hi, nil)
				}
			}
			if any {
				out = append(out, ser)
			}
		}
	}
	return out
}

// ratio2013Series is 2013's ratios at the GOMAXPROCS values measured, a
// series each, coloured as the first group of that GOMAXPROCS.
func ratio2013Series(cats []string, groups []analysis.Group) []chartSeries {
	_, rows, err := analysis.Reference2013()
	if err != nil {
		panic(err) // embedded and tested
	}
	var procs []int
	for _, g := range groups {
		if !slices.Contains(procs, g.GOMAXPROCS) {
			procs = append(procs, g.GOMAXPROCS)
		}
	}
	var out []chartSeries
	for _, gp := range procs {
		std := 0.0
		for _, r := range rows {
			if r.GOMAXPROCS == gp && topology.IsBaseline(r.Topology) {
				std = r.ReqPerSec
			}
		}
		ser := chartSeries{Label: fmt.Sprintf("2013, GOMAXPROCS=%d", gp), Color: "#555555", Style: "diamond"}
		any := false
		for _, t := range cats {
			var v *float64
			for _, r := range rows {
				if r.GOMAXPROCS == gp && r.Topology == t && std > 0 {
					v, any = num(r.ReqPerSec/std), true
				}
			}
			ser.Y = append(ser.Y, v)
		}
		if !any {
			continue
		}
		if gi := slices.IndexFunc(groups, func(g analysis.Group) bool { return g.GOMAXPROCS == gp }); gi >= 0 {
			ser.Color = paletteColor(gi)
		}
		out = append(out, ser)
	}
	return out
}

// cpuSection has a chart per group: CPU µs per request, nginx and the
// server stacked, the load generator beside.
func (b *chartBuilder) cpuSection() (htmlSection, bool) {
	has := func(c analysis.Cell) bool { return c.CPU != nil }
	groups := b.groups(has)
	if len(groups) == 0 {
		return htmlSection{}, false
	}
	sec := htmlSection{ID: "cpu", Title: "CPU per request", Intro: []string{
		"CPU time (user and system, from /proc) of nginx (master and workers) and of the server, stacked: what a request costs on the server side; the load generator's beside it. Medians over runs."}}
	light := []string{"#a0cbe8", "#ffbe7d", "#d7d2cf"}
	for _, g := range groups {
		cats := b.topologies(func(c analysis.Cell) bool { return c.Group == g && c.CPU != nil })
		spec := chartSpec{Kind: "cat", Title: "CPU µs per request, " + groupLabel(g), XLabel: "topology", YLabel: "CPU µs per request", Cats: cats, YFmt: "us", Slots: 2 * len(b.sweeps)}
		table := htmlTable{Head: []string{"topology"}, Num: []bool{false}}
		for _, t := range cats {
			table.Rows = append(table.Rows, []string{t})
		}
		for si, sw := range b.sweeps {
			colors := []string{paletteColor(0), paletteColor(1), paletteColor(9)}
			if si > 0 {
				colors = light
			}
			p := b.prefix(si)
			server := chartSeries{Label: p + "server", Color: colors[1], Style: "bar", Slot: 2 * si}
			ngx := chartSeries{Label: p + "nginx", Color: colors[0], Style: "bar", Slot: 2 * si}
			ld := chartSeries{Label: p + "load generator", Color: colors[2], Style: "bar", Slot: 2*si + 1}
			any := false
			for i, t := range cats {
				c, ok := sw.Summary.Cell(analysis.Key{Group: g, Topology: t})
				if !ok || c.CPU == nil {
					server.Y, server.Base, ngx.Y, ld.Y = append(server.Y, nil), append(server.Base, nil), append(ngx.Y, nil), append(ld.Y, nil)
					ngx.Lo, ngx.Hi, server.Lo, server.Hi = append(ngx.Lo, nil), append(ngx.Hi, nil), append(server.Lo, nil), append(server.Hi, nil)
					table.Rows[i] = append(table.Rows[i], "–", "–", "–")
					continue
				}
				any = true
				// A group not measured draws no bar and reads "–".
				n, sv, l := zeroIfNaN(c.CPU.Nginx.Median()), zeroIfNaN(c.CPU.Server.Median()), c.CPU.Load.Center
				ngx.Y = append(ngx.Y, num(n))
				server.Base, server.Y = append(server.Base, num(n)), append(server.Y, num(sig4(n)+sig4(sv)))
				ld.Y = append(ld.Y, num(l))
				nlo, nhi := cpuWhiskers(c, c.CPU.Nginx, 0)
				slo, shi := cpuWhiskers(c, c.CPU.Server, sig4(n))
				ngx.Lo, ngx.Hi, server.Lo, server.Hi = append(ngx.Lo, nlo), append(ngx.Hi, nhi), append(server.Lo, slo), append(server.Hi, shi)
				table.Rows[i] = append(table.Rows[i], cpuFigure(c, c.CPU.Nginx), cpuFigure(c, c.CPU.Server), numfmt.Micros(l))
			}
			for _, sr := range []*chartSeries{&ngx, &server} {
				if !slices.ContainsFunc(sr.Lo, func(v *float64) bool { return v != nil }) {
					sr.Lo, sr.Hi = nil, nil
				}
			}
			if any {
				spec.Series = append(spec.Series, ngx, server, ld)
			}
			table.Head = append(table.Head, p+"nginx µs", p+"server µs", p+"load generator µs")
			table.Num = append(table.Num, true, true, true)
		}
		caption := "CPU µs per request, " + groupLabel(g) + ": nginx (bottom) and the server (on top) stacked, the load generator beside."
		if b.sweeps[0].Summary.Env.Plan.Paired != nil {
			caption += " In a pair design nginx's and the server's are means over the windows, with their 95% intervals (whiskers)."
		}
		if len(b.sweeps) > 1 {
			caption += " Each sweep's pair of bars in turn, the baseline (A) first, the others lighter."
		}
		sec.Figures = append(sec.Figures, b.add(spec, caption, table))
	}
	return sec, true
}

// cpuWhiskers are a pair design's interval of one process group's CPU
// per request, raised by base where its bar stacks on another; nil
// elsewhere, and where it is unknown.
func cpuWhiskers(c analysis.Cell, iv *analysis.Interval, base float64) (lo, hi *float64) {
	if len(c.Pairs) == 0 && c.AA == nil || iv == nil || !iv.Known() {
		return nil, nil
	}
	return num(base + *iv.Lo), num(base + *iv.Hi)
}

// cpuFigure is one process group's CPU per request for the chart's
// table, with a pair design's interval.
func cpuFigure(c analysis.Cell, iv *analysis.Interval) string {
	if lo, _ := cpuWhiskers(c, iv, 0); lo != nil {
		return numfmt.Micros(iv.Center) + " " + pm(*iv)
	}
	return numfmt.Micros(iv.Median())
}

// nines are the spectrum's percentiles: 0, 90%, 99% ... 99.999%.
var ninesLabels = []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%"}

// spectrumSection plots latency against percentile from the built-in
// engine's HDR histograms (merged over repetitions), on an axis of
// nines, log10(1/(1-p)), one line per topology; its table holds the
// percentiles.
func (b *chartBuilder) spectrumSection() (htmlSection, bool, error) {
	sec := htmlSection{ID: "latency", Title: "Latency by percentile (built-in engine)", Intro: []string{
		"From the runs' HDR histograms (1 µs to 60 s, 3 significant digits), merged over repetitions. The x axis is the number of nines, log10(1/(1−p)): 90%, 99%, 99.9% … are evenly spaced, out to 99.999% or as far as the samples reach; the y axis is logarithmic. In open loop latency runs from each request's intended start. Hover for exact values."}}
	for _, g := range b.engineGroups() {
		lines, table, err := b.spectrumLines(g)
		if err != nil {
			return htmlSection{}, false, err
		}
		if len(lines) == 0 {
			continue
		}
		caption := "Latency by percentile, " + groupLabel(g) + ": one line per topology"
		if len(b.sweeps) > 1 {
			caption += ", the baseline (A) solid, the others dashed"
		}
		caption += ". The table holds the percentiles; p99.99 and beyond need that many requests."
		sec.Figures = append(sec.Figures, b.add(spectrumChart(g, lines), caption, table))
	}
	if len(sec.Figures) == 0 {
		return htmlSection{}, false, nil
	}
	// The engine's own table: target and achieved rate, late and dropped.
	for si, sw := range b.sweeps {
		for _, t := range (summary{sw.Summary}).latencyTables() {
			sec.Tables = append(sec.Tables, htmlTable{Caption: b.prefix(si) + "Built-in engine, " + t.Heading,
				Head: []string{"topology", "target req/s", "achieved req/s", "requests", "n", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max", "errors c/r/w/t", "non-2xx", "late", "dropped"},
				Num:  []bool{false, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true},
				Rows: t.Rows})
		}
	}
	return sec, true, nil
}

// engineGroups lists the groups the built-in engine ran in, in table order.
func (b *chartBuilder) engineGroups() []analysis.Group {
	var groups []analysis.Group
	for _, sw := range b.sweeps {
		for _, c := range sw.Summary.Engine {
			if !slices.Contains(groups, c.Group) {
				groups = append(groups, c.Group)
			}
		}
	}
	slices.SortStableFunc(groups, analysis.CompareGroups)
	return groups
}

// spectrumLine is one topology's merged histogram on the spectrum chart,
// reaching top nines.
type spectrumLine struct {
	label string
	color string
	dash  bool
	h     *hdrhistogram.Histogram
	top   float64
}

// spectrumLines merges each sweep's histograms of group g into a line
// per topology, and their percentiles into the chart's table.
func (b *chartBuilder) spectrumLines(g analysis.Group) ([]spectrumLine, htmlTable, error) {
	var lines []spectrumLine
	table := htmlTable{Head: []string{"topology", "requests", "p50", "p90", "p99", "p99.9", "p99.99", "p99.999", "max"},
		Num: []bool{false, true, true, true, true, true, true, true, true}}
	for si, sw := range b.sweeps {
		for _, c := range sw.Summary.Engine {
			if c.Group != g {
				continue
			}
			if sw.Dir == "" {
				continue
			}
			h, err := mergeHistograms(sw.Dir, c.Histograms)
			if err != nil {
				return nil, htmlTable{}, fmt.Errorf("html report: histograms of %s: %w", c.Key, err)
			}
			if h == nil || h.TotalCount() == 0 {
				continue
			}
			top := math.Min(maxNines, math.Log10(float64(h.TotalCount())))
			lines = append(lines, spectrumLine{label: b.prefix(si) + c.Topology, color: b.topoColor(c.Topology), dash: si > 0, h: h, top: top})
			table.Rows = append(table.Rows, percentileRow(b.prefix(si)+c.Topology, h))
		}
	}
	return lines, table, nil
}

// percentileRow is a histogram's row of the spectrum's table; a
// percentile beyond p99.9 that the requests are too few for is "–".
func percentileRow(label string, h *hdrhistogram.Histogram) []string {
	row := []string{label, numfmt.Count(float64(h.TotalCount()))}
	for _, q := range []float64{50, 90, 99, 99.9, 99.99, 99.999} {
		if float64(h.TotalCount())*(1-q/100) < 1 && q > 99.9 {
			row = append(row, "–")
			continue
		}
		row = append(row, numfmt.Dur(time.Duration(h.ValueAtQuantile(q))*time.Microsecond))
	}
	return append(row, numfmt.Dur(time.Duration(h.Max())*time.Microsecond))
}

// spectrumChart draws group g's lines on an axis of nines: a grid of
// 0.05 nines up to the furthest line, and each line's end.
func spectrumChart(g analysis.Group, lines []spectrumLine) chartSpec {
	var xs []float64
	reach := 0.0
	for _, l := range lines {
		reach = max(reach, l.top)
	}
	for k := 0; float64(k)*0.05 <= reach+1e-9; k++ {
		xs = append(xs, sig4(float64(k)*0.05))
	}
	for _, l := range lines {
		xs = append(xs, sig4(l.top))
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	spec := chartSpec{Kind: "xy", Title: "Latency by percentile, " + groupLabel(g), XLabel: "percentile", YLabel: "latency",
		X: xs, XFmt: "nines", YFmt: "ms", YLog: true}
	for n, l := range ninesLabels {
		spec.XTicks = append(spec.XTicks, chartTick{V: float64(n), L: l})
	}
	for _, l := range lines {
		spec.Series = append(spec.Series, spectrumSeries(l, xs))
	}
	return spec
}

// spectrumSeries is a line's latency in ms at each x of the chart, its
// maximum at its end and nothing beyond.
func spectrumSeries(l spectrumLine, xs []float64) chartSeries {
	ser := chartSeries{Label: l.label, Color: l.color, Style: "line"}
	if l.dash {
		ser.Style = "dash"
	}
	top := sig4(l.top)
	for _, x := range xs {
		switch {
		case x > top+1e-9:
			ser.Y = append(ser.Y, nil)
		case x >= top-1e-9:
			ser.Y = append(ser.Y, num(float64(l.h.Max())/1000))
		default:
			q := 100 * (1 - math.Pow(10, -x))
			ser.Y = append(ser.Y, num(float64(l.h.ValueAtQuantile(q))/1000))
		}
	}
	return ser
}

// section2016 sets the 2016 JVM study's table beside each sweep's rows.
func (b *chartBuilder) section2016() (htmlSection, bool) {
	sec := htmlSection{ID: "jvm2016", Title: "Compared with the 2016 JVM study", Intro: []string{
		"The 2016 study drove each JVM server on its own machine at 1k req/s with a 1 s wait (slow), 10k req/s with 100 ms (high-conc) and 100k req/s with none (overhead), and probed the concurrency with 54,000 requests at once. This sweep ran the same schedules here, scaled by -scale; its latency by percentile is charted above, per scenario."}}
	for si, sw := range b.sweeps {
		src, rows := (summary{sw.Summary}).table2016()
		if rows == nil {
			continue
		}
		if sec.Source == nil {
			sec.Source = unmd(src)
		}
		t := htmlTable{Caption: b.prefix(si) + "this sweep's rows first, then 2016's",
			Head: []string{"server", "API", "concurrency max", "concurrency errors", "slow avg ms", "slow max ms", "slow errors",
				"high-conc avg ms", "high-conc max ms", "high-conc errors", "overhead avg ms", "overhead max ms", "overhead errors"},
			Num: []bool{false, false, true, true, true, true, true, true, true, true, true, true, true}}
		for _, r := range rows {
			t.Rows = append(t.Rows, unmd(r))
			t.Marked = append(t.Marked, !strings.HasPrefix(r[0], "2016"))
		}
		sec.Tables = append(sec.Tables, t)
	}
	return sec, len(sec.Tables) > 0
}

// section2009 sets req/s and p99 per concurrency beside the 2009
// servers', with two charts against the connections.
func (b *chartBuilder) section2009() (htmlSection, bool) {
	sec := htmlSection{ID: "servers2009", Title: "Compared with the 2009 hello-world servers", Intro: []string{
		"The 2009 rows are ApacheBench on other hardware; compare the shape of each row — how req/s and p99 move as concurrency grows — not the figures."}}
	conns := b.tables2009(&sec)
	if len(sec.Tables) == 0 {
		return htmlSection{}, false
	}
	slices.Sort(conns)
	for _, fig := range figures2009 {
		spec, table := b.chart2009(fig, conns)
		if len(spec.Series) == 0 {
			continue
		}
		axes := "connections on a logarithmic axis"
		if spec.YLog {
			axes = "both axes logarithmic"
		}
		caption := "This sweep's " + fig.title + ", " + axes + ", one line per topology"
		if len(b.sweeps) > 1 {
			caption += "; the other sweeps dashed"
		}
		sec.Figures = append(sec.Figures, b.add(spec, caption+".", table))
	}
	return sec, true
}

// tables2009 adds each sweep's table beside 2009's to sec and returns
// the connections the sweeps ran at, unsorted.
func (b *chartBuilder) tables2009(sec *htmlSection) []int {
	var conns []int
	for si, sw := range b.sweeps {
		src, head, rows := (summary{sw.Summary}).table2009()
		if rows == nil {
			continue
		}
		if sec.Source == nil {
			sec.Source = unmd(src)
		}
		t := htmlTable{Caption: b.prefix(si) + "req/s and p99 by concurrency", Head: head, Num: []bool{false}}
		for range head[1:] {
			t.Num = append(t.Num, true)
		}
		for _, r := range rows {
			t.Rows = append(t.Rows, unmd(r))
			t.Marked = append(t.Marked, !strings.HasPrefix(r[0], "2009"))
		}
		sec.Tables = append(sec.Tables, t)
		for _, c := range sw.Summary.Env.Plan.Connections {
			if !slices.Contains(conns, c) {
				conns = append(conns, c)
			}
		}
	}
	return conns
}

// figure2009 is one chart against the connections: what it plots of a
// cell, and whether the cell has it.
type figure2009 struct {
	title, ylabel, yfmt string
	value               func(analysis.Cell) (float64, bool)
}

var figures2009 = []figure2009{
	{"req/s against concurrency", "req/s (median)", "count", func(c analysis.Cell) (float64, bool) { return c.ReqPerSec.Median, c.Reps > 0 }},
	{"p99 latency against concurrency", "p99 latency (median over runs)", "ms", func(c analysis.Cell) (float64, bool) {
		return float64(c.Latency.P99) / 1e6, c.Latency.Runs > 0 && c.Latency.P99 > 0
	}},
}

// connLine is a line of a chart against the connections: a group but
// for its connections, and a topology.
type connLine struct {
	g analysis.Group
	t string
}

// connLines lists a sweep's lines in the order of its cells.
func connLines(s analysis.Summary) []connLine {
	var keys []connLine
	for _, c := range s.Cells {
		g := c.Group
		g.Connections = 0
		if k := (connLine{g, c.Topology}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// chart2009 is fig's chart and table: a line per sweep, group and
// topology that has a value at one of conns at least.
func (b *chartBuilder) chart2009(fig figure2009, conns []int) (chartSpec, htmlTable) {
	spec := chartSpec{Kind: "xy", Title: fig.title, XLabel: "connections", YLabel: fig.ylabel, XLog: true, YLog: fig.yfmt == "ms", XFmt: "int", YFmt: fig.yfmt}
	for _, c := range conns {
		spec.X = append(spec.X, float64(c))
		spec.XTicks = append(spec.XTicks, chartTick{V: float64(c), L: strconv.Itoa(c)})
	}
	table := htmlTable{Head: []string{"connections"}, Num: []bool{true}}
	for _, c := range conns {
		table.Rows = append(table.Rows, []string{strconv.Itoa(c)})
	}
	n := 0
	for si, sw := range b.sweeps {
		for _, k := range connLines(sw.Summary) {
			label := b.prefix(si) + k.t
			if gs := k.g.String(); gs != "" {
				label += " " + gs
			}
			ser := chartSeries{Label: label, Color: paletteColor(n), Style: "line"}
			if si > 0 {
				ser.Style = "dash"
			}
			n++
			cells, any := fig.line(sw.Summary, k, conns, &ser)
			if !any {
				continue
			}
			spec.Series = append(spec.Series, ser)
			table.Head, table.Num = append(table.Head, label), append(table.Num, true)
			for i := range table.Rows {
				table.Rows[i] = append(table.Rows[i], cells[i])
			}
		}
	}
	return spec, table
}

// line fills ser with line k's values at each of conns and returns
// them printed for the table, and whether any was there.
func (fig figure2009) line(s analysis.Summary, k connLine, conns []int, ser *chartSeries) ([]string, bool) {
	var cells []string
	any := false
	for _, conn := range conns {
		g := k.g
		g.Connections = conn
		c, ok := s.Cell(analysis.Key{Group: g, Topology: k.t})
		v, has := 0.0, false
		if ok {
			v, has = fig.value(c)
		}
		if !has {
			ser.Y = append(ser.Y, nil)
			cells = append(cells, "–")
			continue
		}
		any = true
		ser.Y = append(ser.Y, num(v))
		if fig.yfmt == "ms" {
			cells = append(cells, numfmt.Dur(c.Latency.P99))
		} else {
			cells = append(cells, numfmt.Count(v))
		}
	}
	return cells, any
}

// maxRunPoints bounds the points of a run series: beyond it rounds are
// sampled evenly (flagged ones always kept).
const maxRunPoints = 200

// runsSection charts each run's req/s over the rounds, per sweep and
// group, one line per topology: drift across rounds, noisy runs and the
// runs flagged (noisy, unsettled, retried) ringed.
func (b *chartBuilder) runsSection() (htmlSection, bool) {
	sec := htmlSection{ID: "runs", Title: "Every run, round by round", Intro: []string{
		"Each run's req/s in the order of the rounds (repetitions interleave the topologies, so drift of the machine shows as lines moving together). Runs ringed in black were flagged: the machine was busy (noisy), the servers were not idle at the start (unsettled), or the run was measured a second time (retried). Failed runs leave a gap."}}
	for si, sw := range b.sweeps {
		for _, g := range sw.Summary.Groups() {
			byTop, rounds := runPoints(sw, g)
			// One round has no drift to show; a probe's rate is set by
			// its wait.
			if rounds < 2 || g.Schedule.Probe {
				continue
			}
			keep := sampleRounds(rounds, func(rep int) bool {
				for _, ps := range byTop {
					if len(ps[rep].flagged) > 0 {
						return true
					}
				}
				return false
			})
			spec, table := b.runsChart(si, sw.Summary, g, byTop, keep)
			caption := b.prefix(si) + "req/s of every run, " + groupLabel(g) + ", by round; flagged runs ringed in black."
			if len(keep) < rounds {
				caption += fmt.Sprintf(" %d of %d rounds shown, evenly sampled, flagged ones kept.", len(keep), rounds)
			}
			sec.Figures = append(sec.Figures, b.add(spec, caption, table))
		}
	}
	return sec, len(sec.Figures) > 0
}

// runPoint is one run on the runs chart: its rate unless it failed, its
// errors, and why it was flagged.
type runPoint struct {
	rate    float64
	ok      bool
	errors  string
	flagged []string
}

// runPoints gathers a sweep's runs of group g by topology and round, and
// the last round.
func runPoints(sw Sweep, g analysis.Group) (map[string]map[int]runPoint, int) {
	byTop := map[string]map[int]runPoint{}
	rounds := 0
	for _, r := range sw.Runs {
		if analysis.KeyOf(sw.Summary.Env.Plan, r).Group != g {
			continue
		}
		p := runPoint{}
		if !r.Failed() {
			f := r.Figures
			p.rate, p.ok = f.ReqPerSec, true
			if f.Errors.Total() > 0 {
				p.errors = f.Errors.String()
			}
		}
		if r.Noise != nil && r.Noise.Flagged != "" {
			p.flagged = append(p.flagged, "noisy")
		}
		if r.Settle != nil && !r.Settle.Settled {
			p.flagged = append(p.flagged, "unsettled")
		}
		if r.Retried != "" {
			p.flagged = append(p.flagged, "retried")
		}
		if byTop[r.Topology] == nil {
			byTop[r.Topology] = map[int]runPoint{}
		}
		byTop[r.Topology][r.Rep] = p
		rounds = max(rounds, r.Rep)
	}
	return byTop, rounds
}

// runsChart is the chart and table of group g's runs at the rounds
// keep, a line per topology in the order of s's rows.
func (b *chartBuilder) runsChart(si int, s analysis.Summary, g analysis.Group, byTop map[string]map[int]runPoint, keep []int) (chartSpec, htmlTable) {
	spec := chartSpec{Kind: "xy", Title: b.prefix(si) + "req/s per run, " + groupLabel(g), XLabel: "round", YLabel: "req/s", XFmt: "int", YFmt: "count"}
	for _, rep := range keep {
		spec.X = append(spec.X, float64(rep))
	}
	if len(keep) <= 24 {
		for _, rep := range keep {
			spec.XTicks = append(spec.XTicks, chartTick{V: float64(rep), L: strconv.Itoa(rep)})
		}
	}
	table := htmlTable{Head: []string{"round"}, Num: []bool{true}}
	for _, rep := range keep {
		table.Rows = append(table.Rows, []string{strconv.Itoa(rep)})
	}
	for _, c := range s.Rows(g) {
		ps := byTop[c.Topology]
		ser := chartSeries{Label: c.Topology, Color: b.topoColor(c.Topology), Style: "line"}
		for i, rep := range keep {
			p, ran := ps[rep]
			ser.Y = append(ser.Y, p.value(ran))
			cell := p.cell(ran)
			if len(p.flagged) > 0 {
				ser.Mark = append(ser.Mark, i)
				cell += " (" + strings.Join(p.flagged, ", ") + ")"
			}
			table.Rows[i] = append(table.Rows[i], cell)
		}
		spec.Series = append(spec.Series, ser)
		table.Head, table.Num = append(table.Head, c.Topology), append(table.Num, true)
	}
	return spec, table
}

// value is the point's rate on the chart: none where the run did not
// run or failed.
func (p runPoint) value(ran bool) *float64 {
	if !ran || !p.ok {
		return nil
	}
	return num(p.rate)
}

// cell prints the point for the runs table, without its flags.
func (p runPoint) cell(ran bool) string {
	switch {
	case !ran:
		return "–"
	case !p.ok:
		return "failed"
	}
	cell := numfmt.Count(p.rate)
	if p.errors != "" {
		cell += " (" + p.errors + ")"
	}
	return cell
}

// sampleRounds lists the rounds 1..n, or at most maxRunPoints of them
// evenly spaced plus those flagged says to keep.
func sampleRounds(n int, flagged func(int) bool) []int {
	var out []int
	step := (n + maxRunPoints - 1) / maxRunPoints
	for rep := 1; rep <= n; rep++ {
		if step <= 1 || (rep-1)%step == 0 || rep == n || flagged(rep) {
			out = append(out, rep)
		}
	}
	return out
}

// unmd turns markdown table cells back into text: bold marks and
// escaped pipes.
func unmd(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		c = strings.ReplaceAll(c, "**", "")
		out[i] = strings.ReplaceAll(c, `\|`, "|")
	}
	return out
}

// costSection is what each path costs a handler that does work (-work):
// the sentences and tables of summary.md's section, and the ratio against
// the work with the CPU model's line, dashed, one pair per topology.
func (b *chartBuilder) costSection() (htmlSection, bool) {
	sec := htmlSection{ID: "cost", Title: "What each path costs a handler that does work", Intro: []string{
		"Each cell's handler spent the work shown on CPU before answering (cmd/hello's ?work=). With the servers' CPUs saturated, req/s ≈ CPUs ÷ (nginx µs + server µs per request): the model line is that prediction from the cells without work, the measured ratio the figure to trust."}}
	head := []string{"topology", "work", "vs standalone (measured)", "model", "nginx µs/req", "server µs/req", "added µs/req", "open-loop req/s", "p50 added", "p99 added"}
	for si, sw := range b.sweeps {
		v := (summary{sw.Summary}).costView()
		for _, line := range v.CostSentences {
			sec.Intro = append(sec.Intro, b.prefix(si)+unmd([]string{line})[0])
		}
		for _, t := range v.CostTables {
			tab := htmlTable{Caption: b.prefix(si) + t.Heading, Head: head, Num: []bool{false, true, true, true, true, true, true, true, true, true}}
			for _, r := range t.Rows {
				tab.Rows = append(tab.Rows, unmd(r))
			}
			sec.Tables = append(sec.Tables, tab)
		}
		overheads := sw.Summary.Overheads()
		if si > 0 || len(overheads) == 0 {
			continue // the chart is the baseline's
		}
		var works []time.Duration
		for _, o := range overheads {
			for _, c := range o.Costs {
				if !slices.Contains(works, c.Work) {
					works = append(works, c.Work)
				}
			}
		}
		slices.Sort(works)
		least := 10.0
		for _, w := range works {
			if w > 0 {
				least = us(w)
				break
			}
		}
		spec := chartSpec{Kind: "xy", Title: "Ratio to standalone against the handler's work", XLabel: "handler work per request (µs of CPU; 0 at the left edge)",
			YLabel: "req/s over standalone's", XLog: true, XFmt: "us", YFmt: "ratio", Ref: num(1)}
		table := htmlTable{Head: []string{"work"}, Num: []bool{true}}
		for _, w := range works {
			x := us(w)
			if w == 0 {
				x = least / 10
			}
			spec.X = append(spec.X, x)
			spec.XTicks = append(spec.XTicks, chartTick{V: x, L: fmtWork(w)})
			table.Rows = append(table.Rows, []string{fmtWork(w)})
		}
		for i, o := range overheads {
			label := o.Topology
			if overheads[0].Group != overheads[len(overheads)-1].Group {
				label += " (" + groupLabel(o.Group) + ")"
			}
			measured := chartSeries{Label: label, Color: paletteColor(i), Style: "line"}
			model := chartSeries{Label: label + ", CPU model", Color: paletteColor(i), Style: "dash"}
			table.Head = append(table.Head, label, label+" model")
			table.Num = append(table.Num, true, true)
			for wi, w := range works {
				var m, p *float64
				for _, c := range o.Costs {
					if c.Work == w && c.Ratio != nil {
						m = num(c.Ratio.Center)
					}
				}
				if r := o.ModelRatio(w); !math.IsNaN(r) {
					p = num(r)
				}
				measured.Y, model.Y = append(measured.Y, m), append(model.Y, p)
				table.Rows[wi] = append(table.Rows[wi], fmtPtr(m), fmtPtr(p))
			}
			spec.Series = append(spec.Series, measured, model)
		}
		sec.Figures = append(sec.Figures, b.add(spec, "Ratio to standalone against the handler's work (log axis), each topology measured (solid) and as the CPU model predicts (dashed).", table))
	}
	if len(sec.Tables) == 0 {
		return htmlSection{}, false
	}
	return sec, true
}

func fmtPtr(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

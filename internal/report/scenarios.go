package report

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// latencyTable is one group of the built-in engine's cells: percentiles
// to p99.99, late and dropped requests.
func (s summary) latencyTables() []resultTable {
	var tables []resultTable
	var last *analysis.Group
	for _, c := range s.Engine {
		if last == nil || *last != c.Group {
			g := c.Group
			last = &g
			tables = append(tables, resultTable{Heading: g.Heading(s.ServerCPUs, s.Env.CPUs)})
		}
		t := &tables[len(tables)-1]
		lat := func(d time.Duration) string {
			if c.Max == 0 {
				return "–"
			}
			return numfmt.Dur(d)
		}
		target := "closed loop"
		if c.TargetRate > 0 {
			target = numfmt.Count(c.TargetRate)
		}
		if c.Schedule.Probe {
			target = fmt.Sprintf("probe: %d of %d concurrent", c.Concurrent, c.Sent)
		}
		e := c.Errors
		t.Rows = append(t.Rows, []string{
			c.Topology, target, numfmt.Count(c.ReqPerSec), numfmt.Count(float64(c.Requests)), fmt.Sprint(c.Runs),
			lat(c.Mean), lat(c.P50), lat(c.P90), lat(c.P99), lat(c.P999), lat(c.P9999), lat(c.Max),
			fmt.Sprintf("%d/%d/%d/%d", e.Connect, e.Read, e.Write, e.Timeout), fmt.Sprint(e.Status),
			fmt.Sprint(c.Late), fmt.Sprint(c.Dropped),
		})
	}
	return tables
}

// latencyCell finds the built-in engine's cell of a topology in a
// scenario, at the GOMAXPROCS given.
func (s summary) latencyCell(gomaxprocs int, topology, scenario string) (analysis.LatencyCell, bool) {
	for _, c := range s.Engine {
		if c.GOMAXPROCS == gomaxprocs && c.Topology == topology && c.Schedule.Name == scenario {
			return c, true
		}
	}
	return analysis.LatencyCell{}, false
}

// has2016 reports whether the sweep ran any of the 2016 scenarios.
func (s summary) has2016() bool {
	for _, c := range s.Engine {
		switch c.Schedule.Name {
		case analysis.Slow2016, analysis.HighConc2016, analysis.Overhead2016, analysis.Probe2016:
			return true
		}
	}
	return false
}

// table2016 is the 2016 study's table with this sweep's rows on top:
// concurrency max and errors of the probe, then average, maximum and
// errors of each target-rate scenario.
func (s summary) table2016() (source []string, rows [][]string) {
	if !s.has2016() {
		return nil, nil
	}
	src, recs := analysis.Seed2016()
	for _, l := range src {
		source = append(source, md(l))
	}
	var procs []int
	for _, c := range s.Engine {
		if !slices.Contains(procs, c.GOMAXPROCS) {
			procs = append(procs, c.GOMAXPROCS)
		}
	}
	var tops []string
	for _, c := range s.Engine {
		if !slices.Contains(tops, c.Topology) {
			tops = append(tops, c.Topology)
		}
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	for _, g := range procs {
		for _, t := range tops {
			row := []string{fmt.Sprintf("**topobench %s** (GOMAXPROCS=%d)", t, g), "Go"}
			if c, ok := s.latencyCell(g, t, analysis.Probe2016); ok {
				row = append(row, fmt.Sprintf("%d of %d", c.Concurrent, c.Sent), fmt.Sprint(c.Errors.Total()))
			} else {
				row = append(row, "–", "–")
			}
			for _, sc := range []string{analysis.Slow2016, analysis.HighConc2016, analysis.Overhead2016} {
				c, ok := s.latencyCell(g, t, sc)
				if !ok || c.Max == 0 {
					row = append(row, "–", "–", "–")
					continue
				}
				errs := fmt.Sprint(c.Errors.Total())
				if sc == analysis.HighConc2016 {
					sent := c.Requests + c.Errors.Socket() + c.Dropped
					pct := 0.0
					if sent > 0 {
						pct = 100 * float64(c.Errors.Total()+c.Dropped) / float64(sent)
					}
					errs = fmt.Sprintf("%d (%.1f%%)", c.Errors.Total(), pct)
				}
				if c.Dropped > 0 {
					errs += fmt.Sprintf(", %d dropped", c.Dropped)
				}
				row = append(row, ms(c.Mean), ms(c.Max), errs)
			}
			rows = append(rows, row)
		}
	}
	for _, r := range recs {
		row := []string{"2016: " + r[0], r[1], or(r[2]), or(r[3])}
		row = append(row, or(r[4]), or(r[5]), or(r[6]), or(r[7]), or(r[8]))
		if r[9] != "" {
			row = append(row, r[9]+"%")
		} else {
			row = append(row, "–")
		}
		row = append(row, or(r[10]), or(r[11]), or(r[12]))
		rows = append(rows, row)
	}
	return source, rows
}

// table2009 sets req/s and p99 per concurrency beside the 2009 servers':
// one column pair per concurrency the sweep ran, a row per topology,
// GOMAXPROCS and load, then the 2009 rows.
func (s summary) table2009() (source []string, header []string, rows [][]string) {
	conns := slices.Clone(s.Env.Plan.Connections)
	if len(conns) < 2 {
		return nil, nil, nil
	}
	slices.Sort(conns)
	src, recs := analysis.Seed2009()
	for _, l := range src {
		source = append(source, md(l))
	}
	header = []string{"server"}
	for _, c := range conns {
		header = append(header, fmt.Sprintf("c%d req/s", c), fmt.Sprintf("c%d p99", c))
	}
	for _, k := range connLines(s.Summary) {
		rows = append(rows, s.row2009(k, conns))
	}
	return source, header, append(rows, rows2009(recs, conns)...)
}

// row2009 is line k's row of the 2009 table: its median req/s, marked
// where a run had errors, and p99 at each of conns.
func (s summary) row2009(k connLine, conns []int) []string {
	label := "**topobench " + k.t + "**"
	if g := k.g.String(); g != "" {
		label += " (" + g + ")"
	}
	row := []string{label}
	for _, n := range conns {
		g := k.g
		g.Connections = n
		c, ok := s.Cell(analysis.Key{Group: g, Topology: k.t})
		if !ok || c.Reps == 0 {
			row = append(row, "–", "–")
			continue
		}
		rate := numfmt.Count(c.ReqPerSec.Median)
		if c.Errors.Total() > 0 {
			rate += " (errors)"
		}
		p99 := "–"
		if c.Latency.Runs > 0 {
			p99 = numfmt.Dur(c.Latency.P99)
		}
		row = append(row, rate, p99)
	}
	return row
}

// rows2009 are the 2009 servers' rows at conns, from their records
// (server, concurrency, req/s, p99), in the records' order of servers.
func rows2009(recs [][]string, conns []int) [][]string {
	byServer := map[string]map[int][2]string{}
	var servers []string
	for _, r := range recs {
		n, err := strconv.Atoi(r[1])
		if err != nil {
			continue
		}
		if byServer[r[0]] == nil {
			byServer[r[0]] = map[int][2]string{}
			servers = append(servers, r[0])
		}
		p99 := "–"
		if r[3] != "" {
			p99 = r[3] + " ms"
		}
		rate := "–"
		if v, err := strconv.ParseFloat(r[2], 64); err == nil {
			rate = numfmt.Count(v)
		}
		byServer[r[0]][n] = [2]string{rate, p99}
	}
	var rows [][]string
	for _, sv := range servers {
		row := []string{"2009: " + sv}
		for _, n := range conns {
			v, ok := byServer[sv][n]
			if !ok {
				v = [2]string{"–", "–"}
			}
			row = append(row, v[0], v[1])
		}
		rows = append(rows, row)
	}
	return rows
}

func or(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// scenarioView is the part of summary.md this file renders.
type scenarioView struct {
	// LatencyTables are the built-in engine's groups.
	LatencyTables []resultTable
	// Ref2016Source and Table2016: the 2016 comparison, empty when the
	// sweep ran none of its scenarios.
	Ref2016Source []string
	Table2016     [][]string
	// Ref2009Source, Header2009 and Table2009: the 2009 comparison, empty
	// unless the sweep varied the connections.
	Ref2009Source []string
	Header2009    []string
	Table2009     [][]string
	// LatencyCharts are the latency-by-percentile charts (name without
	// extension, and the group they show); ConcChart the p99 against
	// concurrency chart, empty when there is none.
	LatencyCharts []chartRef
	ConcChart     string
}

type chartRef struct{ Name, Group string }

func (s summary) scenarioView() scenarioView {
	var v scenarioView
	v.LatencyTables = s.latencyTables()
	v.Ref2016Source, v.Table2016 = s.table2016()
	v.Ref2009Source, v.Header2009, v.Table2009 = s.table2009()
	for _, g := range s.latencyGroups() {
		v.LatencyCharts = append(v.LatencyCharts, chartRef{Name: latencyChartName(g), Group: g.String()})
	}
	if s.hasConcChart() {
		v.ConcChart = ConcChart
	}
	return v
}

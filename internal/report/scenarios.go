package report

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// The 2016 JVM study's results and the 2009 hello-world servers'
// comparison, with their source comment lines.
var (
	//go:embed reference/seed-2016-jvm-results.csv
	seed2016 string
	//go:embed reference/seed-2009-hello-servers.csv
	seed2009 string
)

// The 2016 study's target-rate scenarios, by the names the 2016 preset
// gives its schedules (sweep.Scenario).
const (
	Slow2016     = "slow-requests"
	HighConc2016 = "realistic-high-concurrency"
	Overhead2016 = "realistic-overhead"
	Probe2016    = "concurrency-level"
)

// LatencyCell is a cell of the built-in engine over its repetitions: the
// figures wrk cannot give (target rate, late and dropped requests, the
// percentiles to p99.99, the probe's count), and where its histograms
// are.
type LatencyCell struct {
	Key
	Runs       int     `json:"runs"`
	Requests   int64   `json:"requests"`
	TargetRate float64 `json:"target_rate,omitempty"`
	// ReqPerSec is the median achieved rate.
	ReqPerSec float64 `json:"req_per_sec"`
	// Mean to P9999 are medians over runs; Max is the largest of all.
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99.9_ns"`
	P9999 time.Duration `json:"p99.99_ns"`
	Max   time.Duration `json:"max_ns"`
	// Errors, Late and Dropped are summed over runs.
	Errors        results.Errors `json:"errors"`
	Late, Dropped int64
	// Concurrent is the probe's count served concurrently (the smallest
	// over runs), of Sent requests.
	Concurrent int64 `json:"concurrent,omitempty"`
	Sent       int64 `json:"sent,omitempty"`
	// Histograms are the runs' encoded histograms, relative to the
	// results directory.
	Histograms []string `json:"histograms,omitempty"`
}

// latencyCells summarizes the runs of the built-in engine, in table order.
func latencyCells(p results.Plan, runs []results.Run, order map[string]int) []LatencyCell {
	byKey := map[Key][]results.Run{}
	var keys []Key
	for _, r := range runs {
		if r.Failed() || !r.Figures.Histogram {
			continue
		}
		k := keyOf(p, r)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		if c := compareGroups(a.Group, b.Group); c != 0 {
			return c
		}
		return order[a.Topology] - order[b.Topology]
	})
	var out []LatencyCell
	for _, k := range keys {
		c := LatencyCell{Key: k}
		var rates []float64
		var lat [6][]time.Duration
		for i, r := range byKey[k] {
			f := r.Figures
			c.Runs++
			c.Requests += f.Requests
			c.TargetRate = f.TargetRate
			rates = append(rates, f.ReqPerSec)
			c.Errors = c.Errors.Add(f.Errors)
			c.Late += f.Late
			c.Dropped += f.Dropped
			if r.Probe && (i == 0 || f.Concurrent < c.Concurrent) {
				c.Concurrent, c.Sent = f.Concurrent, f.Sent
			}
			if f.Latency {
				for j, d := range []time.Duration{f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999} {
					lat[j] = append(lat[j], d)
				}
				c.Max = max(c.Max, f.Max)
			}
			c.Histograms = append(c.Histograms, filepath.Join(results.RunsDir, r.Name()+load.EncodedExt))
		}
		c.ReqPerSec = median(rates)
		if len(lat[0]) > 0 {
			c.Mean, c.P50, c.P90 = medianDur(lat[0]), medianDur(lat[1]), medianDur(lat[2])
			c.P99, c.P999, c.P9999 = medianDur(lat[3]), medianDur(lat[4]), medianDur(lat[5])
		}
		out = append(out, c)
	}
	return out
}

// latencyTable is one group of the built-in engine's cells: percentiles
// to p99.99, late and dropped requests.
func (s Summary) latencyTables() []resultTable {
	var tables []resultTable
	var last *Group
	for _, c := range s.Engine {
		if last == nil || *last != c.Group {
			g := c.Group
			last = &g
			tables = append(tables, resultTable{Heading: g.heading(s.ServerCPUs, s.Env.CPUs)})
		}
		t := &tables[len(tables)-1]
		lat := func(d time.Duration) string {
			if c.Max == 0 {
				return "–"
			}
			return fmtDur(d)
		}
		target := "closed loop"
		if c.TargetRate > 0 {
			target = fmtCount(c.TargetRate)
		}
		if c.Schedule.Probe {
			target = fmt.Sprintf("probe: %d of %d concurrent", c.Concurrent, c.Sent)
		}
		e := c.Errors
		t.Rows = append(t.Rows, []string{
			c.Topology, target, fmtCount(c.ReqPerSec), fmtCount(float64(c.Requests)), fmt.Sprint(c.Runs),
			lat(c.Mean), lat(c.P50), lat(c.P90), lat(c.P99), lat(c.P999), lat(c.P9999), lat(c.Max),
			fmt.Sprintf("%d/%d/%d/%d", e.Connect, e.Read, e.Write, e.Timeout), fmt.Sprint(e.Status),
			fmt.Sprint(c.Late), fmt.Sprint(c.Dropped),
		})
	}
	return tables
}

// latencyCell finds the built-in engine's cell of a topology in a
// scenario, at the GOMAXPROCS given.
func (s Summary) latencyCell(gomaxprocs int, topology, scenario string) (LatencyCell, bool) {
	for _, c := range s.Engine {
		if c.GOMAXPROCS == gomaxprocs && c.Topology == topology && c.Schedule.Name == scenario {
			return c, true
		}
	}
	return LatencyCell{}, false
}

// has2016 reports whether the sweep ran any of the 2016 scenarios.
func (s Summary) has2016() bool {
	for _, c := range s.Engine {
		switch c.Schedule.Name {
		case Slow2016, HighConc2016, Overhead2016, Probe2016:
			return true
		}
	}
	return false
}

// table2016 is the 2016 study's table with this sweep's rows on top:
// concurrency max and errors of the probe, then average, maximum and
// errors of each target-rate scenario.
func (s Summary) table2016() (source []string, rows [][]string) {
	if !s.has2016() {
		return nil, nil
	}
	src, recs := referenceCSV(seed2016, 13, "server")
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
			if c, ok := s.latencyCell(g, t, Probe2016); ok {
				row = append(row, fmt.Sprintf("%d of %d", c.Concurrent, c.Sent), fmt.Sprint(c.Errors.Total()))
			} else {
				row = append(row, "–", "–")
			}
			for _, sc := range []string{Slow2016, HighConc2016, Overhead2016} {
				c, ok := s.latencyCell(g, t, sc)
				if !ok || c.Max == 0 {
					row = append(row, "–", "–", "–")
					continue
				}
				errs := fmt.Sprint(c.Errors.Total())
				if sc == HighConc2016 {
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
func (s Summary) table2009() (source []string, header []string, rows [][]string) {
	conns := slices.Clone(s.Env.Plan.Connections)
	if len(conns) < 2 {
		return nil, nil, nil
	}
	slices.Sort(conns)
	src, recs := referenceCSV(seed2009, 4, "server")
	for _, l := range src {
		source = append(source, md(l))
	}
	header = []string{"server"}
	for _, c := range conns {
		header = append(header, fmt.Sprintf("c%d req/s", c), fmt.Sprintf("c%d p99", c))
	}
	type rowKey struct {
		group    Group // Connections zeroed
		topology string
	}
	var keys []rowKey
	for _, c := range s.Cells {
		g := c.Group
		g.Connections = 0
		if k := (rowKey{g, c.Topology}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		label := "**topobench " + k.topology + "**"
		if g := k.group.String(); g != "" {
			label += " (" + g + ")"
		}
		row := []string{label}
		for _, n := range conns {
			g := k.group
			g.Connections = n
			c, ok := s.Cell(Key{g, k.topology})
			if !ok || c.Reps == 0 {
				row = append(row, "–", "–")
				continue
			}
			rate := fmtCount(c.ReqPerSec.Median)
			if c.Errors.Total() > 0 {
				rate += " (errors)"
			}
			p99 := "–"
			if c.Latency.Runs > 0 {
				p99 = fmtDur(c.Latency.P99)
			}
			row = append(row, rate, p99)
		}
		rows = append(rows, row)
	}
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
			rate = fmtCount(v)
		}
		byServer[r[0]][n] = [2]string{rate, p99}
	}
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
	return source, header, rows
}

// seedCSV splits an embedded seed CSV into its comment lines (the run's
// setup and machine) and its data records, header dropped, checking the
// header's width and first column.
func seedCSV(name, data string, fields int, first string) (source []string, recs [][]string, err error) {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		if c, ok := strings.CutPrefix(l, "#"); ok {
			source = append(source, strings.TrimSpace(c))
			continue
		}
		lines = append(lines, l)
	}
	all, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s CSV: %w", name, err)
	}
	if len(all) < 2 || len(all[0]) != fields || all[0][0] != first {
		return nil, nil, fmt.Errorf("%s CSV: unexpected header %v", name, all[:min(1, len(all))])
	}
	return source, all[1:], nil
}

// referenceCSV is seedCSV for the files the report embeds and its tests
// cover: a malformed one is a programming error.
func referenceCSV(data string, fields int, first string) (source []string, recs [][]string) {
	source, recs, err := seedCSV("embedded reference", data, fields, first)
	if err != nil {
		panic(err)
	}
	return source, recs
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

func (s Summary) scenarioView() scenarioView {
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

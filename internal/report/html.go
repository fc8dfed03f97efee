package report

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/third_party/uplot"
)

// HTMLFile is the HTML report's name in a results directory.
const HTMLFile = "report.html"

// The page's template, script and style; uPlot comes from third_party.
//
//go:embed html
var htmlAssets embed.FS

// Sweep is one results directory as the HTML report shows it.
type Sweep struct {
	// Name labels the sweep on the page (its directory, say).
	Name string
	// Dir is where the sweep's records are: the built-in engine's
	// histograms are read from Dir/runs/*.hdr. Empty: no spectrum.
	Dir     string
	Summary analysis.Summary
	Runs    []results.Run
	// Changes are this sweep's ratios to standalone against the
	// baseline's (the first sweep of WriteCompareHTML), as topobench diff
	// computes them; nil for the baseline. CompareSweeps fills them.
	Changes []RatioChange
	// compared is the comparison with the baseline (CompareSweeps).
	compared *analysis.Comparison
}

// WriteHTML renders one sweep's report.html: everything inline (script,
// styles, data), so it opens from disk with no network. dir is the
// results directory, for the built-in engine's histograms; the same
// summary and runs give the same bytes.
func WriteHTML(w io.Writer, dir string, s analysis.Summary, runs []results.Run) error {
	return writeHTML(w, []Sweep{{Name: sweepName(dir), Dir: dir, Summary: s, Runs: runs}})
}

// WriteCompareHTML renders several sweeps on one page: the first is the
// baseline, each other is set against it (its Changes, the same charts
// overlaid, and a statement when the load generator's CPU per request
// says the machine differs).
func WriteCompareHTML(w io.Writer, sweeps []Sweep) error {
	if len(sweeps) == 0 {
		return fmt.Errorf("html report: no sweeps")
	}
	return writeHTML(w, sweeps)
}

func sweepName(dir string) string {
	dir = strings.TrimRight(dir, "/")
	if i := strings.LastIndex(dir, "/"); i >= 0 {
		return dir[i+1:]
	}
	return dir
}

// htmlPage is what html/page.tmpl renders. Every figure arrives
// formatted; the charts' data is one JSON document the script reads.
type htmlPage struct {
	Title   string
	Compare bool
	// Paired says a sweep of the page ran the paired design.
	Paired bool
	Sweeps []htmlSweep
	// Shifts are the comparison's statements about the machines.
	Shifts  []string
	Changes []htmlTable
	// Sections are the chart sections in page order.
	Sections []htmlSection
	UPlot    struct {
		Version string
		JS      template.JS
		CSS     template.CSS
	}
	JS   template.JS
	CSS  template.CSS
	Data template.JS
	// Charts is how many charts the script must draw.
	Charts int
}

type htmlSweep struct {
	Label, Name string
	// Head is the header; Load, Design and Time the account under "How
	// it was measured" (markdown's), Method each paired ratio's interval.
	Head               reportHeader
	Load, Design, Time string
	Method             *htmlTable
	// CrossCheck is the paired design's cross-check, CrossIntro what it
	// is; nil without one.
	CrossCheck *htmlTable
	CrossIntro string
	// Loads sets two load generators side by side, LoadsIntro says how;
	// nil without them.
	Loads      *htmlTable
	LoadsIntro string
	// ConnTable is the servers' listen queues and nginx's upstream
	// connections, after the cross-check; nil without counters.
	ConnTable *htmlTable
	// Choices are the choice's sentences, Costs its table (choice.go);
	// empty without a choice.
	Choices []string
	Costs   *htmlTable
	// Added are the latency phases' tables (added.go).
	Added []htmlTable
	// TLS is the TLS table, TLSSettings and TLSRead beside it; TLSTop
	// puts it in the answer (the plan is all TLS), else it follows the
	// summary's tables. Nil without a TLS topology.
	TLS         *htmlTable
	TLSSettings string
	TLSRead     [][2]string
	TLSTop      bool
	Answers     []string
	Tables      []htmlTable
	// Warnings are about the sweep and its cells; RunWarnings about
	// single runs (noisy, unsettled, retried), folded under RunCounts.
	Warnings    []analysis.Warning
	RunWarnings []analysis.Warning
	RunCounts   string
	Failures    []analysis.Failure
	Env         []htmlTable
	EnvJSON     string
}

// htmlTable is a table with a caption; Num marks right-aligned columns.
type htmlTable struct {
	Caption string
	Head    []string
	Num     []bool
	Rows    [][]string
	// Marked rows are flagged (a ceiling, a noisy run).
	Marked []bool
}

// htmlSection is a part of the page: prose, tables and charts.
type htmlSection struct {
	ID, Title string
	Intro     []string
	Tables    []htmlTable
	Figures   []htmlFigure
	// Source are reference source lines, quoted.
	Source []string
}

// htmlFigure is one chart: its caption and its numbers as a table.
type htmlFigure struct {
	ID      string
	Caption string
	Table   htmlTable
}

func writeHTML(w io.Writer, sweeps []Sweep) error {
	page, data, err := buildPage(sweeps)
	if err != nil {
		return err
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	// json.Marshal escapes <, > and &: the document cannot close its
	// script element.
	page.Data = template.JS(b)
	read := func(name string) string {
		b, err := htmlAssets.ReadFile("html/" + name)
		if err != nil {
			panic(err) // embedded
		}
		return string(b)
	}
	page.JS, page.CSS = template.JS(read("page.js")), template.CSS(read("page.css"))
	page.UPlot.Version, page.UPlot.JS, page.UPlot.CSS = uplot.Version(), template.JS(uplot.JS()), template.CSS(uplot.CSS())
	tmpl, err := template.New("page.tmpl").Funcs(template.FuncMap{
		// at is a flag of a column or row; false past the end.
		"at": func(flags []bool, i int) bool { return i < len(flags) && flags[i] },
	}).Parse(read("page.tmpl"))
	if err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, page); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err = w.Write(out.Bytes())
	return err
}

// buildPage lays out the page and the charts' data.
func buildPage(sweeps []Sweep) (htmlPage, chartData, error) {
	p := htmlPage{Title: "topobench report", Compare: len(sweeps) > 1}
	cb := &chartBuilder{sweeps: sweeps}
	if p.Compare {
		p.Title = "topobench comparison"
	}
	for i, sw := range sweeps {
		p.Sweeps = append(p.Sweeps, sweepView(i, sw, p.Compare))
		p.Paired = p.Paired || sw.Summary.Env.Plan.Paired != nil
	}
	if p.Compare {
		base := sweeps[0]
		for i, sw := range sweeps[1:] {
			p.Shifts = append(p.Shifts, machineStatements(base, sw, sweepLabel(0), sweepLabel(i+1))...)
			p.Changes = append(p.Changes, changeTable(base, sw, sweepLabel(0), sweepLabel(i+1)))
		}
	}
	sections, err := cb.sections()
	if err != nil {
		return htmlPage{}, chartData{}, err
	}
	p.Sections = sections
	p.Charts = len(cb.data.Charts)
	return p, cb.data, nil
}

// sweepLabel names the sweeps of a comparison: A (the baseline), B, C...
func sweepLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "S" + strconv.Itoa(i+1)
}

func sweepView(i int, sw Sweep, compare bool) htmlSweep {
	s := sw.Summary
	v := htmlSweep{Label: sweepLabel(i), Name: sw.Name, Failures: s.Failures}
	runKinds := []string{"noise", "unsettled", "retried"}
	counts := map[string]int{}
	for _, w := range s.Warnings {
		if slices.Contains(runKinds, w.Kind) {
			v.RunWarnings = append(v.RunWarnings, w)
			counts[w.Kind]++
			continue
		}
		v.Warnings = append(v.Warnings, w)
	}
	var parts []string
	for _, k := range runKinds {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
		}
	}
	v.RunCounts = strings.Join(parts, ", ")
	v.Head = summary{s}.head()
	_, _, v.Load = header(s.Env)
	v.Time = timeSpent(s.Time)
	for _, c := range s.Choices {
		v.Choices = append(v.Choices, c.Sentence)
	}
	v.Costs = summary{s}.htmlCosts()
	v.Added = summary{s}.htmlAdded()
	if t := (summary{s}).tlsView(); t != nil {
		v.TLS = &htmlTable{Caption: t.Title, Head: t.Head, Num: t.Num, Rows: t.Rows, Marked: t.Marked}
		v.TLSSettings, v.TLSRead, v.TLSTop = t.Settings, t.Read, t.Top
	}
	for _, g := range s.Groups() {
		if a := answer(s, g); a != "" {
			v.Answers = append(v.Answers, a)
		}
		v.Tables = append(v.Tables, summaryTable(s, g))
	}
	if c := connections(s); len(c.ConnRows) > 0 {
		v.Answers = append(v.Answers, c.ConnSentences...)
		v.ConnTable = &htmlTable{Caption: "Connections: listen queues and nginx's upstream connections", Head: c.ConnHead,
			Num: []bool{false, false, true, true, true, true, true, true}, Rows: c.ConnRows}
	}
	if chk, ok := (summary{s}).crossCheck(); ok {
		v.CrossIntro = chk.Intro
		if len(chk.Rows) > 0 {
			v.CrossCheck = &htmlTable{Caption: chk.Title, Head: chk.Head, Num: []bool{false, true, true, true, true, true}, Rows: chk.Rows}
		}
	}
	if l := (summary{s}).loadsView(); l != nil {
		v.Loads, v.LoadsIntro = &htmlTable{Caption: l.Title, Head: l.Head, Num: []bool{false, false, true, true, true, true, true}, Rows: l.Rows}, l.Intro
	}
	v.Design = summary{s}.pairedText()
	if rows := (summary{s}).methodRows(); len(rows) > 0 {
		v.Method = &htmlTable{Caption: "Each ratio's interval (lag-1 is the autocorrelation of neighbouring pairs' ratios)", Head: methodHead,
			Num: []bool{false, false, true, false, true}, Rows: rows}
	}
	v.Env = envTables(s, sw.Runs)
	if b, err := json.MarshalIndent(s.Env, "", "  "); err == nil {
		v.EnvJSON = string(b)
	}
	return v
}

// summaryTable is summary.md's table of a group, errors beside the rate.
func summaryTable(s analysis.Summary, g analysis.Group) htmlTable {
	t := htmlTable{
		Caption: g.Heading(s.ServerCPUs, s.Env.CPUs),
		Head: []string{"topology", "req/s", "±", "min–max", "n", "errors c/r/w/t", "non-2xx", "vs standalone", "by CPU cost", "rank",
			"CPU µs/req load / nginx / server", "p50", "p99", "max", "notes"},
		Num: []bool{false, true, true, true, true, true, true, true, true, true, true, true, true, true, false},
	}
	if t.Caption == "" {
		t.Caption = "all runs"
	}
	for _, c := range s.Rows(g) {
		r := resultRow(c)
		// resultRow's order: name, req/s, ±, min–max, n, ratio, cost
		// ratio, rank, CPU, p50, p99, max, errors, non-2xx, notes.
		t.Rows = append(t.Rows, []string{r[0], r[1], r[2], r[3], r[4], r[12], r[13], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[14]})
		t.Marked = append(t.Marked, c.Ceiling)
	}
	return t
}

// answer is the question's answer for one group in one sentence: which
// path is fastest, and what nginx costs, with intervals.
func answer(s analysis.Summary, g analysis.Group) string {
	label := g.String()
	if label == "" {
		label = "All runs"
	}
	if openLoop(g) {
		return latencyAnswer(s, g, label)
	}
	st, hasSt := s.BaseCell(g)
	var fastest *analysis.Cell
	var via []analysis.Cell
	for _, c := range s.Rows(g) {
		if c.Ceiling || c.Reps == 0 {
			continue
		}
		if c.Rank == 1 {
			c := c
			fastest = &c
		}
		if !topology.IsBaseline(c.Topology) && c.RatioToStandalone != nil {
			via = append(via, c)
		}
	}
	if fastest == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s is fastest at %s req/s (%s)", label, fastest.Topology,
		numfmt.Count(fastest.ReqPerSec.Median), ciText(fastest.ReqPerSec.Interval(fastest.Reps)))
	if second := secondOf(s, g); second != nil {
		if second.Settled() {
			fmt.Fprintf(&b, ", ahead of %s", second.Topology)
		} else {
			fmt.Fprintf(&b, ", though these runs do not settle its lead over %s", second.Topology)
		}
	}
	if !hasSt || st.Reps == 0 || len(via) == 0 {
		b.WriteString(".")
		return b.String()
	}
	best, worst := via[0], via[0]
	for _, c := range via[1:] {
		if c.RatioToStandalone.Center > best.RatioToStandalone.Center {
			best = c
		}
		if c.RatioToStandalone.Center < worst.RatioToStandalone.Center {
			worst = c
		}
	}
	r := best.RatioToStandalone
	fmt.Fprintf(&b, "; the fastest path through nginx, %s, serves %.2f of %s (%s)", best.Topology, r.Center, topology.BaselineOf(best.Topology), ratioCI(r))
	switch {
	case !r.Differs:
		b.WriteString(", not measurably different from standalone")
	case r.Center < 1:
		fmt.Fprintf(&b, ": nginx costs %.0f%% of the throughput", 100*(1-r.Center))
	default:
		fmt.Fprintf(&b, ": %.0f%% more than standalone", 100*(r.Center-1))
	}
	b.WriteString(cpuClause(best, st))
	if worst.Topology != best.Topology {
		fmt.Fprintf(&b, "; the slowest, %s, %.2f (%s)", worst.Topology, worst.RatioToStandalone.Center, ratioCI(worst.RatioToStandalone))
	}
	var errs []string
	for _, c := range s.Rows(g) {
		if c.Errors.Total() > 0 {
			errs = append(errs, c.Topology)
		}
	}
	if len(errs) > 0 {
		fmt.Fprintf(&b, " (errors in %s: see the table)", strings.Join(errs, ", "))
	}
	b.WriteString(".")
	return b.String()
}

// openLoop reports whether a group's rates are set by its schedule (a
// target rate, or the concurrency probe): its answer is in latency.
func openLoop(g analysis.Group) bool { return g.Schedule.Probe || g.Schedule.OpenLoop() }

// latencyAnswer answers for a group of the built-in engine at a target
// rate or probing concurrency: what each topology achieved, and its p99.
func latencyAnswer(s analysis.Summary, g analysis.Group, label string) string {
	var parts []string
	for _, c := range s.Engine {
		if c.Group != g {
			continue
		}
		var p string
		switch {
		case g.Schedule.Probe:
			p = fmt.Sprintf("%s served %d of %d requests concurrently", c.Topology, c.Concurrent, c.Sent)
		case c.Max == 0:
			p = fmt.Sprintf("%s answered nothing in time", c.Topology)
		default:
			p = fmt.Sprintf("%s achieved %s req/s with p99 %s", c.Topology, numfmt.Count(c.ReqPerSec), numfmt.Dur(c.P99))
		}
		var bad []string
		if e := c.Errors.Total(); e > 0 {
			bad = append(bad, c.Errors.String())
		}
		if c.Dropped > 0 {
			bad = append(bad, fmt.Sprintf("%s dropped", numfmt.Count(float64(c.Dropped))))
		}
		if len(bad) > 0 {
			p += " (" + strings.Join(bad, ", ") + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	if g.Schedule.Rate > 0 {
		return fmt.Sprintf("%s: at a target of %s req/s, %s.", label, numfmt.Count(g.Schedule.Rate), strings.Join(parts, "; "))
	}
	return fmt.Sprintf("%s: %s.", label, strings.Join(parts, "; "))
}

func secondOf(s analysis.Summary, g analysis.Group) *analysis.Cell {
	for _, c := range s.Rows(g) {
		if c.Rank == 2 {
			return &c
		}
	}
	return nil
}

// cpuClause is the answer's CPU per request of the fastest path through
// nginx, beside its server's and standalone's: " and 36 µs of nginx CPU
// per request (the server 30 µs, standalone's 25)", each figure with its
// interval in a pair design ("36 µs ± 4%"). A figure not measured is left
// out with its words; empty when none was.
func cpuClause(best, st analysis.Cell) string {
	paired := len(best.Pairs) > 0
	figure := func(c analysis.Cell, server bool, unit string) string {
		if c.CPU == nil {
			return ""
		}
		iv := c.CPU.Nginx
		if server {
			iv = c.CPU.Server
		}
		if iv == nil || math.IsNaN(iv.Center) {
			return ""
		}
		if paired && iv.Known() {
			return numfmt.Micros(iv.Center) + " µs " + pm(*iv)
		}
		return numfmt.Micros(iv.Center) + unit
	}
	nginx, server, alone := figure(best, false, " µs"), figure(best, true, " µs"), figure(st, true, "")
	var head string
	var beside []string
	switch {
	case nginx != "":
		head = " and " + nginx + " of nginx CPU per request"
		if server != "" {
			beside = append(beside, "the server "+server)
		}
	case server != "":
		head = " and its server " + server + " of CPU per request"
	default:
		return ""
	}
	switch {
	case alone == "":
	case len(beside) == 0 && nginx != "":
		beside = append(beside, "standalone's server "+figure(st, true, " µs"))
	default:
		beside = append(beside, "standalone's "+alone)
	}
	if len(beside) > 0 {
		head += " (" + strings.Join(beside, ", ") + ")"
	}
	return head
}

// ciText is a median's interval: "95% interval 39,783–45,885", or why
// there is none.
func ciText(iv analysis.Interval) string {
	if !iv.Known() {
		return fmt.Sprintf("no interval from %d runs", iv.N)
	}
	return "95% interval " + numfmt.Count(*iv.Lo) + "–" + numfmt.Count(*iv.Hi)
}

func ratioCI(r *analysis.Ratio) string {
	if !r.Known() {
		return fmt.Sprintf("interval unknown with %d runs", r.N)
	}
	return fmt.Sprintf("95%% interval %.2f–%.2f", *r.Lo, *r.Hi)
}

// envTables are the environment: machine and versions, isolation and
// CPU split, the exact command, limits, sysctls, the plan.
func envTables(s analysis.Summary, runs []results.Run) []htmlTable {
	env := s.Env
	or := func(v string) string {
		if v == "" {
			return "unknown"
		}
		return v
	}
	cpus := or(env.CPUModel)
	if env.CPUs > 0 {
		cpus += fmt.Sprintf(" (%d logical CPUs)", env.CPUs)
	}
	p := env.Plan
	machine := htmlTable{Caption: "Machine and versions", Head: []string{"", ""}, Rows: [][]string{
		{"CPU", cpus}, {"kernel", or(env.Kernel)}, {"Go", or(env.GoVersion)}, {"nginx", or(env.NginxVersion)}, {"wrk", or(env.WrkVersion)},
		{"isolation", s.Isolation},
		{"CPU split", cpuSplit(s, runs)},
		{"command", shellJoin(env.Command)},
	}}
	if !env.Start.IsZero() {
		machine.Rows = append(machine.Rows, []string{"started", env.Start.UTC().Format(time.RFC3339)})
	}
	if !env.End.IsZero() {
		machine.Rows = append(machine.Rows, []string{"ended", env.End.UTC().Format(time.RFC3339)})
	}
	for _, k := range sortedKeys(env.Limits) {
		machine.Rows = append(machine.Rows, []string{"limit " + k, env.Limits[k]})
	}
	for _, k := range sortedKeys(env.Targets) {
		machine.Rows = append(machine.Rows, []string{"target " + k, env.Targets[k]})
	}
	plan := htmlTable{Caption: "Plan", Head: []string{"", ""}, Rows: [][]string{
		{"topologies", strings.Join(p.Topologies, ", ")},
		{"GOMAXPROCS", joinInts(p.GOMAXPROCS)},
		{"connections", joinInts(p.Connections)},
		{"repetitions", repsText(p)},
		{"duration, warmup", p.WindowsLabel() + ", " + p.Warmup.String()},
		{"threads, timeout", strconv.Itoa(p.Threads) + ", " + p.Timeout.String()},
	}}
	if p.Scenario != "" {
		plan.Rows = append(plan.Rows, []string{"scenario", p.Scenario})
	}
	out := []htmlTable{machine, plan}
	if head, rows := sysctlTable(env); len(rows) > 0 {
		out = append(out, htmlTable{Caption: "Kernel settings in effect", Head: head, Rows: rows})
	}
	return out
}

// cpuSplit says where the load generator and the servers ran.
func cpuSplit(s analysis.Summary, runs []results.Run) string {
	out := analysis.CPUSplit(s.Env.Plan, runs)
	if s.ServerCPUs > 0 {
		out += fmt.Sprintf(" (%s for the servers", numfmt.Plural(s.ServerCPUs, "CPU"))
		if s.Env.CPUs > 0 {
			out += fmt.Sprintf(" of the machine's %d", s.Env.CPUs)
		}
		out += ")"
	}
	return out
}

func repsText(p results.Plan) string {
	if p.RepsAuto != nil {
		return fmt.Sprintf("%d to %d (-reps auto, within ±%s)", p.Reps, p.RepsAuto.Max, numfmt.Pct(p.RepsAuto.Within))
	}
	return strconv.Itoa(p.Reps)
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}

// sig4 rounds to 4 significant digits: the charts need no more, and the
// page stays small.
func sig4(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

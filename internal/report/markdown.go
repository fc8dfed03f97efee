package report

import (
	_ "embed"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
)

//go:embed summary.md.tmpl
var markdownTemplate string

// markdownView is what summary.md.tmpl renders: the summary with every
// figure already formatted and escaped, one field per section.
type markdownView struct {
	Summary
	Plan results.Plan
	// Command, Ran and Load are the header lines; empty ones are left out.
	Command, Ran, Load string
	// Machine and Sysctls are two-column table rows.
	Machine, Sysctls [][2]string
	InShort          []string
	Tables           []resultTable
	// RefSource are the 2013 source lines; RefRows the comparison rows.
	RefSource []string
	RefRows   [][]string
	// Seed2007Source and Seed2007Rows are the 2007 test beside this
	// sweep's, under -scenario 2007; Close says the load asked for short
	// connections.
	Seed2007Source []string
	Seed2007Rows   [][]string
	Close          bool
	Files          struct{ Bench, CSV, JSON, ReqPS, P99, CPU string }
	// HasCPU says whether any run measured CPU time per process.
	HasCPU bool
	// MinRounds is the fewest runs with a finite median interval,
	// MinRatioRuns the fewest of each with a finite ratio interval.
	MinRounds, MinRatioRuns int
	// BenchExample is a benchmark name of bench.txt; empty without cells.
	BenchExample string
	// The built-in engine's tables, the 2016 and 2009 comparisons and
	// their charts (scenarios.go).
	scenarioView
}

// resultTable is one group's table in "Results".
type resultTable struct {
	Heading string
	Rows    [][]string
}

// WriteMarkdown renders summary.md.
func (s Summary) WriteMarkdown(out io.Writer) error {
	tmpl, err := template.New("summary.md").Funcs(template.FuncMap{
		"join":  strings.Join,
		"md":    md,
		"fence": fence,
		"pct":   fmtPct,
	}).Parse(markdownTemplate)
	if err != nil {
		return err
	}
	return tmpl.Execute(out, s.markdownView())
}

func (s Summary) markdownView() markdownView {
	v := markdownView{Summary: s, Plan: s.Env.Plan}
	v.Command, v.Ran, v.Load = header(s.Env)
	v.Machine, v.Sysctls = machine(s.Env, s.Isolation)
	v.Seed2007Source, v.Seed2007Rows = s.seed2007Table()
	v.Close = s.Env.Plan.Close
	for _, g := range s.Groups() {
		v.InShort = append(v.InShort, s.inShort(g))
		v.Tables = append(v.Tables, s.resultTable(g))
	}
	v.RefSource, v.RefRows = s.referenceTable()
	v.scenarioView = s.scenarioView()
	v.Files.Bench, v.Files.CSV, v.Files.JSON = BenchFile, CSVFile, JSONFile
	v.Files.ReqPS, v.Files.P99, v.Files.CPU = ReqPSChart, P99Chart, CPUChart
	v.MinRounds, v.MinRatioRuns = MinRounds(), minRatioRuns()
	for _, c := range s.Cells {
		v.HasCPU = v.HasCPU || c.CPU != nil
	}
	if n := len(s.Cells); n > 0 {
		v.BenchExample = "Benchmark" + string(benchName(s.Cells[n-1].Key))
	}
	return v
}

// header says what ran, when, and under which load.
func header(env results.Env) (command, ran, load string) {
	command = strings.Join(env.Command, " ")
	if !env.Start.IsZero() {
		if env.End.IsZero() {
			ran = fmt.Sprintf("from %s (did not finish)", env.Start.UTC().Format("2006-01-02 15:04:05 MST"))
		} else {
			ran = fmt.Sprintf("%s to %s (%s)", env.Start.UTC().Format("2006-01-02 15:04:05 MST"),
				env.End.UTC().Format("15:04:05 MST"), env.End.Sub(env.Start).Round(time.Second))
		}
	}
	if args := loadArgs(env.Plan); args != "" {
		load = "wrk " + args
	}
	return command, ran, load
}

// loadArgs are the wrk flags every run of the plan used; empty for a plan
// that does not say.
func loadArgs(plan results.Plan) string {
	if plan.Threads <= 0 {
		return ""
	}
	args := fmt.Sprintf("-t%d -c%s -d%s", plan.Threads, plan.ConnectionsList(), plan.Duration)
	if plan.Timeout > 0 {
		args += " --timeout " + plan.Timeout.String()
	}
	if plan.Close {
		args += ` -H "Connection: close"`
	}
	return args
}

// machine lists the hardware, software and kernel settings the sweep ran
// on.
func machine(env results.Env, isolated string) (rows, sysctls [][2]string) {
	cpus := ""
	if env.CPUs > 0 {
		cpus = fmt.Sprintf(" (%d logical CPUs)", env.CPUs)
	}
	rows = [][2]string{
		{"CPU", md(orUnknown(env.CPUModel)) + cpus},
		{"kernel", md(orUnknown(env.Kernel))},
		{"Go", md(orUnknown(env.GoVersion))},
		{"nginx", md(orUnknown(env.NginxVersion))},
		{"wrk", md(orUnknown(env.WrkVersion))},
	}
	if len(env.Limits) > 0 {
		rows = append(rows, [2]string{"limits", md(joinMap(env.Limits, " "))})
	}
	rows = append(rows, [2]string{"isolation", md(isolated)})
	for _, name := range sortedKeys(env.Targets) {
		rows = append(rows, [2]string{"target " + md(name), md(env.Targets[name])})
	}
	for _, k := range sortedKeys(env.Sysctls) {
		sysctls = append(sysctls, [2]string{md(k), md(env.Sysctls[k])})
	}
	return rows, sysctls
}

// resultTable is the table of one group, a row per topology.
func (s Summary) resultTable(g Group) resultTable {
	t := resultTable{Heading: g.heading(s.ServerCPUs, s.Env.CPUs)}
	for _, c := range s.Rows(g) {
		t.Rows = append(t.Rows, resultRow(c))
	}
	return t
}

// resultRow is one cell's row: rate with its interval, ratio, rank, CPU
// per request, latency, errors, notes.
func resultRow(c Cell) []string {
	name := c.Topology
	if c.Ceiling {
		name += " (ceiling)"
	}
	n := fmt.Sprint(c.Reps)
	if c.Failed > 0 {
		n = fmt.Sprintf("%d (+%d failed)", c.Reps, c.Failed)
	}
	notes := strings.Join(c.Notes, ", ")
	if c.Reps == 0 {
		return []string{name, "–", "–", "–", n, "–", "–", "–", "–", "–", "–", "–", "–", notes}
	}
	lat := func(d time.Duration) string {
		if c.Latency.Runs == 0 {
			return "–"
		}
		return fmtDur(d)
	}
	e := c.Errors
	ratio := fmtRatio(c.RatioToStandalone)
	if c.Topology == Standalone {
		ratio = "1.00" // itself
	}
	return []string{
		name, fmtCount(c.ReqPerSec.Median), strings.TrimPrefix(c.ReqPerSec.Interval(c.Reps).pm(), "± "),
		fmtCount(c.ReqPerSec.Min) + "–" + fmtCount(c.ReqPerSec.Max), n,
		ratio, fmtRank(c), fmtCPU(c.CPU),
		lat(c.Latency.P50), lat(c.Latency.P99), lat(c.Latency.Max),
		fmt.Sprintf("%d/%d/%d/%d", e.Connect, e.Read, e.Write, e.Timeout), fmt.Sprint(e.Status),
		notes,
	}
}

// fmtRank is the cell's rank, with "~" when its order under the next
// faster cell is not settled; "–" for ceilings.
func fmtRank(c Cell) string {
	switch {
	case c.Rank == 0:
		return "–"
	case c.Rank > 1 && !c.settled():
		return fmt.Sprintf("%d ~", c.Rank)
	}
	return fmt.Sprint(c.Rank)
}

// fmtCPU is the median CPU µs per request of the load generator, nginx
// and the server: "21 / 47 / 45"; "–" when not measured.
func fmtCPU(cpu *CPUPerRequest) string {
	if cpu == nil {
		return "–"
	}
	return fmtMicros(cpu.Load.Center) + " / " + fmtMicros(cpu.Nginx.Center) + " / " + fmtMicros(cpu.Server.Center)
}

// fmtMicros prints µs with two significant digits below 10.
func fmtMicros(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// referenceTable is the 2013 source and its rows beside this sweep's.
func (s Summary) referenceTable() (source []string, rows [][]string) {
	src, _, _ := Reference2013()
	for _, l := range src {
		source = append(source, md(l))
	}
	for _, r := range s.Reference {
		now, ratio := "not measured", "–"
		if r.ReqPerSec != nil {
			now = fmtCount(*r.ReqPerSec)
			if r.Ratio != nil {
				ratio = fmt.Sprintf("%.2f", *r.Ratio)
			}
		}
		rows = append(rows, []string{
			strconv.Itoa(r.GOMAXPROCS), r.Topology, fmtCount(r.RefReqPerSec), fmt.Sprintf("%.2f", r.RefRatio),
			errorText(r.RefErrors), now, ratio,
		})
	}
	return source, rows
}

// fence makes an error message safe inside a fenced code block.
func fence(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "```", "'''"))
}

// isolation says how the load generator was kept apart from the servers:
// the network (two namespaces, or one loopback) and the CPUs. The CPU
// sets come from the plan, else from the runs (-cpus auto records them
// per run).
func isolation(p results.Plan, runs []results.Run) string {
	load, server := cpuSets(p, runs)
	cpus := "load generator on " + orUnpinned(load) + ", servers on " + orUnpinned(server)
	switch p.Isolation {
	case results.IsolateNetns:
		link := "a veth pair"
		if p.LinkDelay > 0 {
			link += " delaying each packet " + p.LinkDelay.String() + " on each end (tc netem)"
		}
		return "netns: two network namespaces joined by " + link + ", the load generator in one and nginx and the servers in the other (nginx's upstream hop on that namespace's loopback); " + cpus
	case results.IsolateNone:
		if load == "" && server == "" {
			return "none: one loopback, as in 2013; the load generator, nginx and the servers share every CPU"
		}
		return "none: one loopback, as in 2013; " + cpus
	}
	// Records from before isolation was recorded.
	return "not recorded (loopback); " + pinning(load, server)
}

// cpuSets are the load generator's and the servers' CPU lists: from the
// plan, else from the runs (-cpus auto records them per run); empty when
// unpinned.
func cpuSets(p results.Plan, runs []results.Run) (load, server string) {
	load, server = p.PinLoad, p.PinServer
	for _, r := range runs {
		if load == "" && server == "" {
			load, server = r.LoadCPUs, r.ServerCPUs
		}
	}
	return load, server
}

// serverCPUs is how many CPUs the servers could run on: their pinned set's,
// else the machine's (0 when unknown).
func serverCPUs(env results.Env, runs []results.Run) int {
	_, server := cpuSets(env.Plan, runs)
	if set, err := cpuset.Parse(server); err == nil && !set.IsEmpty() {
		return set.Len()
	}
	return env.CPUs
}

func orUnpinned(cpus string) string {
	if cpus == "" {
		return "every CPU (unpinned)"
	}
	return "CPUs " + cpus
}

func pinning(load, server string) string {
	if load == "" && server == "" {
		return "none: wrk, nginx and Go share every CPU"
	}
	or := func(s string) string {
		if s == "" {
			return "unpinned"
		}
		return "CPUs " + s
	}
	return fmt.Sprintf("wrk on %s; nginx and Go on %s", or(load), or(server))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// md makes s safe inside a markdown table cell.
func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinMap(m map[string]string, sep string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+" "+m[k])
	}
	return strings.Join(parts, ","+sep)
}

// fmtCount prints a rate or count rounded to an integer with thousands
// separators: 42,745.
func fmtCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	if v < 0 && s != "0" {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtRatio(r *Ratio) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f %s%s", r.Center, r.pm(), r.mark())
}

func fmtPct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// fmtDur prints a latency with three significant digits in µs, ms or s.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// inShort sums up one group in a sentence or three: standalone,
// the nginx topologies fastest first with their ratio, which ratios do
// not differ from standalone and which orders the repetitions do not
// settle.
func (s Summary) inShort(g Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s:** ", g)
	st, ok := s.Cell(Key{g, Standalone})
	if ok && st.Reps > 0 {
		server := "Go"
		if g.Target != "" && g.Target != results.TargetGo {
			server = g.Target
		}
		fmt.Fprintf(&b, "standalone %s serves %s req/s", server, fmtCount(st.ReqPerSec.Median))
		if e := st.Errors; e.Total() > 0 {
			fmt.Fprintf(&b, " (with %s)", errorText(e))
		}
		b.WriteString(". ")
	} else {
		b.WriteString("standalone was not measured. ")
	}
	var via []Cell
	for _, c := range s.Rows(g) {
		if !c.Ceiling && c.Topology != Standalone && c.Reps > 0 {
			via = append(via, c)
		}
	}
	sort.SliceStable(via, func(i, j int) bool { return via[i].ReqPerSec.Median > via[j].ReqPerSec.Median })
	if len(via) > 0 {
		b.WriteString("Behind nginx, fastest first: ")
		unknown := false
		for i, c := range via {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s", c.Topology, fmtCount(c.ReqPerSec.Median))
			var notes []string
			if r := c.RatioToStandalone; r != nil {
				note := fmt.Sprintf("%.2f %s of standalone", r.Center, r.pm())
				switch {
				case !r.Known():
					unknown = true
				case !r.Differs:
					note += ", not significantly different"
				}
				notes = append(notes, note)
			}
			if c.Errors.Total() > 0 {
				notes = append(notes, "with errors")
			}
			if len(notes) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
			}
		}
		b.WriteString(".")
		var open []string
		for i := 1; i < len(via); i++ {
			if r := ratioOf(via[i].rates, via[i-1].rates); r == nil || !r.Differs {
				open = append(open, via[i-1].Topology+" / "+via[i].Topology)
				unknown = unknown || r == nil || !r.Known()
			}
		}
		if len(open) > 0 {
			fmt.Fprintf(&b, " At 95%% confidence these runs do not settle the order of %s.", strings.Join(open, ", "))
		}
		if unknown {
			fmt.Fprintf(&b, " With %s an interval is unknown (± ∞): a ratio's needs %d runs of each.", roundsText(via), minRatioRuns())
		}
	}
	if ceil, ok := s.Cell(Key{g, Ceiling}); ok && ceil.Reps > 0 {
		fmt.Fprintf(&b, " The %s ceiling is %s req/s.", Ceiling, fmtCount(ceil.ReqPerSec.Median))
	}
	return b.String()
}

// roundsText says how many successful runs the cells have: "3 runs" or
// "3–6 runs".
func roundsText(cs []Cell) string {
	lo, hi := cs[0].Reps, cs[0].Reps
	for _, c := range cs {
		lo, hi = min(lo, c.Reps), max(hi, c.Reps)
	}
	if lo == hi {
		return fmt.Sprintf("%d runs", lo)
	}
	return fmt.Sprintf("%d–%d runs", lo, hi)
}

// minRatioRuns is the fewest runs of each cell with a finite ratio
// interval at 95%, as stats.RatioOf computes it.
func minRatioRuns() int {
	for n := 1; n < 100; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		if ratioOf(xs, xs).Known() {
			return n
		}
	}
	return 100
}

// MinRounds is the fewest samples with a finite median interval at 95%,
// as stats.Summarize (benchstat) computes it.
func MinRounds() int {
	for n := 1; n < 100; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		if intervalOf(xs).Known() {
			return n
		}
	}
	return 100
}

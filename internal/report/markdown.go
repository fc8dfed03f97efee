package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

//go:embed summary.md.tmpl
var markdownTemplate string

// markdownView is what summary.md.tmpl renders: the summary with every
// figure already formatted and escaped, one field per section.
type markdownView struct {
	analysis.Summary
	Plan results.Plan
	// Head is the header (at most five lines); empty lines are left out.
	Head reportHeader
	// Load is the load's command line, under "How it was measured".
	Load string
	// Machine is two-column table rows; Sysctls a table under SysctlHead.
	Machine    [][2]string
	SysctlHead []string
	Sysctls    [][]string
	// Choice is the choice's sentences, Costs its table's lines
	// (choice.go); empty without a choice.
	Choice string
	Costs  []string
	// Added are the latency phases' lines (added.go); empty without one.
	Added   []string
	InShort []string
	Tables  []resultTable
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
	// SpeedFit is how the rates followed the servers' speed (the speed
	// probes, -speed-probe), SpeedFollows whether they measurably did;
	// SpeedFit is empty without probes.
	SpeedFit     string
	SpeedFollows bool
	// MinRounds is the fewest runs with a finite median interval,
	// MinRatioRuns the fewest of each with a finite ratio interval.
	MinRounds, MinRatioRuns int
	// RatioLevelText is the ratios' confidence ("95%"); StoppingRule
	// says why it is higher when the sweep stopped by looking at them;
	// Budget is -budget's value.
	RatioLevelText, StoppingRule, Budget string
	// Paired says how a paired sweep measured its ratios; empty for
	// rounds. MethodRows are each ratio's interval under MethodHead.
	Paired     string
	MethodHead []string
	MethodRows [][]string
	// CrossCheck is the paired design's cross-check; nil without one.
	CrossCheck *tableSection
	// Loads sets two load generators side by side; nil without them.
	Loads *tableSection
	// TLS is the TLS table, at the top when the plan is all TLS, else a
	// section after the results; nil without a TLS topology.
	TLS *tlsView
	// Time is where the sweep's wall time went (analysis.Spent).
	Time string
	// BenchExample is a benchmark name of bench.txt; empty without cells.
	BenchExample string
	// The built-in engine's tables, the 2016 and 2009 comparisons and
	// their charts (scenarios.go).
	scenarioView
	// What each path costs a handler that does work (cost.go).
	costView
	// What nginx costs a handler in the pair designs (handler.go).
	handlerView
	// The servers' listen queues and nginx's upstream connections
	// (netconn.go).
	connView
	// Which node did what on a cluster, and each node's figures
	// (cluster.go).
	clusterView
}

// resultTable is one group's table in "Results".
type resultTable struct {
	Heading string
	Rows    [][]string
}

// WriteMarkdown renders summary.md.
func (s summary) WriteMarkdown(out io.Writer) error {
	tmpl, err := template.New("summary.md").Funcs(template.FuncMap{
		"join":  strings.Join,
		"md":    md,
		"fence": fence,
		"pct":   numfmt.Pct,
	}).Parse(markdownTemplate)
	if err != nil {
		return err
	}
	return tmpl.Execute(out, s.markdownView())
}

func (s summary) markdownView() markdownView {
	v := markdownView{Summary: s.Summary, Plan: s.Env.Plan}
	v.Head = s.head()
	_, _, v.Load = header(s.Env)
	v.Machine = machine(s.Env, s.Isolation)
	v.SysctlHead, v.Sysctls = sysctlTable(s.Env)
	for _, row := range v.Sysctls {
		for i := range row {
			row[i] = md(row[i])
		}
	}
	v.Seed2007Source, v.Seed2007Rows = s.seed2007Table()
	v.costView = s.costView()
	v.handlerView = s.handlerView()
	v.connView = s.connView()
	v.Close = s.Env.Plan.Close
	v.Choice = s.choiceText()
	if t := s.costs(); t != nil {
		v.Costs = t.Markdown()
	}
	v.Added = s.addedLines()
	for _, g := range s.Groups() {
		v.InShort = append(v.InShort, s.inShort(g))
		v.Tables = append(v.Tables, s.resultTable(g))
	}
	v.RefSource, v.RefRows = s.referenceTable()
	v.scenarioView = s.scenarioView()
	v.clusterView = s.clusterView()
	v.Files.Bench, v.Files.CSV, v.Files.JSON = BenchFile, CSVFile, JSONFile
	v.Files.ReqPS, v.Files.P99, v.Files.CPU = ReqPSChart, P99Chart, CPUChart
	v.MinRounds, v.MinRatioRuns = analysis.MinRounds(), analysis.MinRatioRunsAt(s.RatioLevel())
	v.RatioLevelText = levelText(s.RatioLevel())
	v.StoppingRule = s.StoppingRule()
	v.Time = timeSpent(s.Time)
	v.Paired = s.pairedText()
	if f := s.Speed; f != nil {
		v.SpeedFit, v.SpeedFollows = f.String(), f.Follows()
	}
	v.MethodHead, v.MethodRows = methodHead, s.methodRows()
	for _, row := range v.MethodRows {
		for i := range row {
			row[i] = md(row[i])
		}
	}
	if chk, ok := s.crossCheck(); ok {
		for _, row := range chk.Rows {
			for i := range row {
				row[i] = md(row[i])
			}
		}
		v.CrossCheck = &chk
	}
	v.Loads = s.loadsView()
	if v.TLS = s.tlsView(); v.TLS != nil {
		v.TLS.Settings = md(v.TLS.Settings)
		for _, row := range v.TLS.Rows {
			for i := range row {
				row[i] = md(row[i])
			}
		}
	}
	if a := s.Env.Plan.RepsAuto; a != nil && a.Budget > 0 {
		v.Budget = strings.TrimSuffix(a.Budget.String(), "0s")
	}
	for _, c := range s.Cells {
		v.HasCPU = v.HasCPU || c.CPU != nil
	}
	if n := len(s.Cells); n > 0 {
		v.BenchExample = "Benchmark" + string(benchName(s.Cells[n-1].Key))
	}
	return v
}

// shellJoin joins a command line as a shell would read it back: an
// argument with a space or a shell character (a command target's
// -targets 'cmd:./api -listen {addr}') in single quotes.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@%+") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// header says what ran, when, and under which load.
func header(env results.Env) (command, ran, load string) {
	command = shellJoin(env.Command)
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
	if p := env.Plan; p.Paired != nil && len(p.LoadList()) == 1 && p.LoadList()[0] == results.LoadBuiltin {
		// One engine session a start of the servers, a window a command.
		load = fmt.Sprintf("topobench load -session: -connections %s closed loop, window POOL %s", p.ConnectionsList(), p.WindowsLabel())
		if p.Paired.Lead > 0 {
			load += " lead " + p.Paired.Lead.String()
		}
	}
	if t := env.Plan.TLS; t != nil && load != "" {
		load += "; over " + t.String() + ", each path over TLS compared with standalone-tls"
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

// machine lists the hardware and software the sweep ran on.
func machine(env results.Env, isolated string) (rows [][2]string) {
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
	return rows
}

// sysctlTable is the kernel settings in effect, for both renderers: the
// host's, and beside them the ones the run gave its network namespaces
// (-isolate netns), which are what nginx and the load actually listened and
// connected under.
func sysctlTable(env results.Env) (head []string, rows [][]string) {
	if len(env.NetnsSysctls) == 0 {
		for _, k := range sortedKeys(env.Sysctls) {
			rows = append(rows, []string{k, env.Sysctls[k]})
		}
		return []string{"sysctl", "value"}, rows
	}
	keys := map[string]string{}
	maps.Copy(keys, env.Sysctls)
	maps.Copy(keys, env.NetnsSysctls)
	for _, k := range sortedKeys(keys) {
		rows = append(rows, []string{k, orDash(env.Sysctls[k]), orDash(env.NetnsSysctls[k])})
	}
	return []string{"sysctl", "host", "in the run's network namespaces"}, rows
}

func orDash(v string) string {
	if v == "" {
		return "–"
	}
	return v
}

// resultTable is the table of one group, a row per topology.
func (s summary) resultTable(g analysis.Group) resultTable {
	t := resultTable{Heading: g.Heading(s.ServerCPUs, s.Env.CPUs)}
	for _, c := range s.Rows(g) {
		t.Rows = append(t.Rows, resultRow(c))
	}
	return t
}

// resultRow is one cell's row: rate with its interval, ratio to
// standalone by rate and by CPU cost, rank, CPU per request, latency,
// errors, notes.
func resultRow(c analysis.Cell) []string {
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
		return []string{name, "–", "–", "–", n, "–", "–", "–", "–", "–", "–", "–", "–", "–", notes}
	}
	lat := func(d time.Duration) string {
		if c.Latency.Runs == 0 {
			return "–"
		}
		return numfmt.Dur(d)
	}
	e := c.Errors
	ratio, cost := fmtRatio(c.RatioToStandalone), fmtRatio(c.CostRatio)
	if topology.IsBaseline(c.Topology) {
		ratio = "1.00" // itself
		if c.AA != nil {
			ratio += "; " + aaText(c.AA)
		}
		if c.CostRatio != nil {
			cost = "1.00"
		}
	}
	return []string{
		name, numfmt.Count(c.ReqPerSec.Median), strings.TrimPrefix(pm(c.ReqPerSec.Interval(c.Reps)), "± "),
		numfmt.Count(c.ReqPerSec.Min) + "–" + numfmt.Count(c.ReqPerSec.Max), n,
		ratio, cost, fmtRank(c), cpuCell(c),
		lat(c.Latency.P50), lat(c.Latency.P99), lat(c.Latency.Max),
		fmt.Sprintf("%d/%d/%d/%d", e.Connect, e.Read, e.Write, e.Timeout), fmt.Sprint(e.Status),
		notes,
	}
}

// aaText is a paired sweep's A/A ratio, "A/A 1.004 ± 2.1%", flagged
// when its interval leaves out 1: the sweep's intervals are then too
// narrow to be trusted.
func aaText(r *analysis.Ratio) string {
	t := fmt.Sprintf("A/A %.3f %s", r.Center, pm(r.Interval))
	if r.Differs {
		t += " (EXCLUDES 1: the intervals are too narrow)"
	}
	return t
}

// fmtRank is the cell's rank, with "~" when its order under the next
// faster cell is not settled; "–" for ceilings.
func fmtRank(c analysis.Cell) string {
	switch {
	case c.Rank == 0:
		return "–"
	case c.Rank > 1 && !c.Settled():
		return fmt.Sprintf("%d ~", c.Rank)
	}
	return fmt.Sprint(c.Rank)
}

// fmtCPU is the median CPU µs per request of the load generator, nginx
// and the server: "21 / 47 / 45"; "–" when not measured.
func fmtCPU(cpu *analysis.CPUPerRequest) string {
	if cpu == nil {
		return "–"
	}
	return numfmt.Micros(cpu.Load.Center) + " / " + numfmt.Micros(cpu.Nginx.Median()) + " / " + numfmt.Micros(cpu.Server.Median())
}

// cpuCell is a row's CPU per request: fmtCPU, and in a pair design nginx's
// and the server's with their intervals over the windows: "21 / 47 ± 4% /
// 45 ± 3%".
func cpuCell(c analysis.Cell) string {
	if c.CPU == nil || len(c.Pairs) == 0 && c.AA == nil {
		return fmtCPU(c.CPU)
	}
	part := func(iv *analysis.Interval) string {
		if iv == nil || !iv.Known() {
			return numfmt.Micros(iv.Median())
		}
		return numfmt.Micros(iv.Center) + " " + pm(*iv)
	}
	return numfmt.Micros(c.CPU.Load.Center) + " / " + part(c.CPU.Nginx) + " / " + part(c.CPU.Server)
}

// referenceTable is the 2013 source and its rows beside this sweep's.
func (s summary) referenceTable() (source []string, rows [][]string) {
	src, _, _ := analysis.Reference2013()
	for _, l := range src {
		source = append(source, md(l))
	}
	for _, r := range s.Reference {
		now, ratio := "not measured", "–"
		if r.ReqPerSec != nil {
			now = numfmt.Count(*r.ReqPerSec)
			if r.Ratio != nil {
				ratio = fmt.Sprintf("%.2f", *r.Ratio)
			}
			if r.RatioLo != nil && r.RatioHi != nil && !topology.IsBaseline(r.Topology) {
				ratio += fmt.Sprintf(" (%.2f–%.2f)", *r.RatioLo, *r.RatioHi)
			}
		}
		rows = append(rows, []string{
			strconv.Itoa(r.GOMAXPROCS), r.Topology, numfmt.Count(r.RefReqPerSec), fmt.Sprintf("%.2f", r.RefRatio),
			r.RefErrors.String(), now, ratio,
		})
	}
	return source, rows
}

// fence makes an error message safe inside a fenced code block.
func fence(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "```", "'''"))
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

// levelText is a confidence level for prose: "95%".
func levelText(level float64) string { return fmt.Sprintf("%.4g%%", 100*level) }

func fmtRatio(r *analysis.Ratio) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f %s%s", r.Center, pm(r.Interval), mark(r))
}

// inShort sums up one group in a sentence or three: standalone,
// the nginx topologies fastest first with their ratio, which ratios do
// not differ from standalone and which orders the repetitions do not
// settle.
func (s summary) inShort(g analysis.Group) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s:** ", g)
	s.standaloneInShort(&b, g)
	var via []analysis.Cell
	for _, c := range s.Rows(g) {
		if !c.Ceiling && !topology.IsBaseline(c.Topology) && c.Reps > 0 {
			via = append(via, c)
		}
	}
	// The ranks' order where they are known: a pair design's follows the
	// ratios.
	sort.SliceStable(via, func(i, j int) bool {
		a, b := via[i], via[j]
		if a.Rank > 0 && b.Rank > 0 {
			return a.Rank < b.Rank
		}
		return a.ReqPerSec.Median > b.ReqPerSec.Median
	})
	if len(via) > 0 {
		unknown := viaInShort(&b, via)
		var open []string
		for i := 1; i < len(via); i++ {
			if r := s.Versus(via[i], via[i-1], stats.Confidence); r == nil || !r.Differs {
				open = append(open, via[i-1].Topology+" / "+via[i].Topology)
				unknown = unknown || r == nil || !r.Known()
			}
		}
		if len(open) > 0 {
			fmt.Fprintf(&b, " At 95%% confidence these runs do not settle the order of %s.", strings.Join(open, ", "))
		}
		if unknown {
			fmt.Fprintf(&b, " With %s an interval is unknown (± ∞): a ratio needs %d runs of each.", roundsText(via), analysis.MinRatioRuns())
		}
	}
	if ceil, ok := s.Cell(analysis.Key{Group: g, Topology: analysis.Ceiling}); ok && ceil.Reps > 0 {
		fmt.Fprintf(&b, " The %s ceiling is %s req/s.", analysis.Ceiling, numfmt.Count(ceil.ReqPerSec.Median))
	}
	return b.String()
}

// standaloneInShort is the summing up's first sentence: what standalone
// served, and its check against itself.
func (s summary) standaloneInShort(b *strings.Builder, g analysis.Group) {
	st, ok := s.BaseCell(g)
	if !ok || st.Reps == 0 {
		b.WriteString("standalone was not measured. ")
		return
	}
	server := "Go"
	if g.Target != "" && g.Target != results.TargetGo {
		server = results.TargetFile(g.Target) // a command target's name is a command line
	}
	fmt.Fprintf(b, "standalone %s serves %s req/s", server, numfmt.Count(st.ReqPerSec.Median))
	if e := st.Errors; e.Total() > 0 {
		fmt.Fprintf(b, " (with %s)", e.String())
	}
	b.WriteString(". ")
	if st.AA != nil {
		fmt.Fprintf(b, "Standalone against itself, the sweep's check of its intervals: %s. ", aaText(st.AA))
	}
}

// viaInShort lists the topologies behind nginx, fastest first, with
// their ratio to standalone, and says whether a ratio's interval is
// unknown.
func viaInShort(b *strings.Builder, via []analysis.Cell) (unknown bool) {
	b.WriteString("Behind nginx, fastest first: ")
	for i, c := range via {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s %s", c.Topology, numfmt.Count(c.ReqPerSec.Median))
		var notes []string
		if r := c.RatioToStandalone; r != nil {
			note := fmt.Sprintf("%.2f %s of %s", r.Center, pm(r.Interval), topology.BaselineOf(c.Topology))
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
			fmt.Fprintf(b, " (%s)", strings.Join(notes, ", "))
		}
	}
	b.WriteString(".")
	return unknown
}

// roundsText says how many successful runs the cells have: "3 runs" or
// "3–6 runs".
func roundsText(cs []analysis.Cell) string {
	lo, hi := cs[0].Reps, cs[0].Reps
	for _, c := range cs {
		lo, hi = min(lo, c.Reps), max(hi, c.Reps)
	}
	if lo == hi {
		return numfmt.Plural(lo, "run")
	}
	return fmt.Sprintf("%d–%d runs", lo, hi)
}

// timeSpent says where the sweep's wall time went: "10m2s: 5m24s
// measured, 1m2s waiting for idle servers, ...", largest first after the
// measured time; empty when the records do not say.
func timeSpent(t *analysis.TimeSpent) string {
	if t == nil {
		return ""
	}
	type part struct {
		d    time.Duration
		what string
	}
	parts := []part{
		{t.Settle, "waiting for idle servers"},
		{t.Warmup, "warmups"},
		{t.Startup, "load generators starting"},
		{t.Exit, "load generators stopping"},
		{t.Connect, "opening the pools of connections (and their warmups)"},
		{t.Drain, "draining answers after windows"},
		{t.Lead, "leads before windows (load from idle, not measured)"},
		{t.Check, "the cross-check"},
		{t.Before, "before the first run (checks, builds, calibration)"},
		{t.Other, "starting servers, parity, records"},
	}
	slices.SortStableFunc(parts, func(a, b part) int { return cmp.Compare(b.d, a.d) })
	out := fmt.Sprintf("%s over %s: %s measured", roundSecond(t.Total), numfmt.Plural(t.Runs, "run"), roundSecond(t.Measured))
	for _, p := range parts {
		if p.d >= time.Second {
			out += fmt.Sprintf(", %s %s", roundSecond(p.d), p.what)
		}
	}
	return out
}

func roundSecond(d time.Duration) time.Duration { return d.Round(time.Second) }

// pairedText is the paired design's account: what a pair is, the
// windows, and what of them was not measured; methodRows give each
// ratio's interval.
func (s summary) pairedText() string {
	pd := s.Env.Plan.Paired
	if pd == nil {
		return ""
	}
	out := fmt.Sprintf("paired: each start of the servers opened standalone's pool of connections once, then each other topology's in turn in the same load session, and alternated measured windows of %s of standalone and the topology, in an order drawn for each pair (seed %d); %s. Each ratio to standalone is taken pair by pair", s.Env.Plan.WindowsLabel(), pd.Seed, unmeasured(pd.Lead))
	if pd.Duet {
		out = fmt.Sprintf("duet: each start of the servers ran two sides on the servers' CPUs, standalone's cmd/hello in a process and control group of its own and every topology's servers (nginx and their own cmd/hello) in another, the two groups of equal CPU weight, so that each side had half of the CPUs when both were busy: a nearby operating point, not the one a server alone on them reaches. The load session opened standalone's pool of connections once, then each other topology's in turn, and ran measured windows of %s of both at the same time, the one to start first drawn for each pair, and in the A/A which side played standalone (seed %d); %s. The load generator's CPU per request counts both pools' load over one pool's answers. Each ratio to standalone is taken pair by pair", s.Env.Plan.WindowsLabel(), pd.Seed, unmeasured(pd.Lead))
	}
	if len(s.methodRows()) > 0 {
		out += "; each ratio's interval is in the table below"
	}
	return out + "."
}

// unmeasured says what of a paired window's time was not measured.
func unmeasured(lead time.Duration) string {
	if lead <= 0 {
		return "the drains between windows are not measured"
	}
	return fmt.Sprintf("each window's first %s (the pool starting from idle) and the drains between windows are not measured", lead)
}

package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// reportHeader is what summary.md and report.html open with, at most
// five lines: what ran, when, on which machine, under which design, and
// the two settings that move the ratios most, nginx's upstream pool and
// the CPU split. Empty lines are left out.
type reportHeader struct {
	Command, Ran, Machine, Design, Setup string
}

// head is the sweep's header, its figures as plain text (the renderers
// escape them).
func (s summary) head() reportHeader {
	h := reportHeader{}
	h.Command, h.Ran, _ = header(s.Env)
	if env := s.Env; env.CPUModel != "" || env.CPUs > 0 {
		h.Machine = orUnknown(env.CPUModel)
		if env.CPUs > 0 {
			h.Machine += fmt.Sprintf(", %d logical CPUs", env.CPUs)
		}
	}
	if len(s.Env.Plan.Topologies) == 0 {
		return h
	}
	h.Design = s.designLine()
	h.Setup = upstreamPool(s.Env) + "; " + orUnknown(s.CPUSplit)
	switch s.Env.Plan.Isolation {
	case results.IsolateNetns:
		h.Setup += ", in two network namespaces"
	case results.IsolateNone:
		h.Setup += ", on one loopback"
	}
	return h
}

// designLine is the design in a sentence: rounds or pairs, how many, and
// when the sweep stopped; the full account is under "How it was
// measured".
func (s summary) designLine() string {
	p := s.Env.Plan
	load := "wrk " + loadArgs(p)
	if ls := p.LoadList(); len(ls) == 1 && ls[0] == results.LoadBuiltin {
		loop := "closed loop"
		if slices.ContainsFunc(p.Schedules, results.Schedule.OpenLoop) {
			loop = "open loop at the plan's rates"
		}
		load = fmt.Sprintf("the built-in engine (%s, %s connections)", loop, p.ConnectionsList())
	} else if len(ls) > 1 || loadArgs(p) == "" {
		load = "loads " + joinLoads(ls)
	}
	a := p.RepsAuto
	if pd := p.Paired; pd != nil {
		out := fmt.Sprintf("paired windows of %s", p.WindowsLabel())
		if pd.Lead > 0 {
			out += fmt.Sprintf(" (each after a %s lead)", pd.Lead)
		}
		if pd.Duet {
			out = fmt.Sprintf("duet windows of %s", p.WindowsLabel())
			if pd.Lead > 0 {
				out += fmt.Sprintf(" (each after a %s lead)", pd.Lead)
			}
			out += ", standalone's and a topology's at the same time, each side's servers in a control group of equal CPU weight (half the servers' CPUs each when both are busy), under " + load
		} else {
			out += ", standalone's and a topology's alternated in one load session under " + load
			if pd.Own {
				out += "; standalone's server in a process of its own"
			} else {
				out += "; one cmd/hello served standalone and every backend"
			}
		}
		if d, ok := analysis.PairedDesignOf(p); ok {
			return out + fmt.Sprintf("; on a budget of %s, %s, or until the time ran out", budgetText(a), d)
		}
		return out + fmt.Sprintf("; %d pairs a topology, each ratio to standalone taken pair by pair", pd.Pairs)
	}
	out := "rounds of " + load + " interleaved across topologies: "
	switch {
	case a != nil && a.Budget > 0:
		out += fmt.Sprintf("%d to %d runs a cell on a budget of %s, added where the ratios to standalone were widest until each was within ±%s or the time ran out", p.Reps, a.Max, budgetText(a), numfmt.Pct(a.Within))
	case a != nil && a.Max > p.Reps:
		out += fmt.Sprintf("%d to %d runs a cell, added until each ratio to standalone was within ±%s", p.Reps, a.Max, numfmt.Pct(a.Within))
	default:
		out += numfmt.Plural(p.Reps, "run") + " a cell"
	}
	if a != nil && a.Confidence > 0 {
		out += fmt.Sprintf(" (intervals at %.4g%%, as stopping by looking needs)", 100*a.Level())
	}
	return out
}

func budgetText(a *results.RepsAuto) string {
	return strings.TrimSuffix(a.Budget.String(), "0s")
}

func joinLoads(ls []results.Generator) string {
	var out []string
	for _, l := range ls {
		out = append(out, string(l))
	}
	return strings.Join(out, ", ")
}

// upstreamPool names nginx's upstream keepalive pools against the
// clients: "upstream keepalive 300 (2013's) for 5000 clients", or "sized
// to the clients (auto, 2000) for 2000 clients". The size is what
// nginx was configured with (env.json's nginx record), else the plan's.
func upstreamPool(env results.Env) string {
	p := env.Plan
	if !analysis.ViaUpstream(p.Topologies) {
		return "no upstream pool (no topology passes nginx to a server)"
	}
	most := p.MostConnections()
	var pools []string
	for _, k := range p.KeepaliveList() {
		size := k.Size(most)
		if env.Nginx != nil {
			if n, ok := env.Nginx.Keepalive[k.String()]; ok {
				size = n
			}
		}
		switch {
		case k.Or() == results.KeepaliveAuto:
			pools = append(pools, fmt.Sprintf("sized to the clients (auto, %d)", size))
		case k.Or() == results.DefaultKeepalive:
			pools = append(pools, fmt.Sprintf("%d (2013's)", size))
		default:
			pools = append(pools, fmt.Sprint(size))
		}
	}
	out := "upstream keepalive " + strings.Join(pools, " and ")
	if most > 0 {
		out += fmt.Sprintf(" for %d clients", most)
	}
	if len(pools) > 1 {
		out += ", a group each"
	}
	return out
}

// tableSection is a section of one table with a title and a paragraph
// before it: the paired design's cross-check (crossCheck), and the load
// generators side by side (loadsView).
type tableSection struct {
	Title, Intro string
	Head         []string
	Rows         [][]string
}

// crossCheck is the paired design's cross-check beside the ratios it
// checks: another load generator's one run of standalone and of each
// topology, their ratio, and the pairs' ratio for the same topology; ok
// is false without one in the plan.
func (s summary) crossCheck() (v tableSection, ok bool) {
	p := s.Env.Plan
	if p.Paired == nil || p.Paired.Check == nil {
		return v, false
	}
	chk := p.Paired.Check
	paired := p.LoadList()[0]
	v.Title = fmt.Sprintf("Cross-check (%s)", chk.Load)
	v.Intro = fmt.Sprintf("One %s %s run of each after the pairs, at GOMAXPROCS=%d: another load generator's ratio beside the pairs' for the same topology. One run each has no interval; read it as agreeing when it falls near the pairs' interval.", chk.Duration, chk.Load, chk.GOMAXPROCS)
	v.Head = []string{"topology", "GOMAXPROCS", fmt.Sprintf("%s standalone req/s", chk.Load), fmt.Sprintf("%s topology req/s", chk.Load),
		fmt.Sprintf("%s ratio", chk.Load), fmt.Sprintf("paired ratio (%s)", paired)}
	for _, c := range s.CrossChecks() {
		if topology.IsBaseline(c.Topology) {
			continue
		}
		rate := func(c analysis.Cell) string {
			if c.Reps == 0 {
				return "failed"
			}
			return numfmt.Count(c.ReqPerSec.Median)
		}
		st := "not measured"
		if sc, ok := s.Cell(analysis.Key{Group: c.Group, Topology: topology.BaselineOf(c.Topology)}); ok {
			st = rate(sc)
		}
		ratio := "–"
		if r := c.RatioToStandalone; r != nil {
			ratio = numfmt.Figure(r.Center)
		}
		pr := "not measured"
		k := c.Key
		k.Load = paired
		if pc, ok := s.Cell(k); ok && pc.RatioToStandalone != nil {
			r := pc.RatioToStandalone
			pr = fmt.Sprintf("%s ± %s", numfmt.Figure(r.Center), numfmt.HalfWidth(r.HalfWidth()))
		}
		v.Rows = append(v.Rows, []string{c.Topology, fmt.Sprint(c.GOMAXPROCS), st, rate(c), ratio, pr})
	}
	if len(v.Rows) == 0 {
		v.Intro = fmt.Sprintf("The cross-check with %s did not run (the sweep stopped before it).", chk.Load)
	}
	return v, true
}

// methodRows are a paired sweep's ratios with the method of each
// interval and the lag-1 autocorrelation of its neighbouring pairs'
// ratios; none for rounds.
func (s summary) methodRows() [][]string {
	if s.Env.Plan.Paired == nil {
		return nil
	}
	var rows [][]string
	for _, c := range s.Cells {
		r := c.RatioToStandalone
		if topology.IsBaseline(c.Topology) {
			r = c.AA
		}
		if r == nil || r.Method == "" {
			continue
		}
		lag := "–"
		if r.Lag1 != nil {
			lag = fmt.Sprintf("%+.2f", *r.Lag1)
		}
		name := c.Topology
		if topology.IsBaseline(c.Topology) {
			name += " (A/A)"
		}
		rows = append(rows, []string{c.Group.String(), name, fmt.Sprint(r.N), r.Method, lag})
	}
	return rows
}

// methodHead heads methodRows.
var methodHead = []string{"group", "ratio to standalone", "pairs", "interval", "lag-1"}

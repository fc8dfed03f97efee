package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Of the paths measured, a user's own Go service can take standalone and
// net/http behind nginx, over TCP or a unix socket: the FastCGI paths'
// servers are internal/fastcgi, which another module cannot import, and
// net/http/fcgi, another protocol than the service's; the ceilings have
// no Go behind them.
var (
	ownPaths  = []string{"nginx-http", "nginx-http-unix"}
	fastPaths = []string{"nginx-fcgi-fast-tcp", "nginx-fcgi-fast-unix"}
	fcgiPaths = []string{"nginx-fcgi-tcp", "nginx-fcgi-unix"}
)

// Choice is what one group's figures say about putting a user's own Go
// service behind nginx.
type Choice struct {
	Group Group `json:"group"`
	// Label names the group by the dimensions the choices' groups differ
	// in, "GOMAXPROCS=8"; empty with one group.
	Label string `json:"label,omitempty"`
	// Path is the cheaper of nginx-http and nginx-http-unix by their
	// ratio to standalone, Other the other one where it was measured.
	Path  string `json:"path"`
	Other string `json:"other,omitempty"`
	// Settled says whether Path's lead over Other is settled at 95%, by
	// the rule the ranks are settled by (Summary.Versus) over a pair
	// design's intervals; nil without Other, or in a sweep of rounds.
	Settled *bool `json:"settled,omitempty"`
	// Sentence says it with the figures: the ratio, nginx's and the
	// backend's CPU µs per request and standalone's, with their
	// intervals, the order, and what the FastCGI paths would change. A
	// figure not measured is left out.
	Sentence string `json:"sentence"`
}

// Choose writes each group's Choice, in table order: the groups of a
// closed loop with standalone and a net/http path behind nginx measured
// (a target rate sets its own rates); none without.
func Choose(s Summary) []Choice {
	var out []Choice
	for _, g := range s.Groups() {
		if g.Schedule.Probe || g.Schedule.OpenLoop() {
			continue
		}
		st, ok := s.BaseCell(g)
		if !ok || st.Reps == 0 {
			continue
		}
		own := s.measured(g, ownPaths)
		if len(own) == 0 {
			continue
		}
		c := Choice{Group: g, Path: own[0].Topology}
		if len(own) > 1 {
			c.Other = own[1].Topology
			if s.Env.Plan.Paired != nil {
				v := s.Versus(own[1], own[0], s.RatioLevel())
				c.Settled = new(v != nil && v.Differs)
			}
		}
		out = append(out, c)
	}
	labels := differing(out)
	for i := range out {
		out[i].Label = labels[i]
		out[i].Sentence = s.choiceSentence(out[i])
	}
	return out
}

// differing labels each choice's group by the dimensions in which the
// groups differ ("work=0" for one whose value is unset); none for one.
func differing(cs []Choice) []string {
	labels := make([]string, len(cs))
	if len(cs) < 2 {
		return labels
	}
	dims := make([][]results.Dim, len(cs))
	for i, c := range cs {
		dims[i] = c.Group.Dims()
	}
	for d := range dims[0] {
		same := true
		for i := range cs {
			same = same && dims[i][d].Value == dims[0][d].Value
		}
		if same {
			continue
		}
		for i := range cs {
			v := cmp.Or(dims[i][d].Value, dims[i][d].Usual, "0")
			labels[i] = strings.TrimSpace(labels[i] + " " + dims[i][d].Label + "=" + v)
		}
	}
	return labels
}

// measured are the cells of g among tops with a ratio to standalone,
// the greatest ratio first.
func (s Summary) measured(g Group, tops []string) []Cell {
	var cs []Cell
	for _, t := range tops {
		if c, ok := s.Cell(Key{g, t}); ok && c.RatioToStandalone != nil && !math.IsNaN(c.RatioToStandalone.Center) {
			cs = append(cs, c)
		}
	}
	slices.SortStableFunc(cs, func(a, b Cell) int {
		return cmp.Compare(b.RatioToStandalone.Center, a.RatioToStandalone.Center)
	})
	return cs
}

// choiceSentence says c: "Your own Go service behind nginx: over a unix
// socket (nginx-http-unix) it serves 0.46 ± 5% of standalone's rate,
// nginx spending 34 µs ± 7% and the backend 29 µs ± 7% a request
// (standalone 25 µs ± 2%); its lead over TCP (nginx-http, 0.40 ± 11%)
// is settled at 95%. A FastCGI backend would change it: internal/fastcgi
// 0.55 ± 4%, net/http/fcgi 0.21–0.27.", the group's label after
// "nginx" where it has one.
func (s Summary) choiceSentence(c Choice) string {
	var b strings.Builder
	if results.OwnTarget(c.Group.Target) {
		b.WriteString("Your service behind nginx")
	} else {
		b.WriteString("Your own Go service behind nginx")
	}
	if c.Label != "" {
		b.WriteString(", " + c.Label)
	}
	best, _ := s.Cell(Key{c.Group, c.Path})
	st, _ := s.Cell(Key{c.Group, topology.BaselineOf(c.Path)})
	fmt.Fprintf(&b, ": %s (%s) it serves %s of standalone's rate", transport(c.Path), c.Path, ratioFigure(best.RatioToStandalone))
	b.WriteString(cpuFigures(best, st))
	b.WriteString(s.p99Figure(c))
	if c.Other != "" {
		other, _ := s.Cell(Key{c.Group, c.Other})
		of := ratioFigure(other.RatioToStandalone)
		name := strings.TrimPrefix(transport(c.Other), "over ")
		switch {
		case c.Settled == nil:
			fmt.Fprintf(&b, "; %s (%s) %s", name, c.Other, of)
		case *c.Settled:
			fmt.Fprintf(&b, "; its lead over %s (%s, %s) is settled at 95%%", name, c.Other, of)
		default:
			fmt.Fprintf(&b, "; its lead over %s (%s, %s) is not settled at 95%%", name, c.Other, of)
		}
	}
	b.WriteString(".")
	var fcgi []string
	if f := familyFigure(s.measured(c.Group, fastPaths)); f != "" {
		fcgi = append(fcgi, "internal/fastcgi "+f)
	}
	if f := familyFigure(s.measured(c.Group, fcgiPaths)); f != "" {
		fcgi = append(fcgi, "net/http/fcgi "+f)
	}
	if len(fcgi) > 0 {
		b.WriteString(" A FastCGI backend would change it: " + strings.Join(fcgi, ", ") + ".")
	}
	return b.String()
}

// cpuFigures is the sentence's CPU per request of the path and of
// standalone: ", nginx spending 34 µs ± 7% and the backend 29 µs ± 7% a
// request (standalone 25 µs ± 2%)"; the figures not measured are left
// out, and all of it without any.
func cpuFigures(c, st Cell) string {
	var nginx, server, alone *Interval
	if c.CPU != nil {
		nginx, server = c.CPU.Nginx, c.CPU.Server
	}
	if st.CPU != nil {
		alone = st.CPU.Server
	}
	var parts []string
	if nginx != nil {
		parts = append(parts, "nginx spending "+microsFigure(*nginx))
	}
	switch {
	case server != nil && nginx != nil:
		parts = append(parts, "the backend "+microsFigure(*server))
	case server != nil:
		parts = append(parts, "the backend spending "+microsFigure(*server))
	}
	out := ""
	if len(parts) > 0 {
		out = ", " + strings.Join(parts, " and ") + " a request"
	}
	if alone != nil {
		if out == "" {
			return " (standalone's server " + microsFigure(*alone) + " a request)"
		}
		out += " (standalone " + microsFigure(*alone) + ")"
	}
	return out
}

// p99Figure is the sentence's added p99 of the path: ", its p99 1.20 ms
// ± 248 µs above standalone's at 4,000 req/s (5,000 connections)"; empty
// where the latency phase did not measure it.
func (s Summary) p99Figure(c Choice) string {
	a := s.AddedFor(c.Group)
	if a == nil {
		return ""
	}
	p := a.Path(c.Path)
	if p == nil || p.Added == nil || p.Added[AddedP99].N == 0 || math.IsNaN(p.Added[AddedP99].Mean) {
		return ""
	}
	m := p.Added[AddedP99]
	side := "above"
	if m.Mean < 0 {
		side = "below"
	}
	out := ", its p99 " + numfmt.Dur(secondsOf(math.Abs(m.Mean)))
	if m.Known() {
		out += " ± " + numfmt.Dur(secondsOf(m.Hi-m.Mean))
	}
	return out + " " + side + " standalone's at " + a.RateText()
}

// familyFigure is a family of paths' ratio to standalone: the one
// measured with its interval, "0.55 ± 4%", or the range of two, "0.21–0.27";
// empty for none.
func familyFigure(cs []Cell) string {
	switch len(cs) {
	case 0:
		return ""
	case 1:
		return ratioFigure(cs[0].RatioToStandalone)
	}
	return fmt.Sprintf("%.2f–%.2f", cs[len(cs)-1].RatioToStandalone.Center, cs[0].RatioToStandalone.Center)
}

// ratioFigure is "0.46 ± 5%", the interval left out where unknown.
func ratioFigure(r *Ratio) string {
	return fmt.Sprintf("%.2f", r.Center) + halfWidth(r.Interval)
}

// microsFigure is "34 µs ± 7%", the interval left out where unknown.
func microsFigure(iv Interval) string {
	return numfmt.Micros(iv.Center) + " µs" + halfWidth(iv)
}

func halfWidth(iv Interval) string {
	if hw := iv.HalfWidth(); !math.IsInf(hw, 0) {
		return " ± " + numfmt.Pct(hw)
	}
	return ""
}

// transport is how nginx reaches a path's server: "over TCP", "over a
// unix socket".
func transport(top string) string {
	t, _ := topology.Lookup(top)
	switch t.Backend {
	case topology.HTTPUnix, topology.FCGIUnix, topology.FastUnix:
		return "over a unix socket"
	}
	return "over TCP"
}

// OwnPath reports whether a user's own Go service can take the path
// behind nginx: net/http over TCP or a unix socket.
func OwnPath(top string) bool { return slices.Contains(ownPaths, top) }

// GoBehind names the server behind a path for a target and how it is
// reached: for cmd/hello "net/http over a unix socket", "net/http, no
// nginx" for standalone; for the user's own (a command or a running
// service) "your service over TCP"; for another built-in target its
// name. Empty for the ceilings and unknown topologies.
func GoBehind(target, top string) string {
	t, err := topology.Lookup(top)
	if err != nil || t.Reference || t.Backend == topology.NoBackend {
		return ""
	}
	server := target
	switch {
	case results.OwnTarget(target):
		server = "your service"
	case target != "" && target != results.TargetGo:
		// Another server topobench builds, by its name.
	case t.Backend == topology.HTTPTCP, t.Backend == topology.HTTPUnix:
		server = "net/http"
	case t.Backend == topology.FCGITCP, t.Backend == topology.FCGIUnix:
		server = "net/http/fcgi"
	case t.Backend == topology.FastTCP, t.Backend == topology.FastUnix:
		server = "internal/fastcgi"
	default:
		return ""
	}
	if !t.ViaNginx() {
		return server + ", no nginx"
	}
	return server + " " + transport(top)
}

package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/topology"
)

// tlsView is the TLS table (analysis.TLSTable) as both reports show it:
// a title, the settings line, the table, and how to read it. Top says it
// opens the report, the plan being all TLS.
type tlsView struct {
	Title, Settings string
	Head            []string
	Num             []bool
	Rows            [][]string
	// Marked rows are flagged: load-bound, or a warning applies.
	Marked []bool
	// Read is how to read the table, a point each: its bold term and
	// what follows.
	Read [][2]string
	Top  bool
}

// tlsView is the TLS table's view; nil when the plan has no TLS
// topology.
func (s summary) tlsView() *tlsView {
	t := s.TLSTable()
	if t == nil {
		return nil
	}
	rate, unit, regime := "req/s", "req", "kept connections"
	if t.Handshakes {
		rate, unit, regime = "handshakes/s", "handshake", "a handshake a request"
	}
	v := &tlsView{Title: "TLS: " + regime, Settings: tlsSettings(t), Top: t.AllTLS}
	groups, loads := tlsDims(t)
	v.Head, v.Num = []string{"path", "TLS by", "nginx to Go", "regime"}, []bool{false, false, false, false}
	if groups {
		v.Head, v.Num = append(v.Head, "group"), append(v.Num, false)
	}
	if loads {
		v.Head, v.Num = append(v.Head, "load"), append(v.Num, false)
	}
	v.Head = append(v.Head, rate, "n", "vs "+topology.StandaloneTLS, "nginx µs/"+unit, "Go µs/"+unit)
	v.Num = append(v.Num, true, true, true, true, true)
	if loads {
		v.Head, v.Num = append(v.Head, "vs "+string(t.Loads[0])), append(v.Num, true)
	}
	v.Head, v.Num = append(v.Head, "notes"), append(v.Num, false)
	for _, r := range t.Rows {
		row := []string{r.Key.Topology, r.Terminates, cmp.Or(r.Upstream, "none"), regime}
		if groups {
			g := r.Key.Group
			g.Load = ""
			row = append(row, cmp.Or(g.String(), "all"))
		}
		if loads {
			row = append(row, string(r.Key.Load))
		}
		row = append(row, tlsFigures(t, r)...)
		if loads {
			row = append(row, tlsVsLoad(r))
		}
		row = append(row, strings.Join(tlsNotes(r), ", "))
		v.Rows = append(v.Rows, row)
		v.Marked = append(v.Marked, r.Flagged())
	}
	v.Read = tlsRead(t, unit, levelText(s.RatioLevel()))
	return v
}

// tlsDims says whether the table needs a group column (more than one
// group once the load is set aside) and the load columns (more than one
// generator).
func tlsDims(t *analysis.TLSTable) (groups, loads bool) {
	var gs []analysis.Group
	for _, r := range t.Rows {
		g := r.Key.Group
		g.Load = ""
		if !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return len(gs) > 1, len(t.Loads) > 1
}

// tlsFigures are a row's rate with its interval, its runs, its ratio to
// standalone-tls, nginx's and Go's µs. A load-bound rate is a floor of
// the path's, and a ratio to or of one is a bound, never a figure.
func tlsFigures(t *analysis.TLSTable, r analysis.TLSRow) []string {
	n := fmt.Sprint(r.Reps)
	if r.Failed > 0 {
		n = fmt.Sprintf("%d (+%d failed)", r.Reps, r.Failed)
	}
	if r.Reps == 0 {
		return []string{"–", n, "–", "–", "–"}
	}
	rate := numfmt.Count(r.Rate.Center) + " " + pm(r.Rate)
	if r.LoadBound {
		rate = "≥ " + rate
	}
	ratio := "1.00 (baseline)"
	if !r.Baseline {
		ratio = tlsRatio(r, tlsBaselineBound(t, r))
	}
	nginx := "none"
	if r.Terminates == "nginx" {
		nginx = microsOf(r.NginxUS)
	}
	return []string{rate, n, ratio, nginx, microsOf(r.BackendUS)}
}

// tlsRatio is a row's ratio to standalone-tls: "0.45 ± 3%", a lower
// bound when the row was load-bound, an upper one when its baseline was,
// and unknown when both were.
func tlsRatio(r analysis.TLSRow, baseBound bool) string {
	text := fmtRatio(r.Ratio)
	switch {
	case r.Ratio == nil:
		return text
	case r.LoadBound && baseBound:
		return "– (both load-bound)"
	case r.LoadBound:
		return "≥ " + text
	case baseBound:
		return "≤ " + text
	}
	return text
}

// tlsBaselineBound reports whether r's baseline, standalone-tls in its
// group under its load, was load-bound.
func tlsBaselineBound(t *analysis.TLSTable, r analysis.TLSRow) bool {
	for _, b := range t.Rows {
		if b.Baseline && b.Key.Group == r.Key.Group {
			return b.LoadBound
		}
	}
	return false
}

// tlsVsLoad is a row's rate under its generator over the first's, round
// by round; empty on the first generator's rows.
func tlsVsLoad(r analysis.TLSRow) string {
	if r.VsLoad == nil {
		return ""
	}
	return loadRatioText(r.VsLoad)
}

// tlsNotes are the row's cell's notes, load-bound spelled out first.
func tlsNotes(r analysis.TLSRow) []string {
	var out []string
	if r.LoadBound {
		out = append(out, "load-bound: a floor, not a result")
	}
	for _, n := range r.Notes {
		if !r.LoadBound || n != "load-bound" {
			out = append(out, n)
		}
	}
	return out
}

// tlsSettings is the table's settings line: the TLS, the HTTP spoken,
// the generators and the connections.
func tlsSettings(t *analysis.TLSTable) string {
	resume := "off: every handshake a full one"
	if t.TLS.Resume {
		resume = "on (session tickets)"
	}
	http := "HTTP/1.1"
	if t.Streams > 0 {
		http = fmt.Sprintf("HTTP/2 under h2load, %s a connection", numfmt.Plural(t.Streams, "stream"))
	}
	loads := make([]string, len(t.Loads))
	for i, l := range t.Loads {
		loads[i] = string(l)
	}
	conns := make([]string, len(t.Connections))
	for i, c := range t.Connections {
		conns[i] = numfmt.Count(float64(c))
	}
	regime := "kept connections"
	if t.Handshakes {
		regime = "a new connection and handshake a request (-close)"
	}
	return fmt.Sprintf("TLS %s, key %s, suite %s, resumption %s; %s; load %s at %s connections; %s.",
		t.TLS.Version, t.TLS.Key, t.Suite, resume, http, strings.Join(loads, ", "), strings.Join(conns, ", "), regime)
}

// tlsRead is how to read the table, a term and its explanation a point.
func tlsRead(t *analysis.TLSTable, unit, level string) [][2]string {
	rate := [2]string{"req/s", "is requests per second over connections kept open: the handshake is paid once a connection, so the table measures what TLS's record layer costs on each path"}
	if t.Handshakes {
		rate = [2]string{"handshakes/s", "is requests per second with a new connection each: every request pays a TLS handshake (a resumed one with resumption on), so the table measures handshakes"}
	}
	rate[1] += "; its ± is the median's 95% interval, n the runs."
	per := "request"
	if t.Handshakes {
		per = "handshake"
	}
	out := [][2]string{rate,
		{"vs " + topology.StandaloneTLS, "is the path's rate over Go terminating TLS itself in the same group, with its " + level + " interval; \"~\" marks a ratio not shown to differ from 1."},
		{"nginx µs/" + unit + ", Go µs/" + unit, "are nginx's and the Go backend's CPU time per " + per + ", medians with their intervals; on standalone-tls, Go's includes the TLS."},
		{"load-bound", "rows' load generator used most of its CPUs: the rate is a floor of the path's (≥), a ratio of it a lower bound, a ratio to a load-bound standalone-tls an upper one (≤); give the load more CPUs before reading it as a result."},
	}
	if len(t.Loads) > 1 {
		out = append(out, [2]string{"vs " + string(t.Loads[0]), "is the row's generator's rate over " + string(t.Loads[0]) + "'s on the same path, round by round: near 1 the two agree."})
	}
	return out
}

package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/topology"
)

// costsTable is the table beside the choice (analysis.Choose): each
// path through nginx with Go behind it, and standalone first, with its
// ratio to standalone and nginx's and the backend's CPU µs per request,
// three columns a group the choice is about (the ratio alone where no
// path measured CPU).
type costsTable struct {
	Head []string
	// Num marks the right-aligned columns; CPU says the table has the
	// CPU columns.
	Num  []bool
	CPU  bool
	Rows [][]string
}

// costs is the choice's table; nil without a choice.
func (s summary) costs() *costsTable {
	if len(s.Choices) == 0 {
		return nil
	}
	cpu := false
	for _, c := range s.Cells {
		cpu = cpu || c.CPU != nil && !topology.IsBaseline(c.Topology) && (c.CPU.Nginx != nil || c.CPU.Server != nil)
	}
	t := &costsTable{Head: []string{"path", "Go behind it"}, Num: []bool{false, false}, CPU: cpu}
	for _, c := range s.Choices {
		label := c.Label
		if label != "" {
			label += " "
		}
		t.Head = append(t.Head, label+"vs standalone")
		t.Num = append(t.Num, true)
		if cpu {
			t.Head = append(t.Head, label+"nginx µs/req", label+"backend µs/req")
			t.Num = append(t.Num, true, true)
		}
		if a := s.AddedFor(c.Group); a != nil {
			at := " at " + numfmt.Count(a.Rate) + " req/s"
			t.Head = append(t.Head, label+"added p50"+at, label+"added p99"+at)
			t.Num = append(t.Num, true, true)
		}
	}
	// Standalone, then the paths a user's own service can take.
	tops := s.Topologies()
	slices.SortStableFunc(tops, func(a, b string) int {
		rank := func(t string) int {
			switch {
			case topology.IsBaseline(t):
				return 0
			case analysis.OwnPath(t):
				return 1
			}
			return 2
		}
		return cmp.Compare(rank(a), rank(b))
	})
	for _, top := range tops {
		if !costsRow(top) {
			continue
		}
		row := []string{top, s.behind(top)}
		for _, c := range s.Choices {
			cells := costsCells(s.Summary, analysis.Key{Group: c.Group, Topology: top})
			if !cpu {
				cells = cells[:1]
			}
			row = append(row, cells...)
			if a := s.AddedFor(c.Group); a != nil {
				row = append(row, addedCells(*a, top)...)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// behind is the costs table's "Go behind it" of a path: each server the
// choices' groups measured behind it (analysis.GoBehind), once each, in
// the choices' order, so a user's own service is never called net/http.
func (s summary) behind(top string) string {
	var names []string
	for _, c := range s.Choices {
		if n := analysis.GoBehind(c.Group.Target, top); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, "; ")
}

// costsRow reports whether a topology is a row of the costs table:
// standalone, and every path through nginx with Go behind it.
func costsRow(top string) bool {
	t, err := topology.Lookup(top)
	return err == nil && !t.Reference && t.Backend != topology.NoBackend
}

// costsCells are one cell's ratio, nginx µs and backend µs, each with
// its interval as the results table writes it; "–" where not measured,
// and "none" for standalone's nginx.
func costsCells(s analysis.Summary, k analysis.Key) []string {
	out := []string{"–", "–", "–"}
	c, ok := s.Cell(k)
	if !ok || c.Reps == 0 {
		return out
	}
	out[0] = fmtRatio(c.RatioToStandalone)
	if topology.IsBaseline(k.Topology) {
		out[0], out[1] = "1.00", "none"
	}
	if c.CPU != nil {
		if !topology.IsBaseline(k.Topology) {
			out[1] = microsOf(c.CPU.Nginx)
		}
		out[2] = microsOf(c.CPU.Server)
	}
	return out
}

// addedCells are top's added p50 and p99 in a latency phase, "" for
// standalone, "–" where not measured.
func addedCells(a analysis.AddedLatency, top string) []string {
	if topology.IsBaseline(top) {
		return []string{"", ""}
	}
	p := a.Path(top)
	if p == nil || p.Added == nil {
		return []string{"–", "–"}
	}
	return []string{analysis.DiffText(p.Added[analysis.AddedP50]), analysis.DiffText(p.Added[analysis.AddedP99])}
}

// microsOf is microsText of iv; "–" when not measured.
func microsOf(iv *analysis.Interval) string {
	if iv == nil {
		return "–"
	}
	return microsText(*iv)
}

// microsText is "34 ± 7%", the interval left out where unknown.
func microsText(iv analysis.Interval) string {
	if !iv.Known() {
		return numfmt.Micros(iv.Center)
	}
	return numfmt.Micros(iv.Center) + " " + pm(iv)
}

// choiceText is the choice's sentences as summary.md opens with
// them: one paragraph, or a list of one a group.
func (s summary) choiceText() string {
	var lines []string
	for _, c := range s.Choices {
		lines = append(lines, md(c.Sentence))
	}
	if len(lines) < 2 {
		return strings.Join(lines, "")
	}
	return "- " + strings.Join(lines, "\n- ")
}

// Markdown is the table's header, alignment and rows as summary.md
// writes them.
func (t costsTable) Markdown() []string {
	align := make([]string, len(t.Head))
	for i := range align {
		align[i] = "---"
		if t.Num[i] {
			align[i] = "--:"
		}
	}
	out := []string{"| " + strings.Join(t.Head, " | ") + " |", "|" + strings.Join(align, "|") + "|"}
	for _, r := range t.Rows {
		esc := make([]string, len(r))
		for i, c := range r {
			esc[i] = md(c)
		}
		out = append(out, "| "+strings.Join(esc, " | ")+" |")
	}
	return out
}

// htmlCosts is the costs table as report.html shows it; nil without a
// choice.
func (s summary) htmlCosts() *htmlTable {
	t := s.costs()
	if t == nil {
		return nil
	}
	caption := "What each path through nginx costs: its rate over standalone's"
	if t.CPU {
		caption += ", and nginx's and the backend's CPU µs per request"
	}
	return &htmlTable{Caption: caption, Head: t.Head, Num: t.Num, Rows: t.Rows}
}

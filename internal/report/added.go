package report

import (
	"fmt"
	"time"

	"github.com/topobench/topobench/internal/analysis"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/stats"
)

// addedTable is a block's latency phase (analysis.AddedLatency) as a
// table: each path's p50, p99 and p99.9 at the phase's rate, what it
// adds to standalone's, and its runs with those flagged beside.
type addedTable struct {
	Title string
	costsTable
}

// added are the latency phases' tables, a block each; nil without one.
func (s summary) added() []addedTable {
	var out []addedTable
	for _, a := range s.Latency {
		title := "Added latency at " + a.RateText()
		if a.Fraction > 0 {
			title += fmt.Sprintf(", %s of the slowest path's req/s in the pairs (each side on half the servers' CPUs)", numfmt.Pct(a.Fraction))
		}
		title += fmt.Sprintf(", GOMAXPROCS=%d", a.GOMAXPROCS)
		if a.Target != "" && a.Target != "go" {
			title += ", " + a.Target
		}
		t := addedTable{Title: title, costsTable: costsTable{
			Head: []string{"path", "p50", "p99", "p99.9", "added p50", "added p99", "added p99.9", "runs (flagged)"},
			Num:  []bool{false, true, true, true, true, true, true, true},
		}}
		for _, p := range a.Paths {
			row := []string{p.Topology, latencyOf(p.P50), latencyOf(p.P99), latencyOf(p.P999)}
			for k := range 3 {
				cell := ""
				if p.Added != nil {
					cell = analysis.DiffText(p.Added[k])
				}
				row = append(row, cell)
			}
			row = append(row, fmt.Sprintf("%d (%d)", p.Runs, p.Flagged))
			t.Rows = append(t.Rows, row)
		}
		out = append(out, t)
	}
	return out
}

// latencyOf is a median latency in seconds with its interval's half
// width, "–" without one.
func latencyOf(s stats.Summary) string {
	if s.N == 0 {
		return "–"
	}
	out := numfmt.Dur(seconds(s.Center))
	if s.Known() {
		out += " ± " + numfmt.HalfWidth(s.HalfWidth())
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// addedLines are the latency tables as summary.md's lines: each a bold
// title, then its table.
func (s summary) addedLines() []string {
	var out []string
	for _, t := range s.added() {
		out = append(out, "", "**"+md(t.Title)+"**", "")
		out = append(out, t.Markdown()...)
	}
	return out
}

// htmlAdded are the latency tables as report.html shows them.
func (s summary) htmlAdded() []htmlTable {
	var out []htmlTable
	for _, t := range s.added() {
		out = append(out, htmlTable{Caption: t.Title, Head: t.Head, Num: t.Num, Rows: t.Rows})
	}
	return out
}

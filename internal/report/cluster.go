package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// clusterView is the part of summary.md about a sweep on a cluster: which
// node did what, their clocks, and every run's nodes beside its merge.
type clusterView struct {
	// ClusterNodes are the rows of the nodes table; empty on one machine.
	ClusterNodes [][]string
	ClusterNote  string
	// ClusterRuns are the rows of the per-node table.
	ClusterRuns [][]string
}

// clusterMarkup is how a renderer marks up the cluster tables' cells:
// plain text, a node ID, and the merged row's label. summary.md escapes
// and uses Markdown; report.html leaves escaping to html/template.
type clusterMarkup struct {
	text, code, bold func(string) string
}

var (
	mdMarkup = clusterMarkup{
		text: md,
		code: func(s string) string { return "`" + s + "`" },
		bold: func(s string) string { return "**" + s + "**" },
	}
	plainMarkup = clusterMarkup{text: same, code: same, bold: same}
)

func same(s string) string { return s }

// Heads of the cluster tables, in both renderers.
var (
	clusterNodesHead = []string{"role", "node", "ID", "address", "clock offset"}
	clusterRunsHead  = []string{"cell", "rep", "node", "target req/s", "achieved req/s", "requests", "start skew", "p99", "p99.9", "errors", "notes"}
)

// Prose of the cluster section, in both renderers.
const (
	clusterIntro     = "The servers ran on one node of a cluster and the load came from the others (compare -swarm). Clock offsets are each node's clock minus the harness's, measured when the sweep began (each run's own are in its record)."
	clusterRunsIntro = "Every run's load nodes beside their merge: start skew is how much later than the common start the node began, by the harness's clock; the merged percentiles come from the nodes' histograms merged bucket by bucket (never an average of theirs)."
)

// clusterTables are the cluster section's rows, marked up by m: the
// nodes, the note on how the sweep ran, and each run's nodes followed by
// their merge (failed marks the merged rows of failed runs and the rows
// of late or load-bound nodes). All empty on one machine.
func clusterTables(s analysis.Summary, m clusterMarkup) (nodes [][]string, note string, runs [][]string, flagged []bool) {
	c := s.Env.Cluster
	if c == nil {
		return nil, "", nil, nil
	}
	node := func(role string, n results.EnvNode) []string {
		id := n.ID
		if len(id) > 12 {
			id = id[:12]
		}
		clock := "unknown"
		if n.ClockKnown {
			clock = fmt.Sprintf("%s ± %s", fmtMs(n.ClockOffset), fmtMs(n.ClockUncertainty))
		}
		return []string{role, m.text(n.Hostname), m.code(id), m.text(n.Addr), clock}
	}
	if c.Harness.ID != "" {
		nodes = append(nodes, node("harness (manager)", c.Harness))
	}
	nodes = append(nodes, node("servers", c.Server))
	for i, n := range c.Load {
		nodes = append(nodes, node(fmt.Sprintf("load %d", i), n))
	}
	went := m.text(c.ServerAddr)
	if c.Remote {
		went += " (routable, named with -swarm-allow)"
	}
	note = fmt.Sprintf("Backend %s, image %s; the load went to %s; parity was checked from %s. Each load node's jobs started %s after their creation at one wall-clock instant; a node that began more than %s after it (by the harness's clock: its own skew less its clock offset) fails its run.",
		m.text(c.Backend), m.code(m.text(c.Image)), went, m.text(c.Parity), c.Lead, c.Tolerance)
	for _, r := range s.Cluster {
		row := func(node string, n analysis.NodeRun, skew string) []string {
			notes := []string{}
			if n.LoadBound {
				notes = append(notes, "load-bound")
			}
			if n.Invalid != "" {
				notes = append(notes, m.text(n.Invalid))
			}
			return []string{m.text(r.Cell), fmt.Sprint(r.Rep), node, fmt.Sprintf("%.0f", n.TargetRate), fmt.Sprintf("%.0f", n.ReqPerSec),
				fmt.Sprint(n.Requests), skew, fmtMs(n.P99), fmtMs(n.P999), fmt.Sprint(n.Errors), strings.Join(notes, "; ")}
		}
		for _, n := range r.Nodes {
			runs = append(runs, row(m.text(n.Node), n, fmtMs(n.StartSkew)))
			flagged = append(flagged, n.LoadBound || n.Invalid != "")
		}
		total := row(m.bold("merged"), r.Total, "")
		if r.Error != "" {
			total[len(total)-1] = "FAILED: " + m.text(r.Error)
		}
		runs = append(runs, total)
		flagged = append(flagged, r.Error != "")
	}
	return nodes, note, runs, flagged
}

func (s summary) clusterView() clusterView {
	var v clusterView
	v.ClusterNodes, v.ClusterNote, v.ClusterRuns, _ = clusterTables(s.Summary, mdMarkup)
	return v
}

// clusterSection is report.html's cluster section: summary.md's tables,
// for every sweep that ran on a cluster.
func (b *chartBuilder) clusterSection() (htmlSection, bool) {
	sec := htmlSection{ID: "cluster", Title: "Cluster", Intro: []string{clusterIntro}}
	for i, sw := range b.sweeps {
		nodes, note, runs, flagged := clusterTables(sw.Summary, plainMarkup)
		if nodes == nil {
			continue
		}
		label := b.prefix(i)
		sec.Intro = append(sec.Intro, label+note)
		sec.Tables = append(sec.Tables, htmlTable{Caption: label + "Nodes", Head: clusterNodesHead, Num: []bool{false, false, false, false, true}, Rows: nodes})
		if len(runs) > 0 {
			sec.Tables = append(sec.Tables, htmlTable{Caption: label + clusterRunsIntro, Head: clusterRunsHead,
				Num: []bool{false, true, false, true, true, true, true, true, true, true, false}, Rows: runs, Marked: flagged})
		}
	}
	return sec, len(sec.Tables) > 0
}

func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

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

func (s summary) clusterView() clusterView {
	var v clusterView
	c := s.Env.Cluster
	if c == nil {
		return v
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
		return []string{role, md(n.Hostname), "`" + id + "`", md(n.Addr), clock}
	}
	if c.Harness.ID != "" {
		v.ClusterNodes = append(v.ClusterNodes, node("harness (manager)", c.Harness))
	}
	v.ClusterNodes = append(v.ClusterNodes, node("servers", c.Server))
	for i, n := range c.Load {
		v.ClusterNodes = append(v.ClusterNodes, node(fmt.Sprintf("load %d", i), n))
	}
	v.ClusterNote = fmt.Sprintf("Backend %s, image `%s`; the load went to %s; parity was checked from %s. Each load node's jobs started %s after their creation at one wall-clock instant; a node that began more than %s after it (by the harness's clock: its own skew less its clock offset) fails its run.",
		md(c.Backend), md(c.Image), md(c.ServerAddr), md(c.Parity), c.Lead, c.Tolerance)
	for _, r := range s.Cluster {
		row := func(node string, n analysis.NodeRun, skew string) []string {
			notes := []string{}
			if n.LoadBound {
				notes = append(notes, "load-bound")
			}
			if n.Invalid != "" {
				notes = append(notes, md(n.Invalid))
			}
			return []string{md(r.Cell), fmt.Sprint(r.Rep), node, fmt.Sprintf("%.0f", n.TargetRate), fmt.Sprintf("%.0f", n.ReqPerSec),
				fmt.Sprint(n.Requests), skew, fmtMs(n.P99), fmtMs(n.P999), fmt.Sprint(n.Errors), strings.Join(notes, "; ")}
		}
		for _, n := range r.Nodes {
			v.ClusterRuns = append(v.ClusterRuns, row(md(n.Node), n, fmtMs(n.StartSkew)))
		}
		total := row("**merged**", r.Total, "")
		if r.Error != "" {
			total[len(total)-1] = "FAILED: " + md(r.Error)
		}
		v.ClusterRuns = append(v.ClusterRuns, total)
	}
	return v
}

func fmtMs(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

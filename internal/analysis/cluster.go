package analysis

import (
	"fmt"
	"time"

	"github.com/topobench/topobench/internal/results"
)

// ClusterRun is one run of a sweep on a cluster (compare -swarm): the
// merged figures and each load node's own, so that a node that began late
// or was saturated shows beside the merge.
type ClusterRun struct {
	Run   string        `json:"run"`
	Cell  string        `json:"cell"`
	Rep   int           `json:"rep"`
	Error string        `json:"error,omitempty"`
	Total NodeRun       `json:"merged"`
	Nodes []NodeRun     `json:"nodes"`
	Skew  time.Duration `json:"max_skew_ns"` // the largest |start skew| of its nodes
}

// NodeRun is one node's figures in a ClusterRun (Node empty for the
// merge).
type NodeRun struct {
	Node       string        `json:"node,omitempty"`
	TargetRate float64       `json:"target_rate,omitempty"`
	ReqPerSec  float64       `json:"req_per_sec"`
	Requests   int64         `json:"requests"`
	P99        time.Duration `json:"p99_ns"`
	P999       time.Duration `json:"p999_ns"`
	Errors     int64         `json:"errors"`
	StartSkew  time.Duration `json:"start_skew_ns"`
	Clock      time.Duration `json:"clock_offset_ns"`
	LoadBound  bool          `json:"load_bound,omitempty"`
	Invalid    string        `json:"invalid,omitempty"`
}

// clusterRuns lists the runs that have per-node figures, in the order
// given, and warns of load-bound nodes: the load-bound rule holds per
// node, since one saturated node paces the whole merge.
func (s *Summary) clusterRuns(runs []results.Run) {
	for _, r := range runs {
		if len(r.Nodes) == 0 {
			continue
		}
		cr := ClusterRun{Run: r.Name(), Cell: KeyOf(s.Env.Plan, r).String(), Rep: r.Rep, Error: r.Error}
		if f := r.Figures; f != nil {
			cr.Total = NodeRun{TargetRate: f.TargetRate, ReqPerSec: f.ReqPerSec, Requests: f.Requests, P99: f.P99, P999: f.P999, Errors: f.Errors.Total()}
		}
		for _, n := range r.Nodes {
			id := n.Node
			if len(id) > 12 {
				id = id[:12]
			}
			name := fmt.Sprintf("%s (%s)", n.Hostname, id)
			f := n.Figures
			cr.Nodes = append(cr.Nodes, NodeRun{Node: name, TargetRate: n.Rate, ReqPerSec: f.ReqPerSec, Requests: f.Requests,
				P99: f.P99, P999: f.P999, Errors: f.Errors.Total(), StartSkew: n.StartSkew, Clock: n.ClockOffset,
				LoadBound: n.LoadBound, Invalid: n.Invalid})
			cr.Skew = max(cr.Skew, n.StartSkew.Abs())
			if n.LoadBound {
				s.Warnings = append(s.Warnings, Warning{Kind: "load-bound", Cell: cr.Cell,
					Msg: fmt.Sprintf("%s rep %d: load node %s used %.0f%% or more of its %d processor(s): it may have set the pace, not the servers", cr.Cell, r.Rep, name, 100*results.LoadBoundShare, n.Procs)})
			}
		}
		s.Cluster = append(s.Cluster, cr)
	}
}

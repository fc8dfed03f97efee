// Package cluster runs topobench's servers and load generators on several
// machines: the servers on one node, a load generator on each of the
// others, all started at one wall-clock instant, their results brought
// back and merged exactly.
//
// The machines are a Cluster: the few things the harness asks of an
// orchestrator (which nodes there are and what role each has, putting an
// image on them, a long-running server on one node, one-shot jobs pinned
// to nodes whose output comes back, each node's clock against the
// harness's, and removing everything it started). internal/cluster/swarm
// is the Docker Swarm Cluster; a Kubernetes one would map Job to a
// Kubernetes Job (one per node, or an indexed Job with parallelism N and
// a node affinity per index) and Server to a Deployment of one replica
// with hostNetwork.
//
// A node's role is its label RoleLabel: "server", "load", or both
// ("server,load"). RunLoad is the part the sweep calls for one cell: it
// splits the load among the load nodes (load.Split), starts one job per
// node with `topobench load -start-at T -report`, T a few seconds ahead to
// cover scheduling, and merges what they print (load.MergeHistograms,
// load.MergeSummaries), keeping each node's own figures. A job that began
// later than the tolerance after T, by the harness's clock, makes the run
// invalid: its load overlapped the others' for less than the whole run.
package cluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"
)

// RoleLabel is the node label that says what a node is for.
const RoleLabel = "topobench.role"

// Role is what a node is for.
type Role string

const (
	RoleServer Role = "server" // runs the servers under test
	RoleLoad   Role = "load"   // runs a load generator
)

// ParseRoles reads a RoleLabel value: roles separated by commas. Unknown
// roles are ignored, so a newer harness's labels do not break this one.
func ParseRoles(v string) []Role {
	var rs []Role
	for _, f := range strings.Split(v, ",") {
		switch r := Role(strings.TrimSpace(f)); r {
		case RoleServer, RoleLoad:
			if !slices.Contains(rs, r) {
				rs = append(rs, r)
			}
		}
	}
	return rs
}

// Node is one machine of the cluster.
type Node struct {
	ID       string
	Hostname string
	Addr     string // the address the orchestrator reaches it at
	Roles    []Role
	Ready    bool // up and accepting work
	Manager  bool // the node the harness talks to
}

// Has reports whether n has role r.
func (n Node) Has(r Role) bool { return slices.Contains(n.Roles, r) }

// String names the node for people: hostname and ID.
func (n Node) String() string {
	id := n.ID
	if len(id) > 12 {
		id = id[:12]
	}
	return n.Hostname + " (" + id + ")"
}

// Server is a long-running program on one node, with the node's own
// network (no overlay, no port mapping).
type Server struct {
	Name  string // unique within the run
	Image string
	Node  string   // node ID
	Cmd   []string // program and arguments
	Env   []string // NAME=value
	// Ready, if set, is a real request to the server; StartServer returns
	// once it succeeds while the server runs, and fails if the server
	// exits first. Without it StartServer returns once the server runs.
	Ready func(ctx context.Context) error
}

// Job is a one-shot program on one node, with the node's own network.
type Job struct {
	Name  string
	Image string
	Node  string
	Cmd   []string
	Env   []string
}

// JobOutput is what a job left: its output and how it ended.
type JobOutput struct {
	Job      Job
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	// Err is set when the job did not complete: a non-zero exit
	// (ErrJobFailed) or an orchestrator that refused or lost it.
	Err error
}

// Clock is a node's clock against the harness's.
type Clock struct {
	// Offset is the node's clock minus the harness's: a node reading
	// Offset ahead has a positive one.
	Offset time.Duration
	// Uncertainty bounds the error of Offset: half the round trip of the
	// best of the exchanges it was measured with.
	Uncertainty time.Duration
	Known       bool // false when the node's clock could not be read
}

// A Cluster is where the harness runs servers and load generators.
// Everything it starts carries the run's mark, and Cleanup removes it.
type Cluster interface {
	// Nodes lists the cluster's nodes with their roles.
	Nodes(ctx context.Context) ([]Node, error)
	// PlaceImage makes image, which the harness's machine has, available
	// on each of nodes (ErrImage when it cannot).
	PlaceImage(ctx context.Context, image string, nodes []Node) error
	// StartServer starts s and returns once it runs and s.Ready
	// succeeds; a server that exits before is an error carrying the end
	// of its output, and is removed.
	StartServer(ctx context.Context, s Server) error
	// StopServer removes a server StartServer started.
	StopServer(ctx context.Context, name string) error
	// RunJobs starts jobs at once and waits for all to end, returning
	// their outputs in order. A job not running by startBy is
	// ErrNotStarted, and then every job is removed. The error joins each
	// job's Err.
	RunJobs(ctx context.Context, jobs []Job, startBy time.Time) ([]JobOutput, error)
	// Clock measures node's clock against the harness's.
	Clock(ctx context.Context, node Node) (Clock, error)
	// Cleanup removes everything this Cluster started; it is safe to call
	// more than once and after ctx of the other calls has ended.
	Cleanup(ctx context.Context) error
}

var (
	// ErrNoCluster: the harness's engine is no cluster manager.
	ErrNoCluster = errors.New("no cluster")
	// ErrNoNodes: no ready node has the role a run needs.
	ErrNoNodes = errors.New("no node with the role")
	// ErrImage: an image could not be placed on a node.
	ErrImage = errors.New("image cannot be placed")
	// ErrNotStarted: a job was not running when the load was due.
	ErrNotStarted = errors.New("job did not start in time")
	// ErrJobFailed: a job exited non-zero or was lost.
	ErrJobFailed = errors.New("job failed")
)

// Select returns the ready nodes with role r, ErrNoNodes if none.
func Select(nodes []Node, r Role) ([]Node, error) {
	var out []Node
	for _, n := range nodes {
		if n.Ready && n.Has(r) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, &RoleError{Role: r}
	}
	return out, nil
}

// RoleError names the role no ready node has.
type RoleError struct{ Role Role }

func (e *RoleError) Error() string {
	return "no ready node labelled " + RoleLabel + "=" + string(e.Role)
}

func (e *RoleError) Unwrap() error { return ErrNoNodes }

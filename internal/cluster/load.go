package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/load"
)

// Defaults of LoadSpec.
const (
	// DefaultLead is how far ahead of the jobs' creation their common
	// start lies: room for slower nodes to connect without adding much
	// to each cell.
	DefaultLead = 3 * time.Second
	// DefaultTolerance is how much later than the common start a job may
	// begin (by the harness's clock) before the run is invalid.
	DefaultTolerance = 50 * time.Millisecond
	// DefaultProgram is topobench's path in the images compose/ and
	// internal/cluster/swarmtest build.
	DefaultProgram = "/usr/local/bin/topobench"
)

// LoadSpec is one load run on the cluster: what `topobench load` does on
// one machine, divided among Nodes.
type LoadSpec struct {
	Name    string   // unique within the Cluster's run, e.g. the cell's
	Image   string   // holds topobench; placed on the nodes beforehand
	Program string   // topobench's path in Image (DefaultProgram)
	Nodes   []Node   // the load nodes, e.g. Select(nodes, RoleLoad)
	URL     string   // the target as the load nodes reach it
	Allow   string   // the one address besides loopback the target may have (load -allow)
	Extra   []string // further `topobench load` flags, the same on every node
	// AllowRemote lets Allow be routable, another machine's (load
	// -allow-remote): the harness sets it only for an address the user
	// named (compare -swarm-allow).
	AllowRemote bool
	// NoPrime opens the connections without the unmeasured first request
	// each answers otherwise (load -no-prime), as wrk: a harness that reads
	// the servers' CPU time across the whole job counts only measured
	// requests in it.
	NoPrime bool

	// The whole run's figures; each node gets its load.Split share.
	Rate           float64 // open mode when > 0
	Connections    int
	MaxConnections int
	Requests       int64
	Arrivals       load.Arrivals
	Seed           uint64
	Duration       time.Duration // required: every job is bounded in time
	Timeout        time.Duration // per request (load -timeout; 0: its default)
	Procs          int           // load -procs (0: its default)

	Lead      time.Duration // DefaultLead
	Tolerance time.Duration // DefaultTolerance
}

// NodeLoad is one node's part of a run.
type NodeLoad struct {
	Node      Node
	Share     load.Share
	Summary   load.Summary
	Histogram *hdrhistogram.Histogram
	Clock     Clock
	// Skew is how much later than the common start the node began, by
	// the harness's clock: its own start skew minus its clock offset
	// (its own alone when the clock is unknown).
	Skew time.Duration
	// Invalid says why this node's run does not count ("" when it does).
	Invalid string
}

// LoadResult is a run on the cluster.
type LoadResult struct {
	StartAt   time.Time
	Summary   load.Summary            // merged (load.MergeSummaries)
	Histogram *hdrhistogram.Histogram // merged exactly (load.MergeHistograms)
	Nodes     []NodeLoad
	// Overhead is the time from creating the jobs to having every
	// report, less the run's duration: the lead plus collection, what
	// the cluster adds to each run.
	Overhead time.Duration
}

// Valid reports whether every node began within the tolerance.
func (r *LoadResult) Valid() bool {
	for _, n := range r.Nodes {
		if n.Invalid != "" {
			return false
		}
	}
	return true
}

// Jobs builds the jobs of spec for a start at startAt, one per node.
func (spec *LoadSpec) Jobs(startAt time.Time) ([]Job, []load.Share, error) {
	if spec.Name == "" || spec.Image == "" || spec.URL == "" {
		return nil, nil, errors.New("cluster load: name, image and URL are required")
	}
	if spec.Duration <= 0 {
		return nil, nil, errors.New("cluster load: a duration is required: every job must end on its own")
	}
	if len(spec.Nodes) == 0 {
		return nil, nil, &RoleError{Role: RoleLoad}
	}
	shares, err := load.Split(spec.Rate, spec.Connections, spec.MaxConnections, spec.Requests, len(spec.Nodes), spec.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster load: %w", err)
	}
	prog := spec.Program
	if prog == "" {
		prog = DefaultProgram
	}
	jobs := make([]Job, len(spec.Nodes))
	for i, n := range spec.Nodes {
		sh := shares[i]
		cmd := []string{prog, "load", "-quiet", "-report",
			"-start-at", startAt.UTC().Format(time.RFC3339Nano),
			"-connections", strconv.Itoa(sh.Connections),
			"-duration", spec.Duration.String(),
			"-seed", strconv.FormatUint(sh.Seed, 10)}
		if sh.Rate > 0 {
			cmd = append(cmd, "-rate", strconv.FormatFloat(sh.Rate, 'g', -1, 64))
		}
		if sh.MaxConnections > 0 {
			cmd = append(cmd, "-max-connections", strconv.Itoa(sh.MaxConnections))
		}
		if sh.Requests > 0 {
			cmd = append(cmd, "-requests", strconv.FormatInt(sh.Requests, 10))
		}
		if spec.Arrivals != "" {
			cmd = append(cmd, "-arrivals", string(spec.Arrivals))
		}
		if spec.Timeout > 0 {
			cmd = append(cmd, "-timeout", spec.Timeout.String())
		}
		if spec.Procs > 0 {
			cmd = append(cmd, "-procs", strconv.Itoa(spec.Procs))
		}
		if spec.Allow != "" {
			cmd = append(cmd, "-allow", spec.Allow)
		}
		if spec.AllowRemote {
			cmd = append(cmd, "-allow-remote")
		}
		if spec.NoPrime {
			cmd = append(cmd, "-no-prime")
		}
		cmd = append(append(cmd, spec.Extra...), spec.URL)
		jobs[i] = Job{Name: fmt.Sprintf("%s-%d", spec.Name, i), Image: spec.Image, Node: n.ID, Cmd: cmd}
	}
	return jobs, shares, nil
}

// RunLoad runs spec on c: it reads each load node's clock, starts one job
// per node due at now+Lead, waits for all (bounded by Lead, Duration and
// a minute more), and merges their reports. A node that began more than
// Tolerance late (or early) makes its NodeLoad, and so the result,
// invalid; the figures are still returned. An error means a job did not
// start in time, failed, or printed no report; every job is removed
// either way, and on interruption too.
func RunLoad(ctx context.Context, c Cluster, spec LoadSpec) (*LoadResult, error) {
	lead, tol := spec.Lead, spec.Tolerance
	if lead <= 0 {
		lead = DefaultLead
	}
	if tol <= 0 {
		tol = DefaultTolerance
	}
	if _, _, err := spec.Jobs(time.Now()); err != nil {
		return nil, err
	}
	clocks := make([]Clock, len(spec.Nodes))
	for i, n := range spec.Nodes {
		ck, err := c.Clock(ctx, n)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			ck = Clock{} // unknown: the node's own skew has to do
		}
		clocks[i] = ck
	}

	created := time.Now()
	startAt := created.Add(lead).Round(time.Millisecond)
	jobs, shares, err := spec.Jobs(startAt)
	if err != nil {
		return nil, err
	}
	bound := lead + spec.Duration + max(spec.Timeout, 2*time.Second) + time.Minute
	rctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	outs, err := c.RunJobs(rctx, jobs, startAt)
	if err != nil {
		return nil, fmt.Errorf("cluster load %s: %w", spec.Name, err)
	}
	res := &LoadResult{StartAt: startAt, Overhead: time.Since(created) - spec.Duration}
	hs := make([]*hdrhistogram.Histogram, len(outs))
	ss := make([]load.Summary, len(outs))
	for i, o := range outs {
		rep, err := load.ReadReport(bytes.NewReader(o.Stdout))
		if err != nil {
			return nil, fmt.Errorf("cluster load %s: node %s: %w%s", spec.Name, spec.Nodes[i], err, tailOf(o.Stderr))
		}
		nl := NodeLoad{Node: spec.Nodes[i], Share: shares[i], Summary: rep.Summary, Histogram: rep.Histogram, Clock: clocks[i]}
		nl.Skew = rep.Summary.StartSkew()
		if nl.Clock.Known {
			nl.Skew -= nl.Clock.Offset
		}
		switch {
		case !rep.Summary.StartAt.Equal(startAt):
			nl.Invalid = fmt.Sprintf("began for %s, not %s", rep.Summary.StartAt.Format(time.RFC3339Nano), startAt.Format(time.RFC3339Nano))
		case nl.Skew > tol || nl.Skew < -tol:
			nl.Invalid = fmt.Sprintf("began %v after the common start, past the tolerance of %v", nl.Skew.Round(time.Microsecond), tol)
		case rep.Summary.Interrupted:
			nl.Invalid = "interrupted"
		}
		res.Nodes = append(res.Nodes, nl)
		hs[i], ss[i] = rep.Histogram, rep.Summary
	}
	if res.Histogram, err = hdr.Merge(hs...); err != nil {
		return nil, fmt.Errorf("cluster load %s: %w", spec.Name, err)
	}
	res.Summary = load.MergeSummaries(ss, res.Histogram)
	return res, nil
}

func tailOf(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return " (" + string(b) + ")"
}

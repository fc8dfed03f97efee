// Package plan owns what a sweep measures: the Plan, the presets'
// scenarios, the parsers of its flags' values, and Check, the one place
// its rules are checked, with where it runs (Where). A plan that cannot be
// measured as given is a *FieldError naming the field at fault, and
// errors.Is(err, ErrPlan); the command maps each Field to its flag.
//
// Check is pure: it reads the plan and Where, never the machine. What the
// machine decides (the CPUs allowed, a namespace, a control group, what a
// cluster reports) is checked where it is probed, with Errorf all the same.
package plan

import (
	"slices"
	"time"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Plan is what a sweep measures: the plan recorded in env.json, with the
// rules and the order of the sweep attached.
type Plan struct{ results.Plan }

// DefaultPlan is the 2013 reference run's load (wrk -t100 -c5000,
// GOMAXPROCS 1 and 8) over every topology as interleaved repetitions
// (2013 ran one run a cell): fewer runs, or shorter ones, left two
// back-to-back sweeps too far apart on some ratios.
// For a shorter look: -reps 6 (the fewest that give a median a 95%
// interval, benchmath) or make compare-quick.
func DefaultPlan() Plan {
	return Plan{results.Plan{
		Targets:     []string{results.TargetGo},
		Topologies:  topology.Names(),
		GOMAXPROCS:  []int{1, 8},
		Connections: []int{5000},
		Loads:       []results.Generator{results.LoadWrk},
		Reps:        12,
		Duration:    15 * time.Second,
		Warmup:      3 * time.Second,
		Threads:     100,
		Timeout:     2 * time.Second,
	}}
}

// Bounds on the plan that no machine this runs on needs more of: a value
// past them is a typo, which would otherwise start a sweep of days or a
// server with a hundred thousand processors.
const (
	// MaxDuration bounds -duration and -warmup: an hour a cell (more
	// -reps measure longer, interleaved).
	MaxDuration = time.Hour
	// MaxGOMAXPROCS bounds -gomaxprocs.
	MaxGOMAXPROCS = 1024
)

// MaxWait bounds the handler wait cmd/hello accepts.
const MaxWait = hello.MaxWait

// ThreadsFor is wrk's -t for c connections: the plan's threads, but never
// more than there are connections.
func (p Plan) ThreadsFor(c int) int { return min(p.Threads, c) }

// Duet reports whether the plan runs the duet design (-design duet).
func (p Plan) Duet() bool { return p.Paired != nil && p.Paired.Duet }

// Measured is how long the measured load of a cell lasts: the plan's
// duration, or a count of requests at the schedule's rate, or a probe's
// wait with time to spare for the answers.
func (p Plan) Measured(c results.Cell) time.Duration {
	switch {
	case c.Probe:
		return 2*c.Wait + 5*time.Second
	case c.Requests > 0 && c.Rate > 0:
		return time.Duration(float64(c.Requests) / c.Rate * float64(time.Second))
	case p.Checked(c):
		return p.Paired.Check.Duration
	case p.LatencyRun(c):
		return p.Paired.Latency.Duration
	}
	return p.Duration
}

// CellTime is the wall time one cell takes at least: warmup plus measurement.
func (p Plan) CellTime(c results.Cell) time.Duration { return p.Warmup + p.Measured(c) }

// Generators are every load generator the plan runs: its loads and its
// cross-check's.
func (p Plan) Generators() []results.Generator {
	gs := p.LoadList()
	if p.Paired != nil && p.Paired.Check != nil && !slices.Contains(gs, p.Paired.Check.Load) {
		gs = append(slices.Clone(gs), p.Paired.Check.Load)
	}
	return gs
}

// NginxConnections is the most connections a cell of the plan opens, or
// over HTTP/2 the most requests in flight (Streams a connection, each on
// an upstream connection of its own): nginx's backlog and worker
// connections hold them all at once.
func (p Plan) NginxConnections() int {
	if n := p.MostConnections(); n > 0 {
		return n * max(1, p.Streams)
	}
	return nginxconf.DefaultConnections
}

// KeepaliveSize is nginx's upstream pool per worker for a block of
// keepalive k (the zero Keepalive when the plan sweeps none: its one).
func (p Plan) KeepaliveSize(k results.Keepalive) int {
	return p.KeepaliveOf(results.Cell{Keepalive: k}).Size(p.NginxConnections())
}

package plan

import (
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// checkPaired refuses what the paired design cannot measure: its windows
// are closed loop on one pool at a time, each topology beside standalone.
func (p Plan) checkPaired(tops []topology.Topology) error {
	if p.Paired == nil {
		return nil
	}
	design := p.Paired.Design()
	var tls, plain []string
	for _, t := range tops {
		if t.TLS {
			tls = append(tls, t.Name)
		} else {
			plain = append(plain, t.Name)
		}
	}
	base := p.Baseline()
	switch {
	case p.Paired.Pairs < 1:
		return Errorf(Reps, "%d pairs, want at least 1", p.Paired.Pairs)
	case len(tls) > 0 && len(plain) > 0:
		// Every pair shares one baseline: a path over TLS is compared
		// with standalone-tls, a plaintext one with standalone.
		return Errorf(Topologies, "%s: pairs every topology with one baseline; measure %s (over TLS) and %s (plaintext) in separate sweeps", design, strings.Join(tls, ", "), strings.Join(plain, ", "))
	case !slices.Contains(p.Topologies, base):
		// The baseline alone is the A/A: the machine's check of the intervals.
		return Errorf(Design, "%s: -topologies needs %s, which every other is measured beside (%s alone measures the A/A)", design, base, base)
	case len(p.LoadList()) != 1:
		return Errorf(Design, "%s: give one -load; each pair's two windows come from one load session", design)
	case len(p.Connections) != 1:
		return Errorf(Design, "%s: give one -connections value", design)
	case slices.ContainsFunc(p.Schedules, func(sc results.Schedule) bool { return sc != results.Schedule{Work: sc.Work} }):
		// Each handler work is a group of its own, with its own pools.
		return Errorf(Design, "%s: windows are closed loop; drop -rate and -wait (or use -design rounds)", design)
	case p.Close:
		return Errorf(Design, "%s: -close opens a connection a request, which a pool kept across windows cannot", design)
	case p.Paired.Duet && p.LoadList()[0] != results.LoadBuiltin:
		return Errorf(Design, "duet: needs -load builtin, whose session runs two pools at once")
	case (p.Paired.Lead > 0 || len(p.Paired.Leads) > 0) && p.LoadList()[0] != results.LoadBuiltin:
		// A generator that opens its connections every window (wrk)
		// starts each from nothing anyway.
		return Errorf(Lead, "applies to -load builtin, whose pools keep their connections across windows")
	}
	if err := p.checkLatency(); err != nil {
		return err
	}
	return p.checkCrossCheck()
}

// checkCrossCheck checks the paired design's cross-check run.
func (p Plan) checkCrossCheck() error {
	c := p.Paired.Check
	if c == nil {
		return nil
	}
	switch {
	case !slices.Contains(results.Generators(), c.Load):
		return Errorf(CrossCheck, "unknown load generator %q (known: %s)", c.Load, knownLoads())
	case c.Load == p.LoadList()[0]:
		return Errorf(CrossCheck, "the pairs' load is %s already; cross-check with another", c.Load)
	case !slices.Contains(p.GOMAXPROCS, c.GOMAXPROCS):
		return Errorf(CrossCheck, "GOMAXPROCS=%d is not among -gomaxprocs", c.GOMAXPROCS)
	case c.Duration < time.Second || c.Duration%time.Second != 0:
		return Errorf(CrossCheck, "a run of %s, want whole seconds", c.Duration)
	case c.Load == results.LoadWrk:
		if err := p.checkThreads(p.Connections[0]); err != nil {
			return err
		}
	}
	for _, t := range c.Topologies {
		if !slices.Contains(p.Topologies, t) {
			return Errorf(CrossCheck, "%s is not among -topologies", t)
		}
	}
	return nil
}

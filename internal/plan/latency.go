package plan

import (
	"math"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// The latency phase's defaults (results.Latency): three rounds of 2 s
// runs, at half the slowest path's req/s in the block's pairs under auto.
// Three rounds give three paired differences a path, the fewest a t
// interval takes without being useless; 2 s at the rates a duet measures
// hold thousands of requests, a few tens of them past p99.
const (
	LatencyFraction = 0.5
	LatencyRounds   = 3
	LatencyDuration = 2 * time.Second
)

// ParseLatencyRate reads -latency-rate: auto (LatencyFraction of the
// slowest path's req/s), a rate in req/s, or off (nil).
func ParseLatencyRate(s string) (*results.Latency, error) {
	l := &results.Latency{Rounds: LatencyRounds, Duration: LatencyDuration}
	switch s {
	case "off":
		return nil, nil
	case "auto":
		l.Fraction = LatencyFraction
		return l, nil
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return nil, Errorf(LatencyRate, "%q, want auto, a rate in req/s or off", s)
	}
	l.Rate = r
	return l, nil
}

// LatencyLabel is -latency-rate's value for l.
func LatencyLabel(l *results.Latency) string {
	switch {
	case l == nil:
		return "off"
	case l.Fraction > 0:
		return "auto"
	}
	return strconv.FormatFloat(l.Rate, 'f', -1, 64)
}

// checkLatency checks the latency phase: open loop needs the built-in
// engine, and its runs a rate and whole seconds.
func (p Plan) checkLatency() error {
	l := p.Paired.Latency
	if l == nil {
		return nil
	}
	switch {
	case p.LoadList()[0] != results.LoadBuiltin:
		return Errorf(LatencyRate, "needs -load builtin, whose engine runs open loop")
	case l.Rate > 0 == (l.Fraction > 0):
		return Errorf(LatencyRate, "give a rate or a fraction of the capacity, one of them")
	case l.Fraction < 0 || l.Fraction > 1 || l.Rate < 0 || math.IsInf(l.Rate, 0) || math.IsNaN(l.Rate):
		return Errorf(LatencyRate, "a rate of %g or a fraction of %g, want a positive rate or a fraction at most 1", l.Rate, l.Fraction)
	case l.Rounds < 1:
		return Errorf(LatencyRate, "%d rounds, want at least 1", l.Rounds)
	case l.Duration < time.Second || l.Duration%time.Second != 0:
		return Errorf(LatencyRate, "runs of %s, want whole seconds", l.Duration)
	}
	return nil
}

// LatencyPaths are the paths the latency phase measures beside
// standalone, in the plan's order: every one with Go behind it (the
// ceilings, nginx alone, are left out).
func (p Plan) LatencyPaths() []string {
	var out []string
	for _, name := range p.Topologies {
		if t, err := topology.Lookup(name); err == nil && !t.Reference && name != p.Baseline() {
			out = append(out, name)
		}
	}
	return out
}

// LatencyCells are block b's latency runs in their order: each round
// standalone, then each path; standalone's runs numbered on through the
// rounds, each path's by its round. A path's difference is taken from its
// round's standalone run, so a round costs one standalone run, not one a
// path. Only the blocks at the plan's first GOMAXPROCS run the phase, as
// the cross-check does: the phase's runs come out of the budget's pairs.
// Nil without a latency phase or a path.
func (p Plan) LatencyCells(b results.Block) []results.Cell {
	if p.Paired == nil || p.Paired.Latency == nil || len(b.Cells) == 0 || len(p.GOMAXPROCS) > 0 && b.GOMAXPROCS != p.GOMAXPROCS[0] {
		return nil
	}
	paths := p.LatencyPaths()
	if len(paths) == 0 {
		return nil
	}
	base := b.Cells[0]
	base.Schedule, base.Rep = p.Paired.Latency.Schedule(), 0
	var cells []results.Cell
	for round := 1; round <= p.Paired.Latency.Rounds; round++ {
		s := base
		s.Topology, s.Rep = p.Baseline(), round
		cells = append(cells, s)
		for _, top := range paths {
			c := base
			c.Topology, c.Rep = top, round
			cells = append(cells, c)
		}
	}
	return cells
}

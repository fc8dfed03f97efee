package sweep

import (
	"context"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/topology"
)

// The one measurement step. Every design measures its windows here: one
// side's window (rounds, and each window of a paired design), or a
// duet's two sides at once, cut in slices. The servers of each side are
// sampled around the load call, which fills the runs with the load's
// figures; then each run gets its servers' CPU time, the noise, the
// network counters and its error class, the same way for every design.

// span is one load call to measure and the servers it loads.
type span struct {
	// sides are the servers sampled around the call: runs[k][pos] is
	// served by sides[pos].
	sides []servers
	// beside are each side's neighbour's accounting counter files (a
	// duet's other side), which the noise counts as the run's own; nil
	// for none.
	beside []string
	// net are the servers whose namespace's counters the span reads; its
	// figures go to netPos's run of the last slice.
	net    servers
	netPos int
	// slice is a slice's measured length where the call cuts its window
	// in slices (a run's wall time is then its slice's, its lead's and
	// its drain's); 0 for a call of one run a side.
	slice time.Duration
	// call runs the load, filling the runs; raw is its answer.
	call func() (raw []byte, err error)
}

// measureSpan runs sp's call between samples of its servers and completes
// each of runs: runs[k][pos] is slice k's run of side pos. A run whose
// call failed carries the error; a run that answered nothing is an
// error too.
func (s *sweep) measureSpan(ctx context.Context, sp span, runs [][]*results.Run) ([]byte, error) {
	before := s.sampleSides(ctx, sp)
	netBefore := s.rig.ReadNet(sp.net)
	start := s.clock.at().UTC()
	raw, err := sp.call()
	after := s.sampleSides(ctx, sp)
	netAfter := s.rig.ReadNet(sp.net)
	at := start
	for k, rs := range runs {
		for pos, run := range rs {
			if run.Start.IsZero() {
				run.Start = at
			}
			run.Wall = s.clock.since(run.Start)
			if sp.slice > 0 {
				run.Wall = sp.slice + run.Lead + run.Drain
			}
			s.rig.Account(run, before[pos], after[pos], s.res.ServerCPUs, s.res.LoadCPUs)
			s.partsOf(run)
			if len(runs) > 1 && run.CPU != nil && run.CPU.PartsSpan != results.SpanWindow {
				// /proc's per-process times span the whole call, not the
				// slice: without parts, the slice's own are its group's.
				run.CPU.Server, run.CPU.Nginx = nil, nil
			}
			if pos == sp.netPos && k == len(runs)-1 {
				run.Net = rig.NetRecord(netBefore, netAfter, s.rig.CountsUpstream(s.res.Topology(run.Topology), s.layout), s.rig.Isolated())
			}
			classify(run, err)
		}
		if len(rs) > 0 {
			at = at.Add(rs[0].Wall)
		}
	}
	return raw, err
}

// partsOf leaves out of run's CPU the parts its path does not have: a
// duet's A/A twin and the ceilings share the topology side's groups with
// an idle nginx or an idle backend, whose time is not their cost.
func (s *sweep) partsOf(run *results.Run) {
	if run.CPU == nil {
		return
	}
	t := s.res.Topology(run.Topology)
	if !t.ViaNginx() {
		run.CPU.Nginx = nil
	}
	if t.Backend == topology.NoBackend {
		run.CPU.Server = nil
	}
}

// sampleSides samples each side's servers, with its neighbour's counter.
func (s *sweep) sampleSides(ctx context.Context, sp span) []rig.Sample {
	out := make([]rig.Sample, len(sp.sides))
	for pos, st := range sp.sides {
		out[pos] = rig.TakeSample(ctx, rig.ProcFS, st)
		if pos < len(sp.beside) {
			out[pos].Beside = groupUsage(sp.beside[pos])
		}
	}
	return out
}

// classify gives a run its error: the call's, or none answered in the
// measured time (a rate of zero is no measurement, a generator that
// spent its window starting up; as a figure it would sink every ratio).
// A probe counts its requests, not a rate.
func classify(run *results.Run, err error) {
	switch {
	case err != nil:
		run.Error = err.Error()
	case run.Figures != nil && run.Figures.Requests == 0 && !run.Probe:
		run.Error = errNoAnswer
	}
}

const errNoAnswer = "no request was answered in the measured time"

// keep records a measured run and counts it; planned says the sweep
// counted it in its total ahead (rounds), else it counts here (pairs,
// whose number the budget decides as they run). It reports whether the
// run measured something.
func (s *sweep) keep(run results.Run, raw []byte, planned bool) (bool, error) {
	if err := s.record(run, raw); err != nil {
		return false, err
	}
	if !planned {
		s.out.Total++
	}
	if run.Failed() {
		s.out.Failed++
		return false, nil
	}
	s.out.Measured++
	return true, nil
}

package analysis

import (
	"slices"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// TimeSpent is where a sweep's wall time went, from its records: what a
// shorter sweep can cut. Measured is the load generators' clocks (the
// plan's duration of every run); the rest is overhead.
type TimeSpent struct {
	// Total is the sweep's wall time over every session (env.json's
	// spent, or its end minus its start).
	Total time.Duration `json:"total_ns"`
	// Before is the time before the first cell: preflight, builds, the
	// namespaces, the CPU calibration.
	Before time.Duration `json:"before_ns"`
	// Settle is the waits for idle servers before the runs, Warmup the
	// unrecorded load, Startup the generators' start before their clocks
	// (wrk starting its threads), Measured their clocks, Exit the rest of
	// each run's wall time (the generator stopping, reporting, exiting).
	Settle   time.Duration `json:"settle_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	Startup  time.Duration `json:"startup_ns"`
	Measured time.Duration `json:"measured_ns"`
	Exit     time.Duration `json:"exit_ns"`
	// Connect is the paired design's opening of its pools (dialing and
	// the unrecorded warmup window), Drain its waits after each window
	// for the answers still due: neither is measured.
	Connect time.Duration `json:"connect_ns,omitempty"`
	Drain   time.Duration `json:"drain_ns,omitempty"`
	// Lead is the paired design's load before each window's measured
	// time (results.Run.Lead).
	Lead time.Duration `json:"lead_ns,omitempty"`
	// Check is the paired design's cross-check, its runs whole (waits,
	// warmups and runs); none of it is in the parts above.
	Check time.Duration `json:"check_ns,omitempty"`
	// Other is what remains: starting and stopping servers, parity
	// checks, writing records.
	Other time.Duration `json:"other_ns"`
	Runs  int           `json:"runs"`
}

// Spent is where the sweep's time went; ok is false for a sweep that
// recorded no wall time (before it did, or still running).
func Spent(env results.Env, runs []results.Run) (t TimeSpent, ok bool) {
	t.Total = env.Spent
	if t.Total == 0 && !env.End.IsZero() {
		t.Total = env.End.Sub(env.Start)
	}
	if t.Total <= 0 || len(runs) == 0 {
		return t, false
	}
	runs = slices.DeleteFunc(slices.Clone(runs), func(r results.Run) bool { return r.Start.IsZero() })
	if len(runs) == 0 {
		return t, false // records without times
	}
	first := slices.MinFunc(runs, func(a, b results.Run) int { return a.Start.Compare(b.Start) })
	t.Before = first.Start.Sub(env.Start) - first.Warmup - first.Connect
	if first.Settle != nil {
		t.Before -= first.Settle.Waited
	}
	t.Before = max(t.Before, 0)
	for _, r := range runs {
		t.Runs++
		if env.Plan.Checked(r.Cell) {
			t.Check += r.Wall + r.Warmup
			if r.Settle != nil {
				t.Check += r.Settle.Waited
			}
			continue
		}
		if r.Settle != nil {
			t.Settle += r.Settle.Waited
		}
		t.Warmup += r.Warmup
		t.Connect += r.Connect
		if besideTwin(env.Plan, r) {
			continue // a duet's pair is one span of wall time, counted once
		}
		t.Drain += r.Drain
		t.Lead += r.Lead
		wall := r.Wall
		if r.Figures != nil {
			t.Startup += r.Figures.Startup
			wall -= r.Figures.Startup
		}
		d := min(env.Plan.WindowOfRun(r), max(wall, 0))
		if r.Failed() {
			d = 0 // a failed run's clock measured nothing
		}
		t.Measured += d
		t.Exit += max(wall-d-r.Drain-r.Lead, 0)
	}
	t.Other = max(t.Total-t.Before-t.Settle-t.Warmup-t.Connect-t.Startup-t.Measured-t.Drain-t.Lead-t.Exit-t.Check, 0)
	return t, true
}

// besideTwin reports whether r is the topology's side of a duet pair,
// whose time is its standalone side's.
func besideTwin(p results.Plan, r results.Run) bool {
	if p.Paired == nil || !p.Paired.Duet || r.Pair == nil {
		return false
	}
	return r.Pair.Twin || !topology.IsBaseline(r.Topology)
}

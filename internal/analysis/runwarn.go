package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
)

// warnRuns adds the warnings that belong to single runs: a busy machine,
// servers that were not idle when the run started, and runs measured
// twice. The cells count them.
func (s *Summary) warnRuns(runs []results.Run) {
	for _, r := range runs {
		i := slices.IndexFunc(s.Cells, func(c Cell) bool { return c.Key == KeyOf(s.Env.Plan, r) })
		if i < 0 {
			continue
		}
		c := &s.Cells[i]
		add := func(kind, note, format string, args ...any) {
			s.Warnings = append(s.Warnings, Warning{Kind: kind, Cell: c.Name(), Msg: fmt.Sprintf(format, args...)})
			if !slices.Contains(c.Notes, note) {
				c.Notes = append(c.Notes, note)
			}
		}
		name := fmt.Sprintf("%s rep %d", c.Name(), r.Rep)
		if n := r.Noise; n != nil && n.Flagged != "" {
			c.NoisyRuns++
			add("noise", "noisy", "%s: the machine was busy with other work: %s (over %s: steal %.1f s, CPU outside the run %.1f s of %.1f s busy)",
				name, n.Flagged, n.Window.Round(100*1e6), n.Steal, n.Others, n.Busy)
		}
		if st := r.Settle; st != nil && !st.Settled {
			c.UnsettledRuns++
			mem := "server RSS " + numfmt.Bytes(st.ServerRSS)
			if st.NginxRSS > 0 {
				mem += ", nginx RSS " + numfmt.Bytes(st.NginxRSS)
			}
			add("unsettled", "unsettled", "%s: the servers were still busy after waiting %s (%.0f%% of a CPU; %s); the run may carry the previous cell's load",
				name, st.Waited.Round(100*1e6), 100*st.CPUShare, mem)
		}
		if r.Net.Overflowed() {
			add("listen overflows", "listen overflows", "%s: the servers' listen queues overflowed: %d connects turned away, %d SYN cookies sent; those connects waited for retries, so the run began with a storm (nginx's listen backlog, net.core.somaxconn)",
				name, r.Net.ListenOverflows, r.Net.SyncookiesSent)
		}
		if r.LoadBound() {
			add("load-bound", "load-bound", "%s: the load generator %s: it, not the servers, may have set the pace, so the run's rate is a floor of the path's, not its measure (give the load more CPUs, or more machines)",
				name, r.LoadUse())
		}
		if r.Retried != "" {
			c.RetriedRuns++
			add("retried", "retried", "%s: measured a second time: %s", name, r.Retried)
		}
	}
}

// Convergence is a cell whose figure -reps auto waits for and that is not
// yet known within the bound.
type Convergence struct {
	Key Key
	// Figure is what must converge: the ratio to standalone, or the
	// median req/s in a group without standalone.
	Figure    string
	Center    float64
	HalfWidth float64 // relative; +Inf when unknown
	Reps      int
	// Hopeless says more rounds cannot help: the cell, or the standalone
	// it is compared with, has no successful run.
	Hopeless bool
}

// Unconverged lists the cells whose ratio to standalone (or, in a group
// without standalone, whose median req/s) is not known within ±within,
// in table order. Probes, which measure concurrency and not a rate, are
// left out. -reps auto adds rounds while this list holds a cell that is
// not Hopeless.
func (s Summary) Unconverged(within float64) []Convergence {
	var out []Convergence
	for _, g := range s.Groups() {
		if g.Schedule.Probe {
			continue
		}
		st, hasSt := s.Cell(Key{g, Standalone})
		for _, c := range s.Rows(g) {
			if hasSt && c.Topology == Standalone {
				continue
			}
			cv := Convergence{Key: c.Key, Reps: c.Reps, HalfWidth: math.Inf(1), Center: math.NaN()}
			switch {
			case !hasSt:
				cv.Figure = "req/s"
				cv.Hopeless = c.Reps == 0
				if c.Reps > 0 {
					iv := c.ReqPerSec.Interval(c.Reps)
					cv.Center, cv.HalfWidth = iv.Center, iv.HalfWidth()
				}
			default:
				cv.Figure = "ratio to standalone"
				cv.Hopeless = c.Reps == 0 || st.Reps == 0
				if r := c.RatioToStandalone; r != nil {
					cv.Center, cv.HalfWidth = r.Center, r.HalfWidth()
				}
			}
			if cv.HalfWidth > within {
				out = append(out, cv)
			}
		}
	}
	return out
}

// warnConvergence says which cells -reps auto left wider than its bound.
func (s *Summary) warnConvergence() {
	auto := s.Env.Plan.RepsAuto
	if auto == nil {
		return
	}
	for _, cv := range s.Unconverged(auto.Within) {
		i := slices.IndexFunc(s.Cells, func(c Cell) bool { return c.Key == cv.Key })
		c := &s.Cells[i]
		if !slices.Contains(c.Notes, "not converged") {
			c.Notes = append(c.Notes, "not converged")
		}
		fig := "no successful run to compare"
		if !math.IsNaN(cv.Center) {
			fig = fmt.Sprintf("%s ± %s", numfmt.Figure(cv.Center), numfmt.HalfWidth(cv.HalfWidth))
		}
		why, unit := fmt.Sprintf("-reps auto, at most %d", auto.Max), "repetitions"
		if s.Env.Plan.Paired != nil {
			cv.Reps, unit = 0, "pairs"
			if r := c.RatioToStandalone; r != nil {
				cv.Reps = r.N
			}
		}
		if auto.Budget > 0 {
			why = fmt.Sprintf("-budget %s, at most %d", strings.TrimSuffix(auto.Budget.String(), "0s"), auto.Max)
		}
		s.Warnings = append(s.Warnings, Warning{Kind: "not converged", Cell: c.Name(), Msg: fmt.Sprintf(
			"%s: %s %s after %d %s, not within ±%s (%s)",
			c.Name(), cv.Figure, fig, cv.Reps, unit, numfmt.Pct(auto.Within), why)})
	}
}

// warnSpeed says when the rates followed the speed the probes measured
// on the servers' CPUs (-speed-probe) measurably (SpeedFit.Follows):
// the spread of the rates is then the host's as much as the paths'.
func (s *Summary) warnSpeed(runs []results.Run) {
	f := s.Speed
	if f == nil || !f.Follows() {
		return
	}
	var speeds []float64
	for _, r := range runs {
		if sp := r.Noise.SpeedOf(); sp != nil && sp.Servers > 0 && !r.Failed() {
			speeds = append(speeds, sp.Servers)
		}
	}
	lo, hi := slices.Min(speeds), slices.Max(speeds)
	s.Warnings = append(s.Warnings, Warning{Kind: "speed", Msg: fmt.Sprintf(
		"the servers' CPUs ran at %.2f to %.2f turns a µs from one run to another (the speed probes), and the rates followed (%s): the runs' spread is the host's as much as the paths'; more runs narrow the intervals, a quieter machine more",
		lo, hi, f)})
}

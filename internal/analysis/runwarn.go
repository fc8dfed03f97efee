package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// warnRuns adds the warnings that belong to single runs: a busy machine,
// servers that were not idle when the run started, and runs measured
// twice. The cells count them, and each cell's runs of one kind make one
// warning that counts them and gives the first one's detail.
func (s *Summary) warnRuns(runs []results.Run) {
	type tally struct {
		cell       int
		kind, note string
		n, rep     int
		detail     string
	}
	var out []*tally
	for _, r := range runs {
		i := slices.IndexFunc(s.Cells, func(c Cell) bool { return c.Key == KeyOf(s.Env.Plan, r) })
		if i < 0 {
			continue
		}
		for _, w := range s.runWarnings(&s.Cells[i], r) {
			j := slices.IndexFunc(out, func(t *tally) bool { return t.cell == i && t.kind == w[0] })
			if j < 0 {
				out = append(out, &tally{cell: i, kind: w[0], note: w[1], rep: r.Rep, detail: w[2]})
				j = len(out) - 1
			}
			out[j].n++
		}
	}
	unit := "runs"
	if s.Env.Plan.Paired != nil {
		unit = "windows"
	}
	for _, t := range out {
		c := &s.Cells[t.cell]
		if !slices.Contains(c.Notes, t.note) {
			c.Notes = append(c.Notes, t.note)
		}
		s.Warnings = append(s.Warnings, Warning{Kind: t.kind, Cell: c.Name(), Msg: fmt.Sprintf("%s: %s in %d of %d %s; the first, rep %d: %s",
			c.Name(), t.note, t.n, c.Reps+c.Failed, unit, t.rep, t.detail)})
	}
}

// runWarnings are one run's warnings, each its kind, its note and its
// detail, counting the run in c.
func (s *Summary) runWarnings(c *Cell, r results.Run) [][3]string {
	var out [][3]string
	add := func(kind, note, format string, args ...any) {
		out = append(out, [3]string{kind, note, fmt.Sprintf(format, args...)})
	}
	if n := r.Noise; n != nil && n.Flagged != "" {
		c.NoisyRuns++
		add("noise", "noisy", "the machine was busy with other work: %s (over %s: steal %.1f s, CPU outside the run %.1f s of %.1f s busy)",
			n.Flagged, n.Window.Round(100*1e6), n.Steal, n.Others, n.Busy)
	}
	if st := r.Settle; st != nil && !st.Settled {
		c.UnsettledRuns++
		mem := "server RSS " + numfmt.Bytes(st.ServerRSS)
		if st.NginxRSS > 0 {
			mem += ", nginx RSS " + numfmt.Bytes(st.NginxRSS)
		}
		add("unsettled", "unsettled", "the servers were still busy after waiting %s (%.0f%% of a CPU; %s); the run may carry the previous cell's load",
			st.Waited.Round(100*1e6), 100*st.CPUShare, mem)
	}
	if r.Net.Overflowed() {
		add("listen overflows", "listen overflows", "the servers' listen queues overflowed: %d connects turned away, %d SYN cookies sent; those connects waited for retries, so the run began with a storm (nginx's listen backlog, net.core.somaxconn)",
			r.Net.ListenOverflows, r.Net.SyncookiesSent)
	}
	if r.LoadBound() {
		add("load-bound", "load-bound", "the load generator %s: it, not the servers, may have set the pace, so the run's rate is a floor of the path's, not its measure (give the load more CPUs, or more machines)",
			r.LoadUse())
	}
	if r.Retried != "" {
		c.RetriedRuns++
		add("retried", "retried", "measured a second time: %s", r.Retried)
	}
	return out
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
		st, hasSt := s.BaseCell(g)
		for _, c := range s.Rows(g) {
			if hasSt && topology.IsBaseline(c.Topology) {
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

package analysis

import (
	"cmp"
	"math"
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// Interval is a median over repetitions with its 95% confidence interval
// as benchstat computes it (stats.Summarize). Lo and Hi are nil when the
// repetitions are too few for an interval (fewer than 6 at 95%).
type Interval struct {
	Center float64  `json:"center"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
}

// measuredInterval is intervalOf xs, nil when xs is empty: a figure no
// run measured.
func measuredInterval(xs []float64) *Interval {
	if len(xs) == 0 {
		return nil
	}
	return new(intervalOf(xs))
}

func intervalOf(xs []float64) Interval {
	s := stats.Summarize(xs)
	iv := Interval{Center: s.Center, N: s.N}
	if s.Known() {
		lo, hi := s.Lo, s.Hi
		iv.Lo, iv.Hi = &lo, &hi
	}
	return iv
}

// Median is the interval's center; NaN when there is none (a figure no
// run measured).
func (iv *Interval) Median() float64 {
	if iv == nil {
		return math.NaN()
	}
	return iv.Center
}

// Known reports whether the interval is finite.
func (iv Interval) Known() bool { return iv.Lo != nil && iv.Hi != nil }

// HalfWidth is the interval's larger distance from the center relative to
// the center, as benchstat's "±": 0.05 for ±5%; +Inf when unknown.
func (iv Interval) HalfWidth() float64 {
	if !iv.Known() || iv.Center == 0 || math.IsNaN(iv.Center) {
		return math.Inf(1)
	}
	return math.Max(*iv.Hi/iv.Center-1, 1-*iv.Lo/iv.Center)
}

// Excludes reports whether the interval is known and v lies outside it.
func (iv Interval) Excludes(v float64) bool { return iv.Known() && (v < *iv.Lo || v > *iv.Hi) }

// Ratio is one cell's req/s over another's in the same group: the ratio
// of their medians, with the 95% interval for the ratio of their scales
// that stats.RatioOf computes from the pairwise ratios of the runs (the
// interval that inverts the Mann-Whitney U test). It excludes 1 exactly
// when benchstat's U test finds the two cells different at alpha 0.05,
// and it needs 4 runs of each, where a median's interval needs 6.
type Ratio struct {
	Interval
	// Differs says the interval excludes 1: the two cells differ at 95%.
	Differs bool `json:"differs"`
	// N2 is the number of runs of the cell divided by (N is the cell's).
	N2 int `json:"n_den"`
	// Method names the interval of a paired sweep's ratio, which comes
	// from its pairs' ratios (pairs.go); empty for the ratio of two
	// cells' medians above.
	Method string `json:"method,omitempty"`
	// Lag1 is the lag-1 autocorrelation of a paired sweep's pair ratios
	// in time order: how alike neighbouring pairs are.
	Lag1 *float64 `json:"lag1,omitempty"`
}

// RatioOf is num's median over den's with its interval; nil when either
// has no run.
func RatioOf(num, den []float64) *Ratio { return ratioAt(num, den, stats.Confidence) }

// ratioAt is RatioOf at another level: the per-look level of a sweep that
// decided when to stop by looking at its ratios (results.RepsAuto.Level).
func ratioAt(num, den []float64, level float64) *Ratio {
	if len(num) == 0 || len(den) == 0 {
		return nil
	}
	r := stats.RatioAt(num, den, level)
	iv := Interval{Center: r.Center, N: r.N1}
	if r.Known() {
		lo, hi := r.Lo, r.Hi
		iv.Lo, iv.Hi = &lo, &hi
	}
	return &Ratio{Interval: iv, Differs: iv.Excludes(1), N2: r.N2}
}

// CPUPerRequest is the CPU time each process group spent per request
// answered, in µs, medians over the runs that measured it; in a pair
// design nginx's and the server's are means over the cell's windows
// with a t interval (PairedCPU).
type CPUPerRequest struct {
	// Load is the load generator, Nginx nginx's master and workers, Server
	// the target server (cmd/hello or another).
	Load   Interval  `json:"load_us"`
	Nginx  *Interval `json:"nginx_us"`
	Server *Interval `json:"server_us"`
	// Servers is what the servers' side spent, nginx and the server
	// summed run by run over the parts the topology has (servingCost),
	// over the runs that measured each of them; nil when none did.
	Servers *Interval `json:"servers_us"`
}

// cpuPerRequest is one run's CPU per request; ok is false when the run
// has no CPU record or answered nothing. A process group whose time was
// not measured is NaN.
func cpuPerRequest(r results.Run) (load, nginx, server float64, ok bool) {
	if r.CPU == nil || r.Figures == nil || r.Figures.Requests <= 0 {
		return 0, 0, 0, false
	}
	n := r.Figures.Requests
	of := func(u *results.Usage) float64 {
		if u == nil {
			return math.NaN()
		}
		// /proc's times also served a session window's lead and drain.
		return results.PerRequest(*u, r.PartsRequests())
	}
	return results.PerRequest(r.CPU.Load, n), of(r.CPU.Nginx), of(r.CPU.Server), true
}

// rank orders the measured cells of each group fastest first (ceilings
// and load-bound cells left out) and compares each with the next faster
// one: by median req/s, or in a pair design by the ratio to standalone,
// which is what its pairs measure.
func (s *Summary) rank() {
	level := s.RatioLevel()
	for _, g := range s.Groups() {
		var idx []int
		for i, c := range s.Cells {
			// A cell most of whose runs the load generator paced is not
			// ranked: its rate says how fast the load went, not the path.
			if c.Group == g && !c.Ceiling && c.Reps > 0 && !c.LoadBound() {
				idx = append(idx, i)
			}
		}
		st, _ := s.BaseCell(g)
		slices.SortStableFunc(idx, func(a, b int) int {
			return cmp.Compare(s.speedOf(s.Cells[b], st), s.speedOf(s.Cells[a], st))
		})
		for n, i := range idx {
			c := &s.Cells[i]
			c.Rank = n + 1
			if n > 0 {
				faster := s.Cells[idx[n-1]]
				c.Next = faster.Topology
				c.VsNext = s.Versus(*c, faster, level)
			}
		}
	}
}

// paired reports whether c's ratio to standalone comes from pairs.
func (s Summary) paired(c Cell) bool {
	return s.Env.Plan.Paired != nil && (len(c.Pairs) > 0 || topology.IsBaseline(c.Topology) && c.AA != nil)
}

// speedOf is what rank orders by: the median req/s, or a paired cell's
// ratio to standalone (standalone's 1).
func (s Summary) speedOf(c, st Cell) float64 {
	switch {
	case !s.paired(c):
		return c.ReqPerSec.Median
	case topology.IsBaseline(c.Topology):
		return 1
	case c.RatioToStandalone != nil:
		return c.RatioToStandalone.Center
	}
	return c.ReqPerSec.Median / st.ReqPerSec.Median
}

// Versus is c over the faster cell, with its interval at level: the
// ratio of their rates, or in a pair design the ratio of their ratios to
// standalone (the Mann-Whitney interval over the two cells' pair
// ratios), which is standalone's own ratio where one of them is it.
func (s Summary) Versus(c, faster Cell, level float64) *Ratio {
	if !s.paired(c) || !s.paired(faster) {
		return ratioAt(c.rates, faster.rates, level)
	}
	switch {
	case topology.IsBaseline(faster.Topology):
		return c.RatioToStandalone
	case topology.IsBaseline(c.Topology):
		return invert(faster.RatioToStandalone)
	}
	return ratioAt(ratios(c.Pairs), ratios(faster.Pairs), level)
}

// invert is 1/r with its interval; nil for nil.
func invert(r *Ratio) *Ratio {
	if r == nil {
		return nil
	}
	iv := Interval{Center: 1 / r.Center, N: r.N2}
	if r.Known() {
		lo, hi := 1 / *r.Hi, 1 / *r.Lo
		iv.Lo, iv.Hi = &lo, &hi
	}
	return &Ratio{Interval: iv, Differs: r.Differs, N2: r.N, Method: r.Method}
}

// Settled reports whether the order of c under the next faster cell is
// significant at 95%.
func (c Cell) Settled() bool { return c.VsNext != nil && c.VsNext.Differs }

// Over is c's req/s over d's, with the interval RatioOf gives; nil when
// either has no successful run.
func (c Cell) Over(d Cell) *Ratio { return RatioOf(c.rates, d.rates) }

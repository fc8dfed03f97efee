package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// The paired design (results.Plan.Paired) records each measured window as
// a run tied to its pair (results.Run.Pair): a topology's window and
// standalone's beside it. This file is the one place that turns those
// windows into pairs and each pair into a ratio.

// PairRatio is one pair's ratio: the topology's req/s in its window over
// standalone's in the window beside it; and its capacity ratio, the same
// ratio as the servers' CPU cost per request predicts it.
type PairRatio struct {
	// Key is the topology's cell.
	Key Key `json:"key"`
	// Index numbers the pair among the cell's, Seq among its block's.
	Index int `json:"index"`
	Seq   int `json:"seq"`
	// Start is when the pair's first window began; TopologyFirst says
	// the topology's window ran first.
	Start         time.Time `json:"start"`
	TopologyFirst bool      `json:"topology_first"`
	Ratio         float64   `json:"ratio"`
	// CostRatio is standalone's servers' CPU µs per request in its window
	// over the topology's in its own (servingCost: their control group's
	// time over each measured window where it was counted); 0 when either
	// window's was not measured.
	CostRatio float64 `json:"cost_ratio,omitempty"`
	// Utilization and StandaloneUtilization are each window's servers'
	// CPU time over the window × their CPUs (results.GroupCPU); 0 when
	// not counted. Below 1 the servers had CPU to spare: the rate's ratio
	// then says what the path served at this load, the cost's what it
	// would serve CPU-bound.
	Utilization           float64 `json:"utilization,omitempty"`
	StandaloneUtilization float64 `json:"standalone_utilization,omitempty"`
	// Rate and StandaloneRate are the two windows' req/s.
	Rate, StandaloneRate float64 `json:"-"`
	// Overhead is the pair's unmeasured time besides its two windows:
	// each window's drain, its generator's start and exit, its record.
	Overhead time.Duration `json:"-"`
}

// PairRatios lists the complete pairs of a paired sweep by the
// topology's cell, each cell's in time order; the A/A's, standalone's
// second pool against its first, are standalone's. A pair with a failed window,
// or with one window only (a sweep stopped between the two), gives no
// ratio.
func PairRatios(p results.Plan, runs []results.Run) map[Key][]PairRatio {
	type side struct{ top, st *results.Run }
	type id struct {
		g     Group
		with  string
		index int
	}
	pairs := map[id]*side{}
	for i := range runs {
		r := &runs[i]
		if r.Pair == nil {
			continue
		}
		k := KeyOf(p, *r)
		d := id{k.Group, r.Pair.With, r.Pair.Index}
		if pairs[d] == nil {
			pairs[d] = &side{}
		}
		// The A/A's second standalone window stands in the topology's
		// place.
		if topology.IsBaseline(r.Topology) && !r.Pair.Twin {
			pairs[d].st = r
		} else {
			pairs[d].top = r
		}
	}
	out := map[Key][]PairRatio{}
	for d, s := range pairs {
		if s.top == nil || s.st == nil || s.top.Failed() || s.st.Failed() || !(s.st.Figures.ReqPerSec > 0) {
			continue
		}
		first := s.top
		if s.st.Start.Before(s.top.Start) {
			first = s.st
		}
		k := Key{d.g, d.with}
		out[k] = append(out[k], PairRatio{
			Key: k, Index: d.index, Seq: s.top.Pair.Seq, Start: first.Start,
			TopologyFirst: s.top.Pair.First,
			Ratio:         s.top.Figures.ReqPerSec / s.st.Figures.ReqPerSec,
			CostRatio:     costRatio(*s.top, *s.st),
			Utilization:   utilization(*s.top), StandaloneUtilization: utilization(*s.st),
			Rate: s.top.Figures.ReqPerSec, StandaloneRate: s.st.Figures.ReqPerSec,
			Overhead: max(s.top.Wall-p.WindowOf(d.with), 0) + max(s.st.Wall-p.WindowOf(d.with), 0),
		})
	}
	for k := range out {
		slices.SortFunc(out[k], func(a, b PairRatio) int {
			return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Index, b.Index))
		})
	}
	return out
}

// costRatio is a pair's capacity ratio: standalone's servers' cost per
// request over the topology's; 0 when either was not measured.
func costRatio(top, st results.Run) float64 {
	tn, ts := servingParts(top.Topology, nil)
	sn, ss := servingParts(st.Topology, nil)
	t, ok1 := servingCost(top, tn, ts)
	s, ok2 := servingCost(st, sn, ss)
	if !ok1 || !ok2 {
		return 0
	}
	return s / t
}

// utilization is a window's servers' utilization; 0 when not counted.
func utilization(r results.Run) float64 {
	if r.CPU == nil || r.CPU.Servers == nil {
		return 0
	}
	return r.CPU.Servers.Utilization
}

// costPairs are the pairs that have a capacity ratio, as pairs whose
// ratio it is: pairedRatio takes them as it takes the rates'.
func costPairs(ps []PairRatio) []PairRatio {
	var out []PairRatio
	for _, p := range ps {
		if p.CostRatio > 0 {
			p.Ratio = p.CostRatio
			out = append(out, p)
		}
	}
	return out
}

// ratios are the pairs' ratios in their order.
func ratios(ps []PairRatio) []float64 {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i] = p.Ratio
	}
	return out
}

// PairedDesignOf is the sequential design a paired sweep on a budget
// spends its pairs by (stats.PairedDesign): its pilot the plan's first
// pairs, its most RepsAuto.Max, aiming at RepsAuto.Within; ok is false
// for a paired sweep of a fixed count of pairs, or none.
func PairedDesignOf(p results.Plan) (d stats.PairedDesign, ok bool) {
	if p.Paired == nil || p.RepsAuto == nil || p.RepsAuto.Budget == 0 {
		return d, false
	}
	d, err := stats.NewPairedDesign(p.Paired.Pairs, p.RepsAuto.Max, p.RepsAuto.Within)
	return d, err == nil
}

// PairedRho is the correlation allowance of a paired sweep's intervals,
// estimated once from every ratio's pairs (stats.SweepRho), the A/A's
// among them.
func PairedRho(pairs map[Key][]PairRatio) stats.Rho {
	keys := make([]Key, 0, len(pairs))
	for k := range pairs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(CompareGroups(a.Group, b.Group), cmp.Compare(a.Topology, b.Topology))
	})
	series := make([][]float64, len(keys))
	for i, k := range keys {
		series[i] = ratios(pairs[k])
	}
	return stats.SweepRho(series)
}

// pairedRatio is the ratio of a cell from its pairs' ratios in time
// order, with the sweep's correlation allowance rho: on a budget, the
// sequential design's interval (every pair's spread); otherwise
// stats.PairedRatio at the level. Nil without pairs.
func pairedRatio(p results.Plan, ps []PairRatio, level, rho float64) *Ratio {
	if len(ps) == 0 {
		return nil
	}
	xs := ratios(ps)
	pi := stats.PairedRatio(xs, level, rho)
	if d, ok := PairedDesignOf(p); ok {
		pi = d.Interval(xs, rho)
	}
	return ratioOfPaired(pi)
}

// pairedOf is the ratio of per-pair ratios xs (stats.PairedRatio); nil
// without any.
func pairedOf(xs []float64, level, rho float64) *Ratio {
	if len(xs) == 0 {
		return nil
	}
	return ratioOfPaired(stats.PairedRatio(xs, level, rho))
}

func ratioOfPaired(pi stats.PairedInterval) *Ratio {
	iv := Interval{Center: pi.Center, N: pi.N}
	if pi.Known() {
		lo, hi := pi.Lo, pi.Hi
		iv.Lo, iv.Hi = &lo, &hi
	}
	r := &Ratio{Interval: iv, Differs: iv.Excludes(1), N2: pi.N, Method: pi.Method}
	if !math.IsNaN(pi.Lag1) && pi.N >= 3 {
		r.Lag1 = new(pi.Lag1)
	}
	return r
}

// WindowPilot is the pilot WindowSpreads plans by: a budget's.
const WindowPilot = 6

// PathSpread is one path's spread of per-window rates at one window
// length, from one paired sweep, and what a ratio of it needs there
// (stats.WindowSpreads).
type PathSpread struct {
	// Key is the path's cell in its sweep; Dir the sweep.
	Key Key
	Dir string
	stats.WindowSpread
}

// WindowSpreads compares paired sweeps that differ in their window
// length: for each path of each, the spread of standalone's and the
// path's per-window rates over its pairs, the lag-1 autocorrelation of
// its pair ratios, and the pairs and measured time its ratio needs for
// precision under the design a budget would look by (up to maxPairs),
// with each pair's unmeasured time as measured. Sweeps that are not
// paired are refused by name.
func WindowSpreads(dirs []string, envs []results.Env, runs [][]results.Run, precision float64, maxPairs int) ([]PathSpread, error) {
	d, err := stats.NewPairedDesign(WindowPilot, maxPairs, precision)
	if err != nil {
		return nil, err
	}
	var out []PathSpread
	for i, env := range envs {
		if env.Plan.Paired == nil {
			return nil, fmt.Errorf("%s: not a paired sweep (compare -design paired)", dirs[i])
		}
		pairs := PairRatios(env.Plan, runs[i])
		keys := make([]Key, 0, len(pairs))
		for k := range pairs {
			keys = append(keys, k)
		}
		order := topologyOrder(env.Plan.Topologies, runs[i])
		slices.SortFunc(keys, func(a, b Key) int {
			return cmp.Or(CompareGroups(a.Group, b.Group), cmp.Compare(order[a.Topology], order[b.Topology]))
		})
		for _, k := range keys {
			ps := pairs[k]
			sample := stats.WindowSample{Window: env.Plan.WindowOf(k.Topology), Duet: env.Plan.Paired != nil && env.Plan.Paired.Duet}
			var overhead time.Duration
			for _, p := range ps {
				sample.Standalone = append(sample.Standalone, p.StandaloneRate)
				sample.Path = append(sample.Path, p.Rate)
				overhead += p.Overhead
			}
			overhead /= time.Duration(len(ps))
			w := stats.WindowSpreads([]stats.WindowSample{sample}, d, precision, overhead)[0]
			out = append(out, PathSpread{Key: k, Dir: dirs[i], WindowSpread: w})
		}
	}
	slices.SortStableFunc(out, func(a, b PathSpread) int {
		return cmp.Or(CompareGroups(a.Key.Group, b.Key.Group), cmp.Compare(a.Key.Topology, b.Key.Topology), cmp.Compare(a.Window, b.Window))
	})
	return out, nil
}

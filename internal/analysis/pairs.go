package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	momstats "github.com/aclements/go-moremath/stats"

	"github.com/topobench/topobench/internal/results"
)

// The paired design (results.Plan.Paired) records each measured window as
// a run tied to its pair (results.Run.Pair): a topology's window and
// standalone's beside it. This file is the one place that turns those
// windows into pairs and each pair into a ratio.

// PairRatio is one pair's ratio: the topology's req/s in its window over
// standalone's in the window beside it.
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
}

// PairRatios lists the complete pairs of a paired sweep by the
// topology's cell, each cell's in time order. A pair with a failed window,
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
		if r.Topology == Standalone {
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
		})
	}
	for k := range out {
		slices.SortFunc(out[k], func(a, b PairRatio) int {
			return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Index, b.Index))
		})
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

// pairedRatio is the ratio of a cell from its pairs' ratios in time
// order, at the level: the interval of stats.PairedRatio, valid when
// neighbouring pairs are correlated and when the sweep stopped by
// looking; nil without pairs.
func pairedRatio(ps []PairRatio, level float64) *Ratio {
	if len(ps) == 0 {
		return nil
	}
	pi := pairedInterval(ratios(ps), level)
	iv := Interval{Center: pi.Center, N: pi.N}
	if !math.IsInf(pi.Lo, 0) && !math.IsInf(pi.Hi, 0) && !math.IsNaN(pi.Lo) {
		lo, hi := pi.Lo, pi.Hi
		iv.Lo, iv.Hi = &lo, &hi
	}
	r := &Ratio{Interval: iv, Differs: iv.Excludes(1), N2: pi.N, Method: pi.Method}
	if !math.IsNaN(pi.Lag1) {
		r.Lag1 = new(pi.Lag1)
	}
	return r
}

// pairedIntervalResult is stats.PairedInterval's shape.
type pairedIntervalResult struct {
	Center, Lo, Hi float64
	N              int
	Lag1           float64
	Method         string
}

// pairedInterval is the seam to stats.PairedRatio (branch stats): until
// it lands, batch means of the log ratios with a t interval over the
// batches, batches of about √n pairs from 16 pairs on (fewer pairs are
// taken as independent, which their lag-1 autocorrelation, reported
// beside, must bear out).
func pairedInterval(xs []float64, level float64) pairedIntervalResult {
	n := len(xs)
	r := pairedIntervalResult{N: n, Lo: math.Inf(-1), Hi: math.Inf(1), Lag1: math.NaN()}
	logs := make([]float64, 0, n)
	for _, x := range xs {
		if !(x > 0) {
			r.Center = math.NaN()
			r.Method = "no interval: a ratio that is not positive"
			return r
		}
		logs = append(logs, math.Log(x))
	}
	mean := momstats.Mean(logs)
	r.Center = math.Exp(mean)
	if n >= 3 {
		var num, den float64
		for i, l := range logs {
			den += (l - mean) * (l - mean)
			if i > 0 {
				num += (l - mean) * (logs[i-1] - mean)
			}
		}
		if den > 0 {
			r.Lag1 = num / den
		}
	}
	m := 1
	if n >= 16 {
		m = int(math.Sqrt(float64(n)))
	}
	k := n / m
	r.Method = fmt.Sprintf("batch means of log ratios, %d batches of %d pairs, t interval", k, m)
	if k < 3 {
		return r
	}
	batches := make([]float64, k)
	for b := range k {
		batches[b] = momstats.Mean(logs[n-k*m+b*m : n-k*m+(b+1)*m]) // the first pairs left out when n is not a multiple
	}
	bm := momstats.Mean(batches)
	sd := momstats.StdDev(batches)
	t := tQuantile(float64(k-1), 1-(1-level)/2)
	half := t * sd / math.Sqrt(float64(k))
	r.Center = math.Exp(bm)
	r.Lo, r.Hi = math.Exp(bm-half), math.Exp(bm+half)
	return r
}

// tQuantile is Student's t quantile p with v degrees of freedom, by
// bisection of the CDF.
func tQuantile(v, p float64) float64 {
	d := momstats.TDist{V: v}
	lo, hi := 0.0, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if d.CDF(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

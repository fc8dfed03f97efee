package analysis

import (
	"math"

	moremath "github.com/aclements/go-moremath/stats"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// PairedCPU is nginx's and the server's CPU µs per request of a pair
// design's cell, from its measured windows: each window's µs is one
// sample, and each interval is Student's t at 95% over the windows
// (mean ± t·s/√n). A window is a sample of its own where a median's
// interval would need six of them; the pairs run long enough for the
// mean to be normal. Nil where no window measured the group; Lo and Hi
// nil with fewer than two windows.
func PairedCPU(windows []results.Run) (nginx, server *Interval) {
	var ns, vs []float64
	for _, r := range windows {
		if r.Pair == nil || r.Failed() {
			continue
		}
		_, n, v, ok := cpuPerRequest(r)
		if !ok {
			continue
		}
		if !math.IsNaN(n) {
			ns = append(ns, n)
		}
		if !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	return tInterval(ns), tInterval(vs)
}

// tInterval is the mean of xs with its t interval at 95%; nil without
// samples.
func tInterval(xs []float64) *Interval {
	if len(xs) == 0 {
		return nil
	}
	n := float64(len(xs))
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= n
	iv := &Interval{Center: mean, N: len(xs)}
	if len(xs) < 2 {
		return iv
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := moremath.InvCDF(moremath.TDist{V: n - 1})(1 - (1-stats.Confidence)/2)
	half := t * math.Sqrt(ss/(n-1)/n)
	lo, hi := mean-half, mean+half
	iv.Lo, iv.Hi = &lo, &hi
	return iv
}

package stats

import (
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// The paired design measures a topology as a sequence of pairs, a
// standalone window and the topology's window a few seconds apart on
// connections kept open, and each pair gives one ratio. The pairing
// cancels what hits both windows of a pair (a slow minute of the host);
// what is left may still be correlated from pair to pair (a path that
// wavers for longer than a pair, drift on one side only), so the pairs
// are not independent samples and an interval that treats them as such
// is too narrow.
//
// PairedRatio works on the logarithms of the ratios, so its center is
// their geometric mean and its interval is symmetric in the log (a ratio
// and its inverse get the same relative width). The interval is batch
// means: the pairs, in time order, are cut into non-overlapping batches
// of b neighbouring pairs, and the spread of the batch means gives the
// standard error of the mean with Student's t on (batches - 1) degrees
// of freedom. Neighbouring pairs inside a batch may be correlated; batch
// means are nearly independent when b is long beside the correlation.
// b is chosen from the data: the lag-1 autocorrelation of the log ratios
// (reported as Lag1) fixes the batch length an AR(1) process of that
// correlation needs, see batchSize. Batch means was chosen over a block
// bootstrap because the sweep looks at a topology's interval after a
// handful of pairs (6 to about 50), where a bootstrap's percentiles are
// too coarse at the per-look levels of a sequential design (99% and up
// need thousands of distinct resamples of a few blocks) and t on few
// degrees of freedom is exact for normal batch means; the simulations in
// paired_test.go hold the coverage.

// PairedInterval is the summary of one topology's per-pair ratios.
type PairedInterval struct {
	// Center is the geometric mean of the ratios.
	Center float64
	// Lo and Hi bound the ratio; infinite when there are too few pairs
	// for two batches or a ratio is not positive.
	Lo, Hi float64
	// N is the number of pairs.
	N int
	// Lag1 is the lag-1 autocorrelation of the log ratios in time order:
	// how much a pair resembles its neighbour (0 for independent pairs).
	Lag1 float64
	// BatchSize pairs make each of Batches batches.
	BatchSize, Batches int
	Confidence         float64
	// Method names the interval for a report: "batch means (5 batches
	// of 4 pairs), t at 99.2%".
	Method   string
	Warnings []string
}

// PairedRatio summarizes one topology's per-pair ratios, in the order the
// pairs were measured, with an interval at the confidence level (a
// PairedDesign's per-look level when the sweep stops by looking).
func PairedRatio(ratios []float64, confidence float64) PairedInterval {
	p := PairedInterval{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), N: len(ratios), Confidence: confidence}
	if len(ratios) == 0 {
		p.Warnings = []string{"no pairs"}
		return p
	}
	xs := make([]float64, len(ratios))
	for i, r := range ratios {
		if !(r > 0) || math.IsInf(r, 0) {
			p.Warnings = []string{fmt.Sprintf("paired ratio needs positive values, got %v", r)}
			return p
		}
		xs[i] = math.Log(r)
	}
	mean := meanOf(xs)
	p.Center = math.Exp(mean)
	p.Lag1 = lag1(xs)
	b := batchSize(len(xs), p.Lag1)
	k := len(xs) / b
	p.BatchSize, p.Batches = b, k
	p.Method = fmt.Sprintf("batch means (%d batches of %d pairs), t at %.4g%%", k, b, 100*confidence)
	if k < minBatches {
		p.Warnings = []string{fmt.Sprintf("need >= %d pairs for a paired interval, have %d", minBatches*b, len(xs))}
		return p
	}
	// The newest k*b pairs make the batches; the oldest n mod b only move
	// the center.
	rest := xs[len(xs)-k*b:]
	means := make([]float64, k)
	for i := range means {
		means[i] = meanOf(rest[i*b : (i+1)*b])
	}
	// The variance of one batch mean over b pairs, scaled to the mean of
	// all n pairs.
	se := math.Sqrt(variance(means) * float64(b) / float64(len(xs)))
	t := stats.InvCDF(stats.TDist{V: float64(k - 1)})(1 - (1-confidence)/2)
	p.Lo, p.Hi = math.Exp(mean-t*se), math.Exp(mean+t*se)
	return p
}

// minBatches is the fewest batches an interval is made of: t on one
// degree of freedom is too wide to be of use.
const minBatches = 3

// batchSize is the batch length for n log ratios whose lag-1
// autocorrelation is lag1.
func batchSize(n int, lag1 float64) int {
	return 1 // TODO: from the simulations
}

// Known reports whether the interval is finite.
func (p PairedInterval) Known() bool { return known(p.Center, p.Lo, p.Hi) }

// HalfWidth is the interval's larger distance from the center, relative
// to the center; +Inf when unknown.
func (p PairedInterval) HalfWidth() float64 { return halfWidth(p.Center, p.Lo, p.Hi) }

// Range is the interval as a "±" percentage, in benchstat's format.
func (p PairedInterval) Range() string {
	return benchmath.Summary{Center: p.Center, Lo: p.Lo, Hi: p.Hi}.PctRangeString()
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// variance is the sample variance (n - 1 in the denominator).
func variance(xs []float64) float64 {
	m := meanOf(xs)
	s := 0.0
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}

// lag1 is the lag-1 sample autocorrelation; 0 for fewer than 3 values or
// no spread.
func lag1(xs []float64) float64 {
	if len(xs) < 3 {
		return 0
	}
	m := meanOf(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i > 0 {
			num += (x - m) * (xs[i-1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

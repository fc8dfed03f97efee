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
// and its inverse get the same relative width). The interval is Student's
// t on the effective number of pairs: for pairs whose log ratios follow
// an AR(1) process of lag-1 autocorrelation rho, the mean of n of them
// varies as much as the mean of n(1-rho)/(1+rho) independent ones. rho is
// measured (Lag1), but from 6 to 50 pairs the measure is biased low by
// about (1+3 rho)/n and strays by about 1/sqrt(n), and a sweep that stops
// when the interval first looks narrow stops exactly where the measure
// strayed low. So the interval takes rho at lag1 + (1+3 lag1)/n +
// 0.75/sqrt(n), between 0 and 0.9: the correlation the pairs may still
// have, not the one they showed, and t's degrees of freedom are the
// effective pairs less one.
//
// Why not batch means or a block bootstrap, the usual answers: the sweep
// looks at a topology after 6 to 48 pairs, where either has few batches
// or blocks. In simulations (those of paired_test.go: AR(1) at phi 0,
// 0.3 and 0.6, drift, one-sided dips and slow episodes, heavy tails, the
// sweep stopping at the first look within ±5%), batch means with batch
// lengths planned from an upper estimate of rho needed 13-40% more pairs
// (a fifth, typically) for the same coverage, because t on 2-10 batches
// is wide; with batches planned from the measured rho they covered
// 89-93% at phi 0.6. A bootstrap's
// percentiles at the per-look levels (99% and up) need more distinct
// resamples than a few blocks have. Under the upper estimate, the
// intervals covered at least 95% in every simulated case; an interval
// that takes the pairs as independent covered 78% at phi 0.6.

// PairedInterval is the summary of one topology's per-pair ratios.
type PairedInterval struct {
	// Center is the geometric mean of the ratios.
	Center float64
	// Lo and Hi bound the ratio; infinite when there are fewer than 3
	// pairs or a ratio is not positive.
	Lo, Hi float64
	// N is the number of pairs.
	N int
	// Lag1 is the lag-1 autocorrelation of the log ratios in time order:
	// how much a pair resembles its neighbour (0 for independent pairs).
	Lag1 float64
	// Rho is the lag-1 autocorrelation the interval allowed for, and
	// Effective the number of independent pairs the N pairs are worth
	// under it.
	Rho, Effective float64
	Confidence     float64
	// Method names the interval for a report: "t on 9.3 effective of 14
	// pairs (lag-1 +0.07, allowed for +0.35), at 99.17%".
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
	return pairedInterval(xs, confidence)
}

// minPairs is the fewest pairs with an interval: the lag-1
// autocorrelation needs three.
const minPairs = 3

// pairedInterval is the interval of the log ratios xs.
func pairedInterval(xs []float64, confidence float64) PairedInterval {
	n := len(xs)
	mean := meanOf(xs)
	p := PairedInterval{Center: math.Exp(mean), Lo: math.Inf(-1), Hi: math.Inf(1), N: n, Confidence: confidence, Lag1: lag1(xs)}
	if n < minPairs {
		p.Warnings = []string{fmt.Sprintf("need >= %d pairs for a paired interval, have %d", minPairs, n)}
		return p
	}
	p.Rho = allowedRho(p.Lag1, n)
	p.Effective = effectivePairs(n, p.Rho)
	se := math.Sqrt(variance(xs) / p.Effective)
	t := tQuantile(p.Effective, confidence)
	p.Lo, p.Hi = math.Exp(mean-t*se), math.Exp(mean+t*se)
	p.Method = fmt.Sprintf("t on %.1f effective of %d pairs (lag-1 %+.2f, allowed for %+.2f), at %.4g%%", p.Effective, n, p.Lag1, p.Rho, 100*confidence)
	return p
}

// allowedRho is the lag-1 autocorrelation an interval of n pairs allows
// for when lag1 was measured: the measure with its bias added back and
// three quarters of its typical error above it, between 0 and 0.9.
func allowedRho(lag1 float64, n int) float64 {
	fn := float64(n)
	r := lag1 + (1+3*math.Max(lag1, 0))/fn + 0.75/math.Sqrt(fn)
	return math.Max(0, math.Min(r, 0.9))
}

// effectivePairs is what n pairs of an AR(1) process of lag-1
// autocorrelation rho are worth in independent pairs, for their mean.
func effectivePairs(n int, rho float64) float64 {
	return float64(n) * (1 - rho) / (1 + rho)
}

// tQuantile is the two-sided quantile of Student's t at the level on
// effective-1 degrees of freedom, at least 2 (t on 1 is so wide that no
// sweep could stop on it, and the simulations hold their coverage
// without). Newton's method from the normal quantile: the budget asks
// for intervals after every step, and the simulations for tens of
// thousands, where InvCDF's bisection took most of the time.
func tQuantile(effective, confidence float64) float64 {
	dist := stats.TDist{V: math.Max(2, effective-1)}
	p := 1 - (1-confidence)/2
	x := stats.StdNormal.InvCDF(p) // below the t quantile, where the CDF is concave
	for range 50 {
		step := (dist.CDF(x) - p) / dist.PDF(x)
		x -= step
		if math.Abs(step) <= 1e-12*x {
			return x
		}
	}
	return stats.InvCDF(dist)(p)
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

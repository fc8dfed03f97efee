package stats

import (
	"fmt"
	"math"
	"sort"

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
// t with a correlation allowance rho, the lag-1 autocorrelation the
// sweep's pairs may have (SweepRho): for pairs whose log ratios follow an
// AR(1) process of that autocorrelation, the mean of n of them varies
// inflation(rho, n)/n times their variance, and their sample variance is
// low by a known factor; both are allowed for, and t's degrees of freedom
// shrink as the pairs are worth fewer independent ones.

// PairedInterval is the summary of one topology's per-pair ratios.
type PairedInterval struct {
	// Center is the geometric mean of the ratios.
	Center float64
	// Lo and Hi bound the ratio; infinite when there are fewer than 3
	// pairs or a ratio is not positive.
	Lo, Hi float64
	// N is the number of pairs.
	N int
	// Lag1 is the lag-1 autocorrelation of the ratio's own log ratios in
	// time order, for the record; Rho the sweep's allowance the interval
	// used (SweepRho).
	Lag1, Rho  float64
	Confidence float64
	// Method names the interval for a report: "t on the spread of 9
	// pairs, correlation allowance +0.12, at 95%".
	Method   string
	Warnings []string
	// sd is the pairs' estimate of the log ratios' standard deviation,
	// what the pairs a ratio still needs are projected from.
	sd float64
}

// PairedRatio summarizes one topology's per-pair ratios, in the order the
// pairs were measured, with an interval at the confidence level taking
// the spread of all of them, allowing for correlation rho (SweepRho): a
// sweep of a fixed count of pairs. A budgeted sweep's ratios take
// PairedDesign.Interval.
func PairedRatio(ratios []float64, confidence, rho float64) PairedInterval {
	return pairedRatio(ratios, rho, confidence, confidence)
}

// minPairs is the fewest pairs with an interval.
const minPairs = 3

// pairedRatio is the interval of ratios at the given level, taking t at
// level tLevel (higher than level when the sweep stopped by looking).
func pairedRatio(ratios []float64, rho, level, tLevel float64) PairedInterval {
	p := PairedInterval{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), N: len(ratios), Rho: rho, Confidence: level}
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
	n := len(xs)
	mean := meanOf(xs)
	p.Center, p.Lag1 = math.Exp(mean), lag1(xs)
	if n < minPairs {
		p.Warnings = []string{fmt.Sprintf("need >= %d pairs for a paired interval, have %d", minPairs, n)}
		return p
	}
	// The sample variance is low by varianceBias under the allowed
	// correlation.
	p.sd = math.Sqrt(variance(xs) / varianceBias(rho, n))
	h := logHalfWidth(p.sd, rho, n, tLevel)
	p.Lo, p.Hi = math.Exp(mean-h), math.Exp(mean+h)
	p.Method = fmt.Sprintf("t on the spread of %d pairs, correlation allowance %+.2f, at %.4g%%", n, rho, 100*level)
	if tLevel != level {
		p.Method += fmt.Sprintf(" over the stopping rule (t at %.4g%%)", 100*tLevel)
	}
	return p
}

// logHalfWidth is the interval's half-width in the log for n pairs whose
// log ratios have standard deviation sd and lag-1 autocorrelation rho,
// with t at the level: the mean of n such pairs varies inflation/n
// times their variance, and t's degrees of freedom are the effective
// pairs less one.
func logHalfWidth(sd, rho float64, n int, level float64) float64 {
	return tQuantile(effectivePairs(n, rho), level) * sd * math.Sqrt(inflation(rho, n)/float64(n))
}

// inflation is how many times its variance over n the mean of n pairs
// of an AR(1) process of lag-1 autocorrelation rho varies:
// 1 + 2 sum_k (1-k/n) rho^k.
func inflation(rho float64, n int) float64 {
	a, pk := 1.0, 1.0
	for k := 1; k < n; k++ {
		pk *= rho
		a += 2 * (1 - float64(k)/float64(n)) * pk
	}
	return a
}

// varianceBias is the expected sample variance of n such pairs over
// their variance: (n - inflation)/(n - 1).
func varianceBias(rho float64, n int) float64 {
	return (float64(n) - inflation(rho, n)) / float64(n-1)
}

// effectivePairs is what n pairs of an AR(1) process of lag-1
// autocorrelation rho are worth in independent pairs, for their mean.
func effectivePairs(n int, rho float64) float64 {
	return float64(n) * (1 - rho) / (1 + rho)
}

// Rho is a sweep's lag-1 autocorrelation of neighbouring pairs' log
// ratios, estimated from all its ratios together.
type Rho struct {
	// Pooled is the raw pooled estimate (each ratio's typical pairs
	// about their own mean), Corrected the same less its bias for short
	// series, and Allowed what the intervals allow for: Corrected plus
	// rhoMargin of its standard error, between 0 and maxRho.
	Pooled, Corrected, Allowed float64
	// Series and Lags count the ratios and the neighbouring pairs it
	// took.
	Series, Lags int
}

// rhoMargin is how many standard errors above the estimate the
// allowance sits (chosen by TestPairedCoverage's simulations).
const rhoMargin = 0.0

// maxRho bounds the allowance: past it a sweep's pairs are worth too
// little to bother.
const maxRho = 0.9

// SweepRho estimates the lag-1 autocorrelation the pairs of a sweep's
// ratios share, from all of them: the products of neighbouring log
// ratios about each series' mean, pooled, with the bias of short series
// (about -(1+3 rho)/n for series of n) taken back. A pair far off its
// series (typical) is left out, its lag products with it: pooling weighs
// a series by its spread, so one pool that stalled for a pair or two
// would otherwise set the estimate for the whole sweep. Series of fewer
// than minPairs typical pairs are left out. With no lag to go by the
// allowance is maxRho.
func SweepRho(series [][]float64) Rho {
	var num, den float64
	var r Rho
	points := 0
	for _, ratios := range series {
		if len(ratios) < minPairs || !positive(ratios) {
			continue
		}
		xs := logs(ratios)
		keep := typical(xs)
		var kept []float64
		for i, x := range xs {
			if keep[i] {
				kept = append(kept, x)
			}
		}
		if len(kept) < minPairs {
			continue
		}
		m := meanOf(kept)
		for i, x := range xs {
			if !keep[i] {
				continue
			}
			den += (x - m) * (x - m)
			if i > 0 && keep[i-1] {
				num += (x - m) * (xs[i-1] - m)
				r.Lags++
			}
		}
		r.Series++
		points += len(kept)
	}
	if r.Series == 0 || den == 0 {
		r.Allowed = maxRho
		return r
	}
	n := float64(points) / float64(r.Series)
	r.Pooled = num / den
	if n <= 3 {
		r.Corrected, r.Allowed = r.Pooled, maxRho
		return r
	}
	r.Corrected = (n*r.Pooled + 1) / (n - 3)
	se := n / (n - 3) / math.Sqrt(float64(r.Lags))
	r.Allowed = math.Max(0, math.Min(r.Corrected+rhoMargin*se, maxRho))
	return r
}

// farMADs is how far from its median, in robust standard deviations
// (1.4826 median absolute deviations), a series' log ratio may lie and
// still count as typical: far enough that normal pairs are left alone.
const farMADs = 4.0

// typical says which of xs lie within farMADs robust standard deviations
// of their median; all of them when most values tie.
func typical(xs []float64) []bool {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	med := median(s)
	for i, x := range xs {
		s[i] = math.Abs(x - med)
	}
	sort.Float64s(s)
	c := farMADs * 1.4826 * median(s)
	keep := make([]bool, len(xs))
	for i, x := range xs {
		keep[i] = c == 0 || math.Abs(x-med) <= c
	}
	return keep
}

// median is the median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// String is the estimate for a report: "+0.05 (allowed +0.21, from 17
// ratios, 102 lags)".
func (r Rho) String() string {
	return fmt.Sprintf("%+.2f (allowed %+.2f, from %d ratios, %d lags)", r.Corrected, r.Allowed, r.Series, r.Lags)
}

// tQuantile is the two-sided quantile of Student's t at the level on
// effective-1 degrees of freedom, at least 2 (t on 1 is so wide that no
// sweep could stop on it). Newton's method from the normal quantile: the
// budget asks for intervals after every step, and the simulations for
// tens of thousands, where InvCDF's bisection took most of the time.
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

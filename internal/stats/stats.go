// Package stats summarizes the repetitions of a measurement the way
// benchstat does, so topobench's figures and benchstat's agree on the same
// samples: the median with a distribution-free 95% confidence interval
// (benchmath.AssumeNothing), and the Mann-Whitney U test for whether two
// sets of samples differ, at alpha 0.05.
//
// benchstat reports a ratio of two medians without an interval. For the
// ratio of a topology to standalone, Ratio adds one from the same rank
// statistics: the interval of the ratio of scale that the Mann-Whitney test
// inverts (the Hodges-Lehmann interval on the logarithms of the samples).
// It excludes 1 exactly when the U test finds the two samples different at
// the same level, and it needs as few as 4 repetitions of each, where a
// median's interval needs 6.
//
// The paired design (paired.go) measures a topology in pairs of windows,
// standalone's beside the topology's, and summarizes the per-pair ratios
// with PairedRatio: their geometric mean, with an interval that allows for
// neighbouring pairs being alike. PairedDesign says at which pair counts
// a sweep may stop a topology and at what level it must look there,
// NextPairs where a budget's next pairs go, and WindowSpreads what each
// window length costs a ratio.
package stats

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchmath"
)

// Confidence is the level of every interval; Alpha the significance level
// of every comparison. Both are benchstat's defaults.
const (
	Confidence = 0.95
	Alpha      = 0.05
)

// thresholds are benchstat's, with Alpha spelled out.
func thresholds() *benchmath.Thresholds {
	return &benchmath.Thresholds{CompareAlpha: Alpha}
}

// Summary is the median of a sample and its confidence interval.
type Summary struct {
	N      int
	Center float64
	// Lo and Hi bound the interval; they are infinite when the sample is
	// too small for one (fewer than 6 values at 95%).
	Lo, Hi float64
	// Confidence is the level the interval actually has: order statistics
	// give discrete levels, at least Confidence (0.969 for 6 values).
	Confidence float64
	// Warnings explain an infinite interval, as benchstat's footnotes do.
	Warnings []string
}

// Summarize returns the median of xs with its 95% interval. xs is not
// modified.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{Center: math.NaN(), Lo: math.Inf(-1), Hi: math.Inf(1), Warnings: []string{"no samples"}}
	}
	s := benchmath.NewSample(slices.Clone(xs), thresholds())
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	return Summary{
		N: len(xs), Center: sum.Center, Lo: sum.Lo, Hi: sum.Hi,
		Confidence: sum.Confidence, Warnings: messages(sum.Warnings),
	}
}

// Known reports whether the interval is finite.
func (s Summary) Known() bool { return known(s.Center, s.Lo, s.Hi) }

// HalfWidth is the interval's larger distance from the center, relative to
// the center (0.05 for ±5%); +Inf when the interval is unknown.
func (s Summary) HalfWidth() float64 { return halfWidth(s.Center, s.Lo, s.Hi) }

// Range is the interval as benchstat prints it after "±": "8%", "∞" when
// unknown, "?" when it straddles zero.
func (s Summary) Range() string {
	return benchmath.Summary{Center: s.Center, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
}

// Comparison says whether two samples differ: the U test's p-value, and
// the change of the median.
type Comparison struct {
	Old, New Summary
	// P is the two-sided p-value of the Mann-Whitney U test.
	P      float64
	Alpha  float64
	N1, N2 int
	// Warnings say why a difference could not be detected (too few
	// samples, all samples equal).
	Warnings []string
}

// Compare tests whether new differs from old.
func Compare(old, new []float64) Comparison {
	o := benchmath.NewSample(slices.Clone(old), thresholds())
	n := benchmath.NewSample(slices.Clone(new), thresholds())
	c := benchmath.AssumeNothing.Compare(o, n)
	return Comparison{
		Old: Summarize(old), New: Summarize(new),
		P: c.P, Alpha: c.Alpha, N1: c.N1, N2: c.N2, Warnings: messages(c.Warnings),
	}
}

// Significant reports whether the difference is significant at Alpha.
func (c Comparison) Significant() bool { return c.P <= c.Alpha }

// Delta is the relative change of the median, new/old - 1.
func (c Comparison) Delta() float64 { return c.New.Center/c.Old.Center - 1 }

// DeltaString is benchstat's "vs base" column: "+12.46%", or "~" when the
// difference is not significant.
func (c Comparison) DeltaString() string {
	return c.bm().FormatDelta(c.Old.Center, c.New.Center)
}

// Test is benchstat's note on the test: "p=0.041 n=6", or "n=6+8" for
// samples of different sizes.
func (c Comparison) Test() string { return c.bm().String() }

// String is the delta and the test as benchstat prints them:
// "+12.46% (p=0.041 n=6)" or "~ (p=0.065 n=6)".
func (c Comparison) String() string { return c.DeltaString() + " (" + c.Test() + ")" }

func (c Comparison) bm() benchmath.Comparison {
	return benchmath.Comparison{P: c.P, N1: c.N1, N2: c.N2, Alpha: c.Alpha}
}

// Ratio is the ratio of two samples' medians (num over den) with an
// interval for the ratio of their scales.
type Ratio struct {
	// Center is median(num) / median(den), the figure benchstat's
	// "vs base" is made of.
	Center float64
	// Lo and Hi bound the ratio; infinite when the samples are too small
	// (fewer than 4 each at 95%) or hold a value that is not positive.
	Lo, Hi     float64
	Confidence float64
	N1, N2     int
	Warnings   []string
}

// RatioOf returns num's median over den's with a 95% interval for the
// ratio. The interval is the distribution-free one for a ratio of scales:
// with D the n1*n2 pairwise ratios num[i]/den[j] in order, it runs from
// D[k] to D[n1*n2-1-k] for the largest k with P(U < k+1) <= alpha/2 under
// the Mann-Whitney U distribution. The samples need no pairing.
func RatioOf(num, den []float64) Ratio { return RatioAt(num, den, Confidence) }

// RatioAt is RatioOf at another confidence level: a sequential design's
// per-look level (Sequential.Confidence).
func RatioAt(num, den []float64, confidence float64) Ratio {
	r := Ratio{
		Center: Summarize(num).Center / Summarize(den).Center,
		Lo:     math.Inf(-1), Hi: math.Inf(1), Confidence: 1,
		N1: len(num), N2: len(den),
	}
	if len(num) == 0 || len(den) == 0 {
		r.Warnings = []string{"no samples"}
		return r
	}
	for _, x := range append(slices.Clone(num), den...) {
		if !(x > 0) || math.IsInf(x, 0) {
			r.Warnings = []string{fmt.Sprintf("ratio interval needs positive values, got %v", x)}
			return r
		}
	}
	k, conf := ratioOrder(len(num), len(den), confidence)
	if k < 0 {
		r.Warnings = []string{fmt.Sprintf("need >= %d samples of each for a ratio interval at level %v", MinRatioSamples(confidence), confidence)}
		return r
	}
	d := make([]float64, 0, len(num)*len(den))
	for _, x := range num {
		for _, y := range den {
			d = append(d, x/y)
		}
	}
	sort.Float64s(d)
	r.Lo, r.Hi, r.Confidence = d[k], d[len(d)-1-k], conf
	return r
}

// ratioOrder returns the 0-based order statistic k of the pairwise ratios
// that bounds the interval, and the interval's actual level; k is -1 when
// no finite interval reaches the level.
func ratioOrder(n1, n2 int, confidence float64) (k int, level float64) {
	tail := (1 - confidence) / 2
	dist := stats.UDist{N1: n1, N2: n2}
	// P(U <= u) for the U statistic without ties; the interval from the
	// (u+1)-th smallest ratio misses with probability 2*P(U <= u). The
	// CDF rises with u, so the largest u within the tail is found by
	// bisection: each CDF costs a pass over the distribution, and a walk
	// from 0 took seconds at 50 repetitions and half a minute at 100.
	lo, hi := 0, n1*n2/2 // the answer is in [lo-1, hi)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if dist.CDF(float64(mid)) <= tail {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if k = lo - 1; k < 0 {
		return -1, 0
	}
	return k, 1 - 2*dist.CDF(float64(k))
}

// MinRatioSamples is the smallest equal sample size with a finite ratio
// interval at the level.
func MinRatioSamples(confidence float64) int {
	for n := 2; n < 50; n++ {
		if k, _ := ratioOrder(n, n, confidence); k >= 0 {
			return n
		}
	}
	return 50
}

// Known reports whether the interval is finite.
func (r Ratio) Known() bool { return known(r.Center, r.Lo, r.Hi) }

// HalfWidth is the interval's larger distance from the center, relative to
// the center; +Inf when unknown.
func (r Ratio) HalfWidth() float64 { return halfWidth(r.Center, r.Lo, r.Hi) }

// Range is the interval as a "±" percentage, in benchstat's format.
func (r Ratio) Range() string {
	return benchmath.Summary{Center: r.Center, Lo: r.Lo, Hi: r.Hi}.PctRangeString()
}

// Pairwise divides num[i] by den[i]: the per-repetition ratios of two
// cells measured in the same rounds. Repetitions missing from either side
// (NaN) are skipped.
func Pairwise(num, den []float64) ([]float64, error) {
	if len(num) != len(den) {
		return nil, fmt.Errorf("pairwise ratio: %d values over %d", len(num), len(den))
	}
	var out []float64
	for i := range num {
		if math.IsNaN(num[i]) || math.IsNaN(den[i]) {
			continue
		}
		out = append(out, num[i]/den[i])
	}
	return out, nil
}

func known(c, lo, hi float64) bool {
	return !math.IsNaN(c) && !math.IsInf(lo, 0) && !math.IsInf(hi, 0)
}

func halfWidth(c, lo, hi float64) float64 {
	if !known(c, lo, hi) || c == 0 {
		return math.Inf(1)
	}
	return math.Max(hi/c-1, 1-lo/c)
}

func messages(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

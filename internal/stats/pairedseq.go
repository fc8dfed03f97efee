package stats

import (
	"fmt"
	"math"
	"strings"
)

// PairedDesign is the sequential design of a paired sweep: a topology's
// interval is looked at, and the topology may stop, only at a few
// pre-declared pair counts, the looks, which grow by half from MinPairs
// to MaxPairs (12, 18, 27, 41, 48). As in Sequential, each look's
// interval is at level 1 - Alpha/looks (Bonferroni), so the chance that
// the interval a topology stops at misses the truth is at most Alpha
// whatever the look and whatever the rule it stopped by. Few looks keep
// the per-look level low: one after every pair, 6 to 48, would be 43
// looks at 99.88% each, and t at that level on few degrees of freedom
// is more than twice as wide as at 99.2%. Nor is a look before 12 pairs
// worth its share of the level: PairedRatio allows for the correlation
// that few pairs cannot rule out, so at 6 and 9 pairs only ratios whose
// pairs stray less than 0.7% and 1.7% are within ±5%.
type PairedDesign struct {
	MinPairs, MaxPairs int
	Alpha              float64
}

// lookGrowth is how much each look's pair count exceeds the one before.
const lookGrowth = 1.5

// NewPairedDesign is the design looking from min to max pairs at error
// rate Alpha. The error names the bad bound.
func NewPairedDesign(min, max int) (PairedDesign, error) {
	if min < minPairs {
		return PairedDesign{}, fmt.Errorf("paired design: at least %d pairs before the first look, got %d", minPairs, min)
	}
	if max < min {
		return PairedDesign{}, fmt.Errorf("paired design: at most %d pairs is fewer than the first look's %d", max, min)
	}
	return PairedDesign{MinPairs: min, MaxPairs: max, Alpha: Alpha}, nil
}

// pairedMinPairs is the first look of PairedDesignUpTo.
const pairedMinPairs = 12

// PairedDesignUpTo is the design that looks first at 12 pairs (or max,
// if fewer) and last at max.
func PairedDesignUpTo(max int) (PairedDesign, error) {
	return NewPairedDesign(min(pairedMinPairs, max), max)
}

// Looks are the pair counts at which a topology's interval is looked at,
// in increasing order, from MinPairs to MaxPairs.
func (d PairedDesign) Looks() []int {
	var looks []int
	for n := d.MinPairs; n < d.MaxPairs; n = max(n+1, int(math.Round(float64(n)*lookGrowth))) {
		looks = append(looks, n)
	}
	return append(looks, d.MaxPairs)
}

// Confidence is the level of each look's interval.
func (d PairedDesign) Confidence() float64 { return 1 - d.Alpha/float64(len(d.Looks())) }

// IsLook reports whether n pairs is one of the looks.
func (d PairedDesign) IsLook(n int) bool {
	for _, l := range d.Looks() {
		if l == n {
			return true
		}
	}
	return false
}

// NextLook is the first look after n pairs; 0 when n is MaxPairs or more.
func (d PairedDesign) NextLook(n int) int {
	for _, l := range d.Looks() {
		if l > n {
			return l
		}
	}
	return 0
}

// Interval is a topology's interval at its last look: the interval of
// its first LastLook pairs at the per-look level. Pairs past the last look
// (a look not reached) are not counted.
func (d PairedDesign) Interval(ratios []float64) PairedInterval {
	return PairedRatio(ratios[:d.LastLook(len(ratios))], d.Confidence())
}

// LastLook is the largest look at or below n pairs; 0 before the first.
func (d PairedDesign) LastLook(n int) int {
	last := 0
	for _, l := range d.Looks() {
		if l <= n {
			last = l
		}
	}
	return last
}

// String names the rule for a report: "99% at each of 5 looks (12, 18,
// 27, 41, 48 pairs): 95% over all of them (Bonferroni)".
func (d PairedDesign) String() string {
	looks := d.Looks()
	ns := make([]string, len(looks))
	for i, l := range looks {
		ns[i] = fmt.Sprint(l)
	}
	return fmt.Sprintf("%.4g%% at each of %d looks (%s pairs): %.0f%% over all of them (Bonferroni)",
		100*d.Confidence(), len(looks), strings.Join(ns, ", "), 100*(1-d.Alpha))
}

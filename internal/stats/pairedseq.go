package stats

import (
	"fmt"
	"math"
	"sort"
)

// PairedDesign is the sequential design of a paired sweep on a budget:
// every ratio first gets Pilot pairs; then, while its interval on the
// spread of all its pairs so far, with the correlation the sweep's ratios
// show together (SweepRho), is wider than Precision, it gets more (Need
// projects how many from that spread), widest first, up to MaxPairs. Its
// interval narrows as its pairs come in, so one odd pair in the pilot
// costs a few pairs, not the pilot's spread for the rest of the sweep.
//
// Why it stays valid: a rule that stops the first time an interval looks
// narrow stops where the spread strayed low, and what a few pairs most
// underrate is slow or rare noise (drift longer than the pairs, a dip
// they missed), so a 95% t interval at the stop covers too seldom. t is
// therefore taken at 1 - lookShare*Alpha at every look and at the stop,
// the share that TestPairedCoverage finds keeps every simulated shape
// (independent, correlated, drifting, dipping, heavy-tailed, a bad first
// pair) at Confidence or more at the stop. Bonferroni over the looks
// would pay for any stopping rule; this pays for this one alone.
//
// Correlation between neighbouring pairs is estimated once per sweep from
// all its ratios' pairs together (SweepRho), not per ratio: a handful of
// pairs cannot tell their own correlation, sixteen ratios' worth can.
type PairedDesign struct {
	// Pilot is the pairs every ratio gets first; MaxPairs the most any
	// gets.
	Pilot, MaxPairs int
	// Precision is the half-width the intervals should reach, relative
	// to the ratio (0.05 for ±5%).
	Precision float64
	Alpha     float64
}

// minPilot is the smallest pilot: the correlation's bias correction
// needs pairs to spare beyond three.
const minPilot = 5

// NewPairedDesign is the design with a pilot of pilot pairs, at most max
// pairs a ratio, aiming at precision, at error rate Alpha. The error
// names the bad bound.
func NewPairedDesign(pilot, max int, precision float64) (PairedDesign, error) {
	if pilot < minPilot {
		return PairedDesign{}, fmt.Errorf("paired design: a pilot of at least %d pairs, got %d", minPilot, pilot)
	}
	if max < pilot {
		return PairedDesign{}, fmt.Errorf("paired design: at most %d pairs is fewer than the pilot's %d", max, pilot)
	}
	if !(precision > 0 && precision < 1) {
		return PairedDesign{}, fmt.Errorf("paired design: precision %g, want a fraction between 0 and 1", precision)
	}
	return PairedDesign{Pilot: pilot, MaxPairs: max, Precision: precision, Alpha: Alpha}, nil
}

// Confidence is the level of every interval of the design.
func (d PairedDesign) Confidence() float64 { return 1 - d.Alpha }

// Interval is a ratio's interval from its pairs' ratios in time order,
// with rho the sweep's correlation allowance (SweepRho): the geometric
// mean of all its pairs, with the spread of all of them.
func (d PairedDesign) Interval(ratios []float64, rho float64) PairedInterval {
	return pairedRatio(ratios, rho, d.Confidence(), d.lookLevel())
}

// lookLevel is the level of t at each look.
func (d PairedDesign) lookLevel() float64 { return 1 - lookShare*d.Alpha }

// lookShare is the part of the design's error rate t is taken at, at
// every look (98% for 95%): the largest share tried in
// TestPairedCoverage's sweeps that keeps every simulated noise shape at
// 95% or more at the stop.
const lookShare = 0.4

// Need is how many pairs a ratio needs, given its pairs so far and the
// sweep's correlation allowance, for its interval to reach the precision:
// Pilot while the pilot is not done; the pairs it has once its interval
// is within the precision; else the fewest at which the spread of all
// its pairs so far would reach it, at most MaxPairs; 0 when not even
// MaxPairs would.
func (d PairedDesign) Need(ratios []float64, rho float64) int {
	if len(ratios) < d.Pilot {
		return d.Pilot
	}
	p := d.Interval(ratios, rho)
	switch {
	case !p.Known():
		return 0
	case p.HalfWidth() <= d.Precision:
		return len(ratios)
	}
	// The half-width falls with n (t and the mean's variance both do),
	// so the fewest pairs that reach it are a binary search away.
	from := len(ratios) + 1
	i := sort.Search(max(0, d.MaxPairs-from+1), func(i int) bool {
		return math.Exp(logHalfWidth(p.sd, rho, from+i, d.lookLevel()))-1 <= d.Precision
	})
	if from+i > d.MaxPairs {
		return 0
	}
	return from + i
}

// String names the rule for a report: "sequential at 95%: a pilot of 6
// pairs, then more while a ratio is wider than ±5% on the spread of all
// its pairs, t at 98% at each look (at most 48)".
func (d PairedDesign) String() string {
	return fmt.Sprintf("sequential at %.4g%%: a pilot of %d pairs, then more while a ratio is wider than ±%.3g%% on the spread of all its pairs, t at %.4g%% at each look (at most %d)",
		100*d.Confidence(), d.Pilot, 100*d.Precision, 100*d.lookLevel(), d.MaxPairs)
}

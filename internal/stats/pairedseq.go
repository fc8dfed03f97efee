package stats

import (
	"fmt"
	"math"
)

// PairedDesign is the two-stage design of a paired sweep on a budget
// (Stein's two-stage procedure, with an allowance for correlated pairs):
// every ratio first gets Pilot pairs; their spread s0, with the
// correlation the sweep's ratios show together (SweepRho), fixes how many
// pairs the ratio needs for its interval to reach Precision (Need); the
// budget then runs those, widest first, up to MaxPairs.
//
// Why it stays valid: the interval's spread is the pilot's, so the
// number of pairs, which depends on the pilot alone, cannot be chosen by
// where the later pairs happened to fall, and the mean of all pairs over
// the pilot's spread follows Student's t on the pilot's degrees of
// freedom (Stein 1945). A sweep that instead stops the first time an
// interval looks narrow stops where its spread strayed low, and must pay
// for its looks (Bonferroni, alpha spending), which at 3-12 pairs leaves
// intervals that cannot reach ±5%. Here nothing is spent on looks: at 95%
// a ratio whose pairs stray 5% reaches ±5% in 7-8 pairs after a pilot of
// 6 if they are independent.
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
// mean of all its pairs, with the spread of its first Pilot.
func (d PairedDesign) Interval(ratios []float64, rho float64) PairedInterval {
	return pairedRatio(ratios, min(d.Pilot, len(ratios)), rho, d.Confidence())
}

// Need is how many pairs a ratio needs, given its pairs so far and the
// sweep's correlation allowance, for its interval to reach the precision:
// Pilot while the pilot is not done, at most MaxPairs; 0 when not even
// MaxPairs reach it.
func (d PairedDesign) Need(ratios []float64, rho float64) int {
	if len(ratios) < d.Pilot {
		return d.Pilot
	}
	p := d.Interval(ratios, rho)
	if !p.Known() {
		return 0
	}
	for n := d.Pilot; n <= d.MaxPairs; n++ {
		if math.Exp(p.tScale*math.Sqrt(inflation(rho, n)/float64(n)))-1 <= d.Precision {
			return n
		}
	}
	return 0
}

// String names the rule for a report: "two-stage at 95%: a pilot of 6
// pairs, then the pairs each ratio needs for ±5% (at most 48)".
func (d PairedDesign) String() string {
	return fmt.Sprintf("two-stage at %.4g%%: a pilot of %d pairs, then the pairs each ratio needs for ±%.3g%% (at most %d)",
		100*d.Confidence(), d.Pilot, 100*d.Precision, d.MaxPairs)
}

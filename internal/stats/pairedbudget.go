package stats

import (
	"fmt"
	"time"
)

// Arm is one topology of a paired sweep as the budget sees it.
type Arm struct {
	// Ratios are its per-pair ratios so far, in time order.
	Ratios []float64
	// Cost is what one more pair of it takes: two measured windows and
	// the drains, by the sweep's own measure so far.
	Cost time.Duration
	// Closed arms get no more pairs whatever their interval (the load
	// generator paced them, their pool failed).
	Closed bool
}

// Step is what a paired sweep does next: Pairs more pairs of Arms[Arm].
// Arm is -1 when the sweep is done, and Why says why.
type Step struct {
	Arm, Pairs int
	Why        string
}

// NextPairs is the budget's rule for a paired sweep: the arm whose
// interval at its last look is widest gets the pairs that take it to its
// next look, if they fit in left; arms within precision at a look, at
// MaxPairs or closed get none. When the widest does not fit, the next
// widest that fits goes instead. Every arm thus ends at a look, where its
// interval has the design's per-look level. Ties go to the arm with
// fewer pairs, then to the first.
func NextPairs(arms []Arm, d PairedDesign, precision float64, left time.Duration) Step {
	best, open := -1, 0
	var bestWidth float64
	for i, a := range arms {
		n := len(a.Ratios)
		next := d.NextLook(n)
		if a.Closed || next == 0 {
			continue
		}
		w := d.Interval(a.Ratios).HalfWidth()
		if d.LastLook(n) > 0 && w <= precision {
			continue
		}
		open++
		if time.Duration(next-n)*a.Cost > left {
			continue
		}
		if best < 0 || w > bestWidth || (w == bestWidth && n < len(arms[best].Ratios)) {
			best, bestWidth = i, w
		}
	}
	switch {
	case best >= 0:
		n := len(arms[best].Ratios)
		return Step{Arm: best, Pairs: d.NextLook(n) - n}
	case open == 0:
		return Step{Arm: -1, Why: stopReason(arms, d, precision)}
	default:
		return Step{Arm: -1, Why: fmt.Sprintf("%d ratios still wider than ±%.3g%%, and none's next pairs fit in the %s left", open, 100*precision, left.Round(time.Second))}
	}
}

func stopReason(arms []Arm, d PairedDesign, precision float64) string {
	wide, closed := 0, 0
	for _, a := range arms {
		switch {
		case a.Closed:
			closed++
		case d.Interval(a.Ratios).HalfWidth() > precision:
			wide++
		}
	}
	switch {
	case wide == 0 && closed == 0:
		return fmt.Sprintf("every ratio within ±%.3g%%", 100*precision)
	case wide == 0:
		return fmt.Sprintf("every open ratio within ±%.3g%%; %d closed", 100*precision, closed)
	}
	return fmt.Sprintf("%d ratios wider than ±%.3g%% have %d pairs, the most the design allows; %d closed", wide, 100*precision, d.MaxPairs, closed)
}

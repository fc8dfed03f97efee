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
	// Here says the arm's servers run now: arms here go first, so that
	// the servers restart once, not at every step.
	Here bool
}

// Step is what a paired sweep does next: Pairs more pairs of Arms[Arm].
// Arm is -1 when the sweep is done, and Why says why.
type Step struct {
	Arm, Pairs int
	Why        string
}

// StepPairs is the most pairs a ratio gets at once past its pilot: the
// sweep's correlation allowance, estimated again after every step, is
// still rough after the pilots (six pairs a ratio tell little), and a
// ratio given all it then seemed to need would be given too many.
const StepPairs = 2

// hereBonus is how much wider an arm whose servers run counts when the
// budget chooses: a restart of the servers and their pools costs about
// one pair.
const hereBonus = 1.25

// NextPairs is the budget's rule for a paired sweep under the sequential
// design d, with rho the sweep's correlation allowance (SweepRho): of the
// arms short of the pairs they need (d.Need: the pilot first, then, while
// wider than the precision, what the spread of all their pairs asks for,
// MaxPairs when even that is not enough),
// the one whose interval is widest gets them, at most StepPairs past the
// pilot and no more than fit in left; an arm whose servers run now (Here)
// counts as hereBonus wider. Closed arms get none. Ties go to the arm with fewer pairs,
// then to the first.
func NextPairs(arms []Arm, d PairedDesign, rho float64, left time.Duration) Step {
	best, open, want := -1, 0, 0
	var bestWidth float64
	for i, a := range arms {
		n := len(a.Ratios)
		need := d.Need(a.Ratios, rho)
		if need == 0 {
			need = d.MaxPairs
		}
		if a.Closed || n >= need {
			continue
		}
		open++
		fit := need - n
		if n >= d.Pilot {
			fit = min(fit, StepPairs)
		}
		if a.Cost > 0 {
			fit = min(fit, int(left/a.Cost))
		}
		if fit < 1 {
			continue
		}
		// An arm whose servers run now counts as wider by hereBonus:
		// ties and near-ties stay on the running servers, a clearly
		// wider ratio elsewhere is worth their restart.
		w := d.Interval(a.Ratios, rho).HalfWidth()
		if a.Here {
			w *= hereBonus
		}
		if best < 0 || w > bestWidth || (w == bestWidth && n < len(arms[best].Ratios)) {
			best, bestWidth, want = i, w, fit
		}
	}
	switch {
	case best >= 0:
		return Step{Arm: best, Pairs: want}
	case open == 0:
		return Step{Arm: -1, Why: stopReason(arms, d, rho)}
	default:
		return Step{Arm: -1, Why: fmt.Sprintf("%d ratios short of the pairs they need, and not one more pair fits in the %s left", open, left.Round(time.Second))}
	}
}

func stopReason(arms []Arm, d PairedDesign, rho float64) string {
	wide, closed := 0, 0
	for _, a := range arms {
		switch {
		case a.Closed:
			closed++
		case d.Interval(a.Ratios, rho).HalfWidth() > d.Precision:
			wide++
		}
	}
	switch {
	case wide == 0 && closed == 0:
		return fmt.Sprintf("every ratio within ±%.3g%%", 100*d.Precision)
	case wide == 0:
		return fmt.Sprintf("every open ratio within ±%.3g%%; %d closed", 100*d.Precision, closed)
	}
	return fmt.Sprintf("%d ratios wider than ±%.3g%% have %d pairs, the most the design allows; %d closed", wide, 100*d.Precision, d.MaxPairs, closed)
}

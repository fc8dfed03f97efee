package stats

import "fmt"

// Sequential is a pre-declared sequential design for a ratio: the sweep
// may look at the runs of a cell, and stop adding runs because of what it
// sees, at each sample size from Min to Max. An interval at the fixed-size
// level (95%) is too narrow when the decision to stop is taken by looking
// at it: stopping at the first look where the interval is narrow enough
// picks the looks where it happens to be narrow, and a 95% interval then
// covers the truth less often than 95% of the time. Sequential splits the
// error rate over the looks instead (Bonferroni): each look's interval is
// at level 1 - Alpha/Looks, so the chance that any look's interval misses
// is at most Alpha, whichever look the sweep stops at and whatever rule it
// stops by. Min is the fewest runs that give a finite interval at that
// level.
type Sequential struct {
	Min, Max int
	Alpha    float64
}

// SequentialUpTo is the design that looks at every sample size from the
// fewest with a finite ratio interval up to max, at error rate Alpha.
// Each look costs level, so Min is the smallest n for which n runs of each
// cell give a finite interval at 1 - Alpha/(max-n+1).
func SequentialUpTo(max int) (Sequential, error) {
	for n := 2; n <= max; n++ {
		d := Sequential{Min: n, Max: max, Alpha: Alpha}
		if MinRatioSamples(d.Confidence()) <= n {
			return d, nil
		}
	}
	return Sequential{}, fmt.Errorf("%d runs are too few for a ratio interval at %v over every look", max, 1-Alpha)
}

// Looks is the number of sample sizes at which the sweep may stop.
func (d Sequential) Looks() int { return max(1, d.Max-d.Min+1) }

// Confidence is the level of each look's interval.
func (d Sequential) Confidence() float64 { return 1 - d.Alpha/float64(d.Looks()) }

// String names the rule for a report: "99.2% at each of 6 looks (5 to 10
// runs): 95% over all of them (Bonferroni)".
func (d Sequential) String() string {
	return fmt.Sprintf("%.4g%% at each of %d looks (%d to %d runs): %.0f%% over all of them (Bonferroni)",
		100*d.Confidence(), d.Looks(), d.Min, d.Max, 100*(1-d.Alpha))
}

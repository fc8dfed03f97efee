package stats

import (
	"math"

	"github.com/aclements/go-moremath/stats"
)

// MeanDiff is the mean of paired differences with Student's t interval:
// each difference one pair's, the pairs independent.
type MeanDiff struct {
	Mean float64
	// Lo and Hi bound the mean; infinite for fewer than 2 differences.
	Lo, Hi     float64
	N          int
	Confidence float64
}

// MeanDiffOf summarizes differences d at the confidence level.
func MeanDiffOf(d []float64, confidence float64) MeanDiff {
	out := MeanDiff{N: len(d), Confidence: confidence, Lo: math.Inf(-1), Hi: math.Inf(1)}
	if len(d) == 0 {
		out.Mean = math.NaN()
		return out
	}
	out.Mean = meanOf(d)
	if len(d) < 2 {
		return out
	}
	t := stats.InvCDF(stats.TDist{V: float64(len(d) - 1)})(1 - (1-confidence)/2)
	h := t * math.Sqrt(variance(d)/float64(len(d)))
	out.Lo, out.Hi = out.Mean-h, out.Mean+h
	return out
}

// Known reports whether the interval is finite.
func (m MeanDiff) Known() bool {
	return !math.IsInf(m.Lo, 0) && !math.IsInf(m.Hi, 0) && !math.IsNaN(m.Mean)
}

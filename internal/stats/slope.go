package stats

import "math"

// Slope is the slope of log y on log x within groups, each group at a level of
// its own (the pooled within-group regression of an analysis of
// covariance), with its standard error and the share of y's spread
// within the groups it explains.
type Slope struct {
	Slope, SE, R2 float64
	// N is the points the fit took, Groups the groups they came in.
	N, Groups int
}

// LogSlope fits log y on log x over groups of positive points (xs[g][i],
// ys[g][i]): the elasticity of y in x, each group at its own level.
// Groups of fewer than two points are left out. ok is false when the
// groups leave fewer than three degrees of freedom beyond their levels and
// the slope, or x or y does not vary within them.
func LogSlope(xs, ys [][]float64) (s Slope, ok bool) {
	var sxx, sxy, syy float64
	for g := range xs {
		if len(xs[g]) < 2 || len(xs[g]) != len(ys[g]) {
			continue
		}
		x, y := logs(xs[g]), logs(ys[g])
		mx, my := meanOf(x), meanOf(y)
		for i := range x {
			sxx += (x[i] - mx) * (x[i] - mx)
			sxy += (x[i] - mx) * (y[i] - my)
			syy += (y[i] - my) * (y[i] - my)
		}
		s.N += len(x)
		s.Groups++
	}
	dof := s.N - s.Groups - 1
	if dof < 3 || sxx <= 0 || syy <= 0 {
		return s, false
	}
	s.Slope = sxy / sxx
	resid := max(syy-s.Slope*sxy, 0)
	s.SE = math.Sqrt(resid / float64(dof) / sxx)
	s.R2 = 1 - resid/syy
	return s, true
}

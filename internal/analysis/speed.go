package analysis

import (
	"fmt"
	"math"
	"slices"
)

// SpeedFit is how the rates of a sweep followed the speed of the
// servers' CPUs from run to run, as the speed probes measured it
// (compare -speed-probe): the slope of log req/s on log speed within the
// cells (each cell keeps its own level, as in an analysis of covariance),
// over every run of the cells whose runs all have a speed.
//
// The slope is measured, not assumed to be 1: the probe is a loop of
// arithmetic on each CPU, 1% of its time, and the servers' work (the
// kernel's network paths, cache and memory) slows more than arithmetic
// does when the host takes capacity away. On the 2-core VM the slope was
// 4.3-4.5, and the speed explained 55-80% of the spread of engine/wrk
// pairs (docs/results.md).
type SpeedFit struct {
	// Slope is d log(req/s) / d log(speed), SE its standard error.
	Slope float64 `json:"slope"`
	SE    float64 `json:"se"`
	// R2 is the share of the rates' spread within cells the speed
	// explains.
	R2 float64 `json:"r2"`
	// Runs and Cells are what the fit took; Speed is the runs' median
	// speed, to which the ratios at equal speed bring every run.
	Runs  int     `json:"runs"`
	Cells int     `json:"cells"`
	Speed float64 `json:"median_speed"`
}

// Adjusts reports whether the fit is known well enough to adjust by:
// a slope at least twice its standard error. Below that the runs do not
// show the speed moving the rates, and an adjustment would add the
// slope's noise to every ratio.
func (f SpeedFit) Adjusts() bool { return f.SE > 0 && math.Abs(f.Slope) >= 2*f.SE }

func (f SpeedFit) String() string {
	return fmt.Sprintf("slope %.2f ± %.2f (standard error), r² %.2f, over %d runs of %d cells", f.Slope, f.SE, f.R2, f.Runs, f.Cells)
}

// adjustForSpeed fits the slope over the cells whose runs all have a
// speed and, when it Adjusts, sets each such cell's speedRates: every
// run's rate as it would have been at the median speed. Nil when fewer
// than two cells, or too few runs, have speeds.
func (s *Summary) adjustForSpeed() *SpeedFit {
	var all []float64
	var sxx, sxy, syy float64
	f := SpeedFit{}
	for _, c := range s.Cells {
		if c.speeds == nil || len(c.rates) < 2 {
			continue
		}
		xs, ys := logs(c.speeds), logs(c.rates)
		mx, my := mean(xs), mean(ys)
		for i := range xs {
			sxx += (xs[i] - mx) * (xs[i] - mx)
			sxy += (xs[i] - mx) * (ys[i] - my)
			syy += (ys[i] - my) * (ys[i] - my)
		}
		all = append(all, c.speeds...)
		f.Runs += len(xs)
		f.Cells++
	}
	// One level a cell and the slope: at least three runs beyond them.
	dof := f.Runs - f.Cells - 1
	if f.Cells == 0 || dof < 3 || sxx <= 0 || syy <= 0 {
		return nil
	}
	f.Slope = sxy / sxx
	resid := max(syy-f.Slope*sxy, 0)
	f.SE = math.Sqrt(resid / float64(dof) / sxx)
	f.R2 = 1 - resid/syy
	slices.Sort(all)
	f.Speed = all[len(all)/2]
	if len(all)%2 == 0 {
		f.Speed = (all[len(all)/2-1] + all[len(all)/2]) / 2
	}
	if f.Adjusts() {
		for i := range s.Cells {
			c := &s.Cells[i]
			if c.speeds == nil {
				continue
			}
			c.speedRates = make([]float64, len(c.rates))
			for j, r := range c.rates {
				c.speedRates[j] = r * math.Pow(f.Speed/c.speeds[j], f.Slope)
			}
		}
	}
	return &f
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x)
	}
	return out
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

package analysis

import (
	"fmt"
	"math"

	"github.com/topobench/topobench/internal/stats"
)

// SpeedFit is how the rates of a sweep followed the speed of the
// servers' CPUs from run to run, as the speed probes measured it
// (compare -speed-probe): the slope of log req/s on log speed within the
// cells (each cell keeps its own level, as in an analysis of covariance),
// over every run of the cells whose runs all have a speed.
//
// It says whether the spread of a sweep's rates is the host's: a slope
// well above one, and a speed that explains much of the rates' spread
// within cells, say the host sets the pace.
//
// No ratio is adjusted by it. The probe's reading also moves with the
// work on its CPU, not only with the host: its spin loses the time the
// CPU's interrupts take (this kernel does not account interrupt time
// apart), and each topology's traffic brings its own: the servers' and
// the load's CPUs read different speeds under nginx than under
// standalone, so a ratio of two cells at "equal speed" would carry that
// difference times the slope.
type SpeedFit struct {
	// Slope is d log(req/s) / d log(speed), SE its standard error.
	Slope float64 `json:"slope"`
	SE    float64 `json:"se"`
	// R2 is the share of the rates' spread within cells the speed
	// explains.
	R2 float64 `json:"r2"`
	// Runs and Cells are what the fit took.
	Runs  int `json:"runs"`
	Cells int `json:"cells"`
}

// Follows reports whether the rates measurably followed the speed: a
// slope at least twice its standard error.
func (f SpeedFit) Follows() bool { return f.SE > 0 && math.Abs(f.Slope) >= 2*f.SE }

func (f SpeedFit) String() string {
	return fmt.Sprintf("slope %.2f ± %.2f (standard error), r² %.2f, over %d runs of %d cells", f.Slope, f.SE, f.R2, f.Runs, f.Cells)
}

// fitSpeed fits the slope over the cells whose runs all have a speed;
// nil when too few runs have one.
func (s *Summary) fitSpeed() *SpeedFit {
	var xs, ys [][]float64
	for _, c := range s.Cells {
		if c.speeds != nil {
			xs, ys = append(xs, c.speeds), append(ys, c.rates)
		}
	}
	fit, ok := stats.LogSlope(xs, ys)
	if !ok {
		return nil
	}
	return &SpeedFit{Slope: fit.Slope, SE: fit.SE, R2: fit.R2, Runs: fit.N, Cells: fit.Groups}
}

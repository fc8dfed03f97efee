package report

import (
	"math"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// pm is the interval as benchstat prints it after the center: "± 4%", or
// "± ∞" when unknown.
func pm(iv analysis.Interval) string {
	hw := iv.HalfWidth()
	if math.IsInf(hw, 0) {
		return "± ∞"
	}
	return "± " + numfmt.Pct(hw)
}

// mark is "~" when the ratio does not show a difference, benchstat's sign
// for "no significant change".
func mark(r *analysis.Ratio) string {
	if r == nil || r.Differs {
		return ""
	}
	return " ~"
}

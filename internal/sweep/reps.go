package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// Defaults of -reps auto.
const (
	DefaultMaxReps = 12
	DefaultWithin  = 0.05
)

// ParseReps reads -reps: a count ("3"), "auto" (from the fewest rounds
// that give a 95% interval up to DefaultMaxReps), or "auto:N" (up to N).
func ParseReps(v string) (reps int, auto *results.RepsAuto, err error) {
	rest, isAuto := strings.CutPrefix(v, "auto")
	if !isAuto {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, nil, fmt.Errorf("%q is not a count, auto or auto:N", v)
		}
		return n, nil, nil
	}
	max := DefaultMaxReps
	if rest != "" {
		m, ok := strings.CutPrefix(rest, ":")
		n, err := strconv.Atoi(m)
		if !ok || err != nil {
			return 0, nil, fmt.Errorf("%q: want auto or auto:N with N the most repetitions", v)
		}
		max = n
	}
	d, err := stats.SequentialUpTo(max)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", v, err)
	}
	return d.Min, &results.RepsAuto{Max: max, Within: DefaultWithin, Confidence: d.Confidence()}, nil
}

package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPct: a whole percentage keeps its sign ("10%", not "10").
func TestPct(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.1, "10%"}, {0.162, "16.2%"}, {0.0049, "0.5%"}, {0, "0%"}, {math.NaN(), "–"}, {math.Inf(1), "–"},
	} {
		t.Run(tc.want, func(t *testing.T) { assert.Equal(t, tc.want, pct(tc.in)) })
	}
}

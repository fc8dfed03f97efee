package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLogSlope: each group keeps its level; the slope, its standard
// error and r² are those of the pooled within-group regression of log y
// on log x; too few points, or an x that does not vary, give none.
func TestLogSlope(t *testing.T) {
	// log y = level + 2 log x + e, the levels far apart and e
	// alternating ±0.1: the points are exp of those.
	exp := func(v ...float64) []float64 {
		for i := range v {
			v[i] = math.Exp(v[i])
		}
		return v
	}
	xs := [][]float64{exp(1, 2, 3, 4), exp(1, 2, 3, 4), exp(5)}
	ys := [][]float64{exp(12.1, 13.9, 16.1, 17.9), exp(102.1, 103.9, 106.1, 107.9), exp(7)}
	s, ok := LogSlope(xs, ys)
	assert.True(t, ok)
	assert.InDelta(t, 1.96, s.Slope, 1e-9, "sxy 19.6 over sxx 10")
	assert.Equal(t, 8, s.N)
	assert.Equal(t, 2, s.Groups, "the group of one point is left out")
	// Residuals: syy 38.48 - 1.96*19.6 = 0.064, over 5 degrees of
	// freedom and sxx 10.
	assert.InDelta(t, 0.064, (1-s.R2)*38.48, 1e-9)
	assert.InDelta(t, 0.0358, s.SE, 1e-4)

	for name, in := range map[string][2][][]float64{
		"too few points":  {{{1, 2}, {1, 2}}, {{1, 2}, {3, 4}}},
		"x does not vary": {{{1, 1, 1}, {2, 2, 2}}, {{1, 2, 3}, {4, 5, 6}}},
	} {
		_, ok := LogSlope(in[0], in[1])
		assert.False(t, ok, name)
	}
}

package stats

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMeanDiffOf(t *testing.T) {
	tests := []struct {
		name       string
		d          []float64
		mean, half float64
		known      bool
	}{
		// t(0.975, 2) = 4.3027; sd of {1,2,3} is 1: 4.3027/sqrt(3).
		{"three", []float64{1, 2, 3}, 2, 4.302653 / math.Sqrt(3), true},
		// t(0.975, 1) = 12.706; sd of {0,2} is sqrt 2: 12.706*sqrt2/sqrt2.
		{"two", []float64{0, 2}, 1, 12.706205, true},
		{"one", []float64{5}, 5, math.Inf(1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := MeanDiffOf(tt.d, 0.95)
			assert.InDelta(t, tt.mean, m.Mean, 1e-9)
			assert.Equal(t, tt.known, m.Known())
			if tt.known {
				assert.InDelta(t, tt.half, m.Hi-m.Mean, 1e-4)
				assert.InDelta(t, tt.half, m.Mean-m.Lo, 1e-4)
			}
		})
	}
	assert.True(t, math.IsNaN(MeanDiffOf(nil, 0.95).Mean))
}

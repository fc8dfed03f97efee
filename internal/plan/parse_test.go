package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func TestParseReps(t *testing.T) {
	tests := []struct {
		in      string
		reps    int
		auto    *results.RepsAuto
		wantErr string
	}{
		{"3", 3, nil, ""},
		{"12", 12, nil, ""},
		// The first rounds are the fewest with a ratio interval at the
		// per-look level of the looks from there to N (stats.Sequential).
		{"auto", 6, &results.RepsAuto{Max: 12, Within: 0.05, Confidence: 1 - 0.05/7}, ""},
		{"auto:20", 6, &results.RepsAuto{Max: 20, Within: 0.05, Confidence: 1 - 0.05/15}, ""},
		{"auto:6", 5, &results.RepsAuto{Max: 6, Within: 0.05, Confidence: 1 - 0.05/2}, ""},
		{"auto:4", 4, &results.RepsAuto{Max: 4, Within: 0.05, Confidence: 0.95}, ""},
		{"auto:3", 0, nil, "auto:3: 3 runs are too few for a ratio interval"},
		{"auto:", 0, nil, "want auto or auto:N"},
		{"auto12", 0, nil, "want auto or auto:N"},
		{"lots", 0, nil, `"lots" is not a count`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			reps, auto, err := ParseReps(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.reps, reps)
			if tt.auto == nil {
				assert.Nil(t, auto)
				return
			}
			require.NotNil(t, auto)
			assert.InDelta(t, tt.auto.Confidence, auto.Confidence, 1e-12)
			tt.auto.Confidence = auto.Confidence
			assert.Equal(t, tt.auto, auto)
		})
	}
}

// autoPlan is standalone and nginx-http at GOMAXPROCS 1 and 2 under
// -reps auto: six first rounds, up to eight, ±5%.
func autoPlan() Plan {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 2}, Connections: []int{100},
		Reps: 6, RepsAuto: &results.RepsAuto{Max: 8, Within: 0.05}, Duration: time.Second, Threads: 1, Timeout: time.Second}}
	return p
}

func TestValidateRepsAuto(t *testing.T) {
	p := autoPlan()
	require.NoError(t, p.Validate(Where{}))
	p.RepsAuto.Max = 5
	assert.ErrorContains(t, p.Validate(Where{}), "-reps: auto:5 is fewer than the 6 first rounds")
	p = autoPlan()
	p.RepsAuto.Within = 0
	assert.ErrorContains(t, p.Validate(Where{}), "-reps")
}

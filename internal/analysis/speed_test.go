package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// TestSpeedFit: the slope of log rate on log speed within cells, with
// its standard error, from the runs that all have a speed; the warning
// when the rates follow it, none when they do not; no ratio moves; none
// for a paired sweep.
func TestSpeedFit(t *testing.T) {
	speeds := []float64{5, 6, 7, 8, 5.5, 7.5}
	sweep := func(drop bool) (results.Env, []results.Run) {
		env := results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 6, Duration: 10 * time.Second}}
		var runs []results.Run
		for i, sp := range speeds {
			for _, c := range []struct {
				top   string
				rate  float64
				speed float64
			}{{"standalone", 40000, sp}, {"nginx-http", 16000, speeds[(i+3)%len(speeds)]}} {
				// The rate moves as the speed to the fifth power, times a
				// little noise of its own.
				noise := 1 + 0.002*float64(i%3-1)
				r := ok(c.top, 1, i+1, c.rate*math.Pow(c.speed/6, 5)*noise)
				if !(drop && c.top == "nginx-http" && i == 2) {
					r.Noise = &results.Noise{Speed: &results.Speed{Servers: c.speed, Load: 7, Samples: 200}}
				}
				runs = append(runs, r)
			}
		}
		return env, runs
	}
	for _, tt := range []struct {
		name        string
		drop        bool
		runs, cells int
	}{
		{"every run has a speed", false, 12, 2},
		{"a cell with a run without", true, 6, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, runs := sweep(tt.drop)
			s := Summarize(env, runs)
			require.NotNil(t, s.Speed)
			assert.InDelta(t, 5, s.Speed.Slope, 0.05, "the slope the runs give")
			assert.Less(t, s.Speed.SE, 0.05)
			assert.Greater(t, s.Speed.R2, 0.99)
			assert.True(t, s.Speed.Follows())
			assert.Equal(t, tt.runs, s.Speed.Runs)
			assert.Equal(t, tt.cells, s.Speed.Cells)
			w := warnings(s, "speed")
			require.Len(t, w, 1)
			assert.Contains(t, w[0], "the servers' CPUs ran at 5.00 to 8.00 turns a µs from one run to another (the speed probes), and the rates followed (slope 5.00")
			plain := Summarize(env, withoutSpeed(runs))
			for i, c := range s.Cells {
				assert.Equal(t, plain.Cells[i].RatioToStandalone, c.RatioToStandalone, "%s: no ratio moves", c.Name())
			}
		})
	}
	t.Run("a speed that does not move the rates", func(t *testing.T) {
		env, runs := sweep(false)
		for i := range runs {
			runs[i].Figures.ReqPerSec = 40000 * (1 + 0.01*float64(i%5-2))
		}
		s := Summarize(env, runs)
		require.NotNil(t, s.Speed)
		assert.False(t, s.Speed.Follows(), "slope %s", s.Speed)
		assert.Empty(t, warnings(s, "speed"))
	})
	t.Run("paired", func(t *testing.T) {
		env, runs := analysistest.PairedSweep()
		for i := range runs {
			runs[i].Noise = &results.Noise{Speed: &results.Speed{Servers: float64(5 + i%4), Load: 7, Samples: 20}}
		}
		assert.Nil(t, Summarize(env, runs).Speed)
	})
}

func withoutSpeed(runs []results.Run) []results.Run {
	out := make([]results.Run, len(runs))
	for i, r := range runs {
		r.Noise = nil
		out[i] = r
	}
	return out
}

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

// TestSpeedRatio: with every run's rate proportional to the speed its
// servers' CPUs ran at, the ratio at equal speed is exact where the
// ratio of the rates is not; it needs every run's speed, and a paired
// sweep has none (its pairs take the speed out).
func TestSpeedRatio(t *testing.T) {
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
				// The rate moves as the speed to the fifth power, as on
				// the VM, times a little noise of its own.
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
	cell := func(s Summary) (Cell, bool) {
		for _, c := range s.Cells {
			if c.Topology == "nginx-http" {
				return c, true
			}
		}
		return Cell{}, false
	}

	t.Run("every run has a speed", func(t *testing.T) {
		env, runs := sweep(false)
		s := Summarize(env, runs)
		c, found := cell(s)
		require.True(t, found)
		require.NotNil(t, c.SpeedRatio)
		require.True(t, c.SpeedRatio.Known())
		require.NotNil(t, s.Speed)
		assert.InDelta(t, 5, s.Speed.Slope, 0.05, "the slope the runs give")
		assert.Less(t, s.Speed.SE, 0.05)
		assert.Greater(t, s.Speed.R2, 0.99)
		assert.Equal(t, 12, s.Speed.Runs)
		assert.Equal(t, 2, s.Speed.Cells)
		assert.InDelta(t, 0.4, c.SpeedRatio.Center, 0.004)
		assert.InDelta(t, 0.4, *c.SpeedRatio.Lo, 0.004, "within the runs' own noise")
		assert.InDelta(t, 0.4, *c.SpeedRatio.Hi, 0.004)
		require.NotNil(t, c.RatioToStandalone)
		assert.Greater(t, *c.RatioToStandalone.Hi-*c.RatioToStandalone.Lo, 0.5, "the rates' ratio carries the speed")
		require.Len(t, warnings(s, "speed"), 1)
		assert.Contains(t, warnings(s, "speed")[0], "the servers' CPUs ran at 5.00 to 8.00 turns a µs from one run to another (the speed probes, 46% apart), and the rates followed (slope 5.00")
	})
	t.Run("a run without", func(t *testing.T) {
		env, runs := sweep(true)
		c, found := cell(Summarize(env, runs))
		require.True(t, found)
		assert.Nil(t, c.SpeedRatio)
		assert.NotNil(t, c.RatioToStandalone)
	})
	t.Run("a speed that does not move the rates", func(t *testing.T) {
		env, runs := sweep(false)
		for i := range runs {
			runs[i].Figures.ReqPerSec = 40000 * (1 + 0.01*float64(i%5-2))
		}
		s := Summarize(env, runs)
		require.NotNil(t, s.Speed)
		assert.False(t, s.Speed.Adjusts(), "slope %s", s.Speed)
		assert.Empty(t, warnings(s, "speed"))
		c, found := cell(s)
		require.True(t, found)
		assert.Nil(t, c.SpeedRatio)
	})
	t.Run("paired", func(t *testing.T) {
		env, runs := analysistest.PairedSweep()
		for i := range runs {
			runs[i].Noise = &results.Noise{Speed: &results.Speed{Servers: float64(5 + i%4), Load: 7, Samples: 20}}
		}
		s := Summarize(env, runs)
		for _, c := range s.Cells {
			assert.Nil(t, c.SpeedRatio, c.Name())
		}
		assert.Nil(t, s.Speed)
	})
}

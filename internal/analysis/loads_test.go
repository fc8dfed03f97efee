package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestLoadRatios: each cell under the second load over the same cell
// under the first, round by round: the host's speed, which moves both
// runs of a round alike, drops out of the ratio; a round with a failed
// run gives none; a rate that differs is warned of; a single load and a
// paired sweep give none.
func TestLoadRatios(t *testing.T) {
	speed := []float64{1, 0.8, 1.1, 0.9, 1.2, 0.85, 1.05, 0.95}
	sweep := func(engine map[string]float64) (results.Env, []results.Run) {
		env := results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000},
			Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: len(speed), Duration: 10 * time.Second}}
		var runs []results.Run
		for i, sp := range speed {
			for _, top := range []string{"standalone", "nginx-http"} {
				base := map[string]float64{"standalone": 40000, "nginx-http": 16000}[top] * sp
				// The engine's own noise, a fraction of a percent.
				noise := 1 + 0.003*float64(i%3-1)
				for _, load := range []results.Generator{results.LoadWrk, results.LoadBuiltin} {
					rate, user := base, 3.0
					if load == results.LoadBuiltin {
						rate, user = base*engine[top]*noise, 3.6
					}
					r := ok(top, 1, i+1, rate)
					r.Load = load
					n := float64(r.Figures.Requests)
					r.CPU = &results.CPU{Load: results.Usage{User: user * n / 1e6, System: 20 * n / 1e6}, Server: &results.Usage{User: 20 * n / 1e6 / sp}}
					if load == results.LoadBuiltin && top == "nginx-http" && i == 3 {
						r.Figures, r.Error = nil, "boom"
					}
					runs = append(runs, r)
				}
			}
		}
		return env, runs
	}

	t.Run("paired by round", func(t *testing.T) {
		env, runs := sweep(map[string]float64{"standalone": 1.10, "nginx-http": 1.0})
		s := Summarize(env, runs)
		require.Len(t, s.Loads, 2)
		st, http := s.Loads[0], s.Loads[1]
		assert.Equal(t, "standalone", st.Key.Topology)
		assert.Equal(t, results.LoadBuiltin, st.Key.Load)
		assert.Equal(t, results.LoadWrk, st.Base)
		// The speed moved the rates by ±20%; the ratio keeps 1.10 within
		// the engine's own 0.3%.
		assert.InDelta(t, 1.10, st.Rate.Center, 0.002)
		require.True(t, st.Rate.Known())
		assert.Less(t, st.Rate.HalfWidth(), 0.01)
		assert.True(t, st.Rate.Differs)
		assert.InDelta(t, 1.0, http.Rate.Center, 0.002)
		assert.False(t, http.Rate.Differs)
		assert.Equal(t, len(speed), st.Rate.N)
		assert.Equal(t, len(speed)-1, http.Rate.N, "the round with a failed run gives no ratio")
		// CPU per request, the engine's user time 1.2 times wrk's.
		require.NotNil(t, st.LoadUser)
		assert.InDelta(t, 1.2, st.LoadUser.Center, 1e-9)
		assert.InDelta(t, 23.6/23, st.Load.Center, 1e-9)
		require.NotNil(t, st.Servers)
		assert.InDelta(t, 1, st.Servers.Center, 1e-9)

		w := warnings(s, "loads differ")
		require.Len(t, w, 1)
		assert.Contains(t, w[0], "builtin served 1.100 [")
		assert.Contains(t, w[0], "of wrk's rate, round by round over 8 rounds")
	})

	t.Run("one load", func(t *testing.T) {
		env, runs := sweep(map[string]float64{"standalone": 1, "nginx-http": 1})
		env.Plan.Loads = []results.Generator{results.LoadWrk}
		var wrk []results.Run
		for _, r := range runs {
			if r.Load == results.LoadWrk {
				wrk = append(wrk, r)
			}
		}
		assert.Nil(t, Summarize(env, wrk).Loads)
	})

	t.Run("paired sweep", func(t *testing.T) {
		env, runs := sweep(map[string]float64{"standalone": 1, "nginx-http": 1})
		assert.NotNil(t, Summarize(env, runs).Loads)
		env.Plan.Paired = &results.Paired{Pairs: 3}
		assert.Nil(t, loadRatios(env.Plan, nil, nil, 0.95), "a paired sweep's other loads are its cross-check")
	})
}

package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// sweepOf makes the records of a sweep: one successful run per value of
// each cell ("topology/gomaxprocs" → req/s by round), each with the load
// generator's CPU at loadUS µs per request.
func sweepOf(t *testing.T, name string, loadUS map[int]float64, cells map[string][]float64) *Samples {
	t.Helper()
	env := results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Reps: 6, Duration: 10 * time.Second}}
	var runs []results.Run
	keys := slices.Collect(maps.Keys(cells))
	// As results.Load orders them: GOMAXPROCS, then the plan's order.
	slices.SortFunc(keys, func(a, b string) int {
		return cmp.Or(cmp.Compare(a[len(a)-1], b[len(b)-1]), cmp.Compare(b[0], a[0]))
	})
	for _, key := range keys {
		rates := cells[key]
		var top string
		var g int
		for i := range key {
			if key[i] == '/' {
				top = key[:i]
				for _, c := range key[i+1:] {
					g = g*10 + int(c-'0')
				}
			}
		}
		for i, v := range rates {
			n := int64(v * 10)
			r := results.Run{Cell: results.Cell{Topology: top, GOMAXPROCS: g, Rep: i + 1}, Figures: &results.Figures{ReqPerSec: v, Requests: n}}
			if us, ok := loadUS[g]; ok {
				r.CPU = &results.CPU{Load: results.Usage{User: us * float64(n) / 1e6}}
			}
			runs = append(runs, r)
		}
	}
	runs = append(runs, results.Run{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 8, Rep: 9}, Error: "boom"})
	s, err := NewSamples(name, env, runs)
	require.NoError(t, err)
	return s
}

func TestCompare(t *testing.T) {
	oldSt := []float64{100, 102, 98, 101, 99, 100}
	oldHTTP := []float64{40, 41, 39, 40, 40.5, 39.5}
	newSt := []float64{110, 112, 108, 111, 109, 110}
	newHTTP := []float64{40, 41, 39, 40, 40.5, 39.5}
	old := sweepOf(t, "OLD", map[int]float64{1: 20, 8: 20}, map[string][]float64{"standalone/1": oldSt, "nginx-http/1": oldHTTP, "standalone/8": oldSt})
	new := sweepOf(t, "NEW", map[int]float64{1: 20, 8: 23}, map[string][]float64{"standalone/1": newSt, "nginx-http/1": newHTTP, "standalone/8": newSt, "nginx-http/8": newHTTP})
	assert.Equal(t, 1, old.Failed)
	c := Compare(old, new)

	var paths []string
	for _, r := range c.ReqPerSec.Rows {
		paths = append(paths, r.Key.Path())
	}
	assert.Equal(t, []string{"standalone/gomaxprocs=1", "nginx-http/gomaxprocs=1", "standalone/gomaxprocs=8", "nginx-http/gomaxprocs=8"}, paths,
		"old's cells first, then new's, grouped by GOMAXPROCS")

	st := c.ReqPerSec.Rows[0]
	require.NotNil(t, st.Change)
	assert.Equal(t, stats.Compare(oldSt, newSt), *st.Change, "benchstat's test on the runs")
	assert.True(t, st.Change.Significant())
	assert.Nil(t, c.ReqPerSec.Rows[3].Old, "only in NEW")
	assert.InDelta(t, math.Cbrt(100*40*100), c.ReqPerSec.GeomeanOld, 1e-9, "geomean over the cells both have")

	require.Len(t, c.Ratios.Rows, 2)
	assert.Nil(t, c.Ratios.Rows[1].Old, "no nginx-http at GOMAXPROCS=8 in OLD")
	ratio := c.Ratios.Rows[0]
	var wantOld, wantNew []float64
	for i := range oldSt {
		wantOld, wantNew = append(wantOld, oldHTTP[i]/oldSt[i]), append(wantNew, newHTTP[i]/newSt[i])
	}
	assert.Equal(t, stats.Compare(wantOld, wantNew), *ratio.Change, "ratios are taken round by round")

	require.Len(t, c.Shifts, 1, "the load generator's CPU moved in the GOMAXPROCS=8 group only")
	require.NotNil(t, c.Shifts[0].Group)
	assert.Equal(t, 8, c.Shifts[0].Group.GOMAXPROCS)
	assert.InDelta(t, 0.15, c.Shifts[0].Change, 1e-9)
}

func TestCompareWholeMachineShift(t *testing.T) {
	rates := []float64{100, 101, 99, 100, 102, 98}
	old := sweepOf(t, "OLD", map[int]float64{1: 20}, map[string][]float64{"standalone/1": rates})
	new := sweepOf(t, "NEW", map[int]float64{1: 18}, map[string][]float64{"standalone/1": rates})
	c := Compare(old, new)
	require.Len(t, c.Shifts, 1)
	assert.Nil(t, c.Shifts[0].Group, "the whole sweep")
	assert.InDelta(t, -0.10, c.Shifts[0].Change, 1e-9)

	same := Compare(old, old)
	assert.Empty(t, same.Shifts)
}

func TestNewSamplesNothing(t *testing.T) {
	_, err := NewSamples("DIR", results.Env{}, []results.Run{{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}, Error: "x"}})
	assert.EqualError(t, err, "DIR holds no successful runs")
}

func TestKeyPath(t *testing.T) {
	k := Key{Group: Group{Target: "erlang", GOMAXPROCS: 2, Connections: 1000, Load: results.LoadBuiltin,
		Schedule: results.Schedule{Rate: 500}}, Topology: "nginx-http"}
	assert.Equal(t, "nginx-http/gomaxprocs=2/target=erlang/connections=1000/load=builtin/rate=500", k.Path())
	assert.Equal(t, "standalone/gomaxprocs=1", Key{Group: Group{Target: "go", GOMAXPROCS: 1, Connections: 5000, Load: "wrk"}, Topology: "standalone"}.Path())
}

// TestCompareEdges: rows only one sweep has, a cell that served nothing,
// ratios paired by round, and failed runs counted.
func TestCompareEdges(t *testing.T) {
	st := []float64{100, 101, 99, 100, 102, 98}
	t.Run("ratios pair the rounds both cells have", func(t *testing.T) {
		old := sweepOf(t, "OLD", nil, map[string][]float64{"standalone/1": st, "nginx-http/1": {50, 50, 50}})
		assert.Equal(t, []float64{50 / 100.0, 50 / 101.0, 50 / 99.0}, old.ratios(Key{wrkGroup1(), "nginx-http"}))
		assert.Equal(t, []float64{1, 1, 1, 1, 1, 1}, old.ratios(Key{wrkGroup1(), "standalone"}))
	})
	t.Run("ratio rows only one side has", func(t *testing.T) {
		old := sweepOf(t, "OLD", nil, map[string][]float64{"standalone/1": st, "nginx-http/1": st})
		new := sweepOf(t, "NEW", nil, map[string][]float64{"nginx-http/1": st, "standalone/8": st, "nginx-http/8": st})
		c := Compare(old, new)
		require.Len(t, c.Ratios.Rows, 2, "NEW has no standalone at 1, OLD nothing at 8")
		assert.NotNil(t, c.Ratios.Rows[0].Old)
		assert.Nil(t, c.Ratios.Rows[0].New)
		assert.Nil(t, c.Ratios.Rows[0].Change)
		assert.Nil(t, c.Ratios.Rows[1].Old)
		assert.NotNil(t, c.Ratios.Rows[1].New)
		assert.Zero(t, c.Ratios.GeomeanOld, "ratios are not averaged")
		assert.Empty(t, c.LoadCPU.Rows, "no CPU measured")
		assert.Empty(t, c.Shifts)
	})
	t.Run("a cell that served nothing is left out of the geomean", func(t *testing.T) {
		zero := []float64{0, 0, 0, 0, 0, 0}
		old := sweepOf(t, "OLD", nil, map[string][]float64{"standalone/1": st, "nginx-http/1": zero})
		new := sweepOf(t, "NEW", nil, map[string][]float64{"standalone/1": st, "nginx-http/1": st})
		c := Compare(old, new)
		require.Len(t, c.ReqPerSec.Rows, 2)
		assert.NotNil(t, c.ReqPerSec.Rows[1].Change, "still compared")
		assert.InDelta(t, 100, c.ReqPerSec.GeomeanOld, 1e-9)
		assert.InDelta(t, 100, c.ReqPerSec.GeomeanNew, 1e-9)
		assert.False(t, math.IsNaN(c.ReqPerSec.GeomeanOld))
	})
	t.Run("no cell in common: no geomean", func(t *testing.T) {
		old := sweepOf(t, "OLD", nil, map[string][]float64{"standalone/1": st})
		new := sweepOf(t, "NEW", nil, map[string][]float64{"standalone/8": st})
		c := Compare(old, new)
		assert.Len(t, c.ReqPerSec.Rows, 2)
		assert.Zero(t, c.ReqPerSec.GeomeanOld)
		assert.Zero(t, c.ReqPerSec.GeomeanNew)
	})
	t.Run("a small shift is no shift", func(t *testing.T) {
		old := sweepOf(t, "OLD", map[int]float64{1: 20, 8: 20}, map[string][]float64{"standalone/1": st, "standalone/8": st})
		new := sweepOf(t, "NEW", map[int]float64{1: 20.5, 8: 19.5}, map[string][]float64{"standalone/1": st, "standalone/8": st})
		assert.Empty(t, Compare(old, new).Shifts, "±2.5% in each group, under 5%")
	})
	t.Run("runs of several groups shift together", func(t *testing.T) {
		old := sweepOf(t, "OLD", map[int]float64{1: 20, 8: 20}, map[string][]float64{"standalone/1": st, "standalone/8": st})
		new := sweepOf(t, "NEW", map[int]float64{1: 22, 8: 22}, map[string][]float64{"standalone/1": st, "standalone/8": st})
		c := Compare(old, new)
		require.Len(t, c.Shifts, 1, "the whole sweep, not each group")
		assert.Nil(t, c.Shifts[0].Group)
		assert.InDelta(t, 0.10, c.Shifts[0].Change, 1e-9)
	})
}

func wrkGroup1() Group { return Group{Target: "go", GOMAXPROCS: 1, Load: "wrk"} }

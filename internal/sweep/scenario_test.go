package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

func TestScenarios(t *testing.T) {
	for _, name := range Scenarios() {
		t.Run(name, func(t *testing.T) {
			p, err := Scenario(name, 1, 2)
			require.NoError(t, err)
			assert.Equal(t, name, p.Scenario)
			assert.NoError(t, p.Validate(), "every preset is a valid plan")
			assert.Contains(t, p.Topologies, topology.Standalone, "every preset has the baseline")
		})
	}
	p, err := Scenario("2013", 1, 2)
	require.NoError(t, err)
	def := DefaultPlan()
	def.Scenario = "2013"
	assert.Equal(t, def, p, "2013 is the default plan")

	p, err = Scenario("2009", 1, 4)
	require.NoError(t, err)
	assert.Equal(t, []int{30, 100, 1000, 5000}, p.Connections)
	assert.Equal(t, []int{1, 4}, p.GOMAXPROCS, "one core and all of them")
	p, err = Scenario("2009", 1, 1)
	require.NoError(t, err)
	assert.Equal(t, []int{1}, p.GOMAXPROCS)
}

func TestScenario2016Scale(t *testing.T) {
	p, err := Scenario("2016", 0.05, 2)
	require.NoError(t, err)
	assert.Equal(t, []results.Generator{results.LoadBuiltin}, p.Loads, "no wrk: the built-in engine, open loop")
	assert.Equal(t, []int{2}, p.GOMAXPROCS, "every CPU")
	require.Len(t, p.Schedules, 4)
	assert.True(t, p.Schedules[0].Probe)
	assert.Equal(t, 400, p.Schedules[0].Requests, "8000 x 0.05")
	assert.Equal(t, 5000, p.Schedules[1].Requests, "100k x 0.05")
	assert.Equal(t, time.Second, p.Schedules[1].Wait, "the waits stay")
	assert.Equal(t, 1000.0, p.Schedules[1].Rate, "and the rates")

	tiny, err := Scenario("2016", 1e-9, 2)
	require.NoError(t, err)
	for _, sc := range tiny.Schedules {
		assert.Equal(t, 1, sc.Requests, "at least one request")
	}
	for _, bad := range []float64{0, -0.1, 1.5} {
		_, err := Scenario("2016", bad, 2)
		assert.ErrorContains(t, err, "-scale")
	}
	_, err = Scenario("1999", 1, 2)
	assert.ErrorContains(t, err, `-scenario: unknown scenario "1999"`)
}

func TestProduct(t *testing.T) {
	assert.Equal(t, []results.Schedule{{}}, Product(nil, nil), "closed loop, no wait")
	assert.Equal(t, []results.Schedule{{Rate: 100}, {Rate: 200}}, Product([]float64{100, 200}, nil))
	assert.Equal(t, []results.Schedule{
		{Rate: 100, Wait: time.Millisecond}, {Rate: 100, Wait: time.Second},
		{Rate: 200, Wait: time.Millisecond}, {Rate: 200, Wait: time.Second},
	}, Product([]float64{100, 200}, []time.Duration{time.Millisecond, time.Second}))
	assert.Equal(t, []results.Schedule{{Wait: time.Second}}, Product(nil, []time.Duration{time.Second}))
}

func TestMeasured(t *testing.T) {
	p := DefaultPlan()
	assert.Equal(t, 15*time.Second, p.Measured(Cell{}))
	assert.Equal(t, 18*time.Second, p.CellTime(Cell{}))
	assert.Equal(t, 5*time.Second, p.Measured(Cell{Schedule: results.Schedule{Rate: 1000, Requests: 5000}}))
	assert.Equal(t, 25*time.Second, p.Measured(Cell{Schedule: results.Schedule{Probe: true, Wait: 10 * time.Second}}))
}

func TestParseList(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, ParseList(" a, ,b ,"))
	assert.Nil(t, ParseList(" , "))
}

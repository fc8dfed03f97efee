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
	assert.Equal(t, []results.Schedule{{}}, Product(nil, nil, nil), "closed loop, no wait")
	assert.Equal(t, []results.Schedule{{Rate: 100}, {Rate: 200}}, Product([]float64{100, 200}, nil, nil))
	assert.Equal(t, []results.Schedule{
		{Rate: 100, Wait: time.Millisecond}, {Rate: 100, Wait: time.Second},
		{Rate: 200, Wait: time.Millisecond}, {Rate: 200, Wait: time.Second},
	}, Product([]float64{100, 200}, []time.Duration{time.Millisecond, time.Second}, nil))
	assert.Equal(t, []results.Schedule{{Wait: time.Second}}, Product(nil, []time.Duration{time.Second}, nil))
	assert.Equal(t, []results.Schedule{{Work: 0}, {Work: 50 * time.Microsecond}, {Rate: 100}, {Rate: 100, Work: 50 * time.Microsecond}},
		Product([]float64{0, 100}, nil, []time.Duration{0, 50 * time.Microsecond}), "every rate with every work")
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

// TestFractionRate: open loop at a fraction of the capacity sends that
// fraction of the least median closed-loop rate of the block's paths at
// the same work, ceilings and other blocks left out.
func TestFractionRate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}}}))
	work := 200 * time.Microsecond
	s := &sweep{Options: Options{Dir: dir}}
	write := func(top string, g int, w time.Duration, rates ...float64) {
		for i, r := range rates {
			run := results.Run{Cell: results.Cell{Topology: top, GOMAXPROCS: g, Connections: 100, Load: results.LoadBuiltin,
				Schedule: results.Schedule{Work: w}, Rep: i + 1}, Figures: &results.Figures{ReqPerSec: r, Requests: int64(r)}}
			require.NoError(t, s.record(run, nil))
		}
	}
	write("standalone", 1, work, 1000, 1100, 900)
	write("nginx-http", 1, work, 400, 420, 380)
	write("nginx-return", 1, work, 50) // a ceiling: not a path to the server
	write("nginx-http", 1, 0, 10)      // other work
	write("nginx-http", 2, work, 5)    // other block
	c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin,
		Schedule: results.Schedule{Work: work, Fraction: 0.5}, Rep: 1}
	rate, err := s.fractionRate(c)
	require.NoError(t, err)
	assert.InDelta(t, 200, rate, 0, "half of nginx-http's median 400")

	c.Work = time.Millisecond
	_, err = s.fractionRate(c)
	assert.ErrorContains(t, err, "no closed-loop run at GOMAXPROCS=1, work 1ms measured the capacity")
}

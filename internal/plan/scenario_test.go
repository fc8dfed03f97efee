package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
)

func TestScenarios(t *testing.T) {
	for _, name := range Scenarios() {
		t.Run(name, func(t *testing.T) {
			p, err := Scenario(name, 1, 2)
			require.NoError(t, err)
			assert.Equal(t, name, p.Scenario)
			assert.NoError(t, p.Validate(Where{}), "every preset is a valid plan")
			assert.Contains(t, p.Topologies, p.Baseline(), "every preset has its baseline")
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
	assert.ErrorContains(t, err, `-preset: unknown preset "1999"`)
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
	assert.Equal(t, 15*time.Second, p.Measured(results.Cell{}))
	assert.Equal(t, 18*time.Second, p.CellTime(results.Cell{}))
	assert.Equal(t, 5*time.Second, p.Measured(results.Cell{Schedule: results.Schedule{Rate: 1000, Requests: 5000}}))
	assert.Equal(t, 25*time.Second, p.Measured(results.Cell{Schedule: results.Schedule{Probe: true, Wait: 10 * time.Second}}))
}

func TestScenarioTargets(t *testing.T) {
	p, err := Scenario("2007", 1, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "java-threads", "java-pool", "erlang"}, p.Targets)
	assert.Equal(t, []string{"standalone"}, p.Topologies)
	assert.Equal(t, []int{1000}, p.Connections)
	assert.Equal(t, []int{1}, p.GOMAXPROCS)
	assert.True(t, p.Close, "2007's ab used a connection per request")
	assert.Len(t, p.Cells(), 4*p.Reps)

	// 2009 with every target: the others than Go get standalone and
	// nginx-http, the nginx ceilings are measured once, with Go.
	p, err = Scenario("2009", 1, 2)
	require.NoError(t, err)
	p.Targets = KnownTargets()
	p.Reps = 1
	perTarget := map[string]int{}
	for _, c := range p.Cells() {
		perTarget[c.Target]++
		if c.Target != results.TargetGo {
			assert.Contains(t, []string{"standalone", "nginx-http"}, c.Topology)
		}
	}
	assert.Equal(t, 4*2*4, perTarget["go"])
	for _, n := range target.Names() {
		assert.Equal(t, 2*2*4, perTarget[n], n)
	}
	blocks := p.Blocks()
	require.Len(t, blocks, 2*len(KnownTargets()), "a start per target and processor value")
	assert.Equal(t, "erlang", blocks[2].Target)
}

package results

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/topology"
)

// keys lists the cells' keys, the form a sweep's order is easiest to read
// in.
func keys(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Key())
	}
	return out
}

// TestPlanCellsOrder checks the order a sweep runs its cells in: target
// and GOMAXPROCS outermost (the servers restart for each), then rounds,
// each round starting one topology later than the one before.
func TestPlanCellsOrder(t *testing.T) {
	p := Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}, GOMAXPROCS: []int{1, 8}, Connections: []int{5000}, Reps: 3}
	assert.Equal(t, []string{
		"g1-standalone-c5000-r1", "g1-nginx-http-c5000-r1", "g1-nginx-return-c5000-r1",
		"g1-nginx-http-c5000-r2", "g1-nginx-return-c5000-r2", "g1-standalone-c5000-r2",
		"g1-nginx-return-c5000-r3", "g1-standalone-c5000-r3", "g1-nginx-http-c5000-r3",
		"g8-standalone-c5000-r1", "g8-nginx-http-c5000-r1", "g8-nginx-return-c5000-r1",
		"g8-nginx-http-c5000-r2", "g8-nginx-return-c5000-r2", "g8-standalone-c5000-r2",
		"g8-nginx-return-c5000-r3", "g8-standalone-c5000-r3", "g8-nginx-http-c5000-r3",
	}, keys(p.Cells()))
}

func TestPlanCells(t *testing.T) {
	closed := Schedule{}
	rate := Schedule{Rate: 1000, Wait: 100 * time.Millisecond}
	probe := Schedule{Name: "concurrency-level", Probe: true, Requests: 800, Wait: 10 * time.Second}
	tests := []struct {
		name string
		plan Plan
		want []string
	}{
		{
			name: "connections and loads inside a topology's slot",
			plan: Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{2}, Connections: []int{30, 100},
				Loads: []Generator{LoadWrk, LoadBuiltin}, Reps: 1},
			want: []string{"g2-standalone-c30-r1", "g2-standalone-c30-builtin-r1", "g2-standalone-c100-r1", "g2-standalone-c100-builtin-r1"},
		},
		{
			name: "wrk runs only the closed-loop schedules",
			plan: Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{100},
				Loads: []Generator{LoadWrk, LoadBuiltin}, Schedules: []Schedule{closed, rate, probe}, Reps: 1},
			want: []string{"g1-standalone-c100-r1", "g1-standalone-c100-builtin-r1",
				"g1-standalone-c100-builtin-rate1000-wait100ms-r1", "g1-standalone-c100-builtin-concurrency-level-r1"},
		},
		{
			name: "other targets measure the HTTP-over-TCP paths only, after Go",
			plan: Plan{Targets: []string{"go", "erlang"}, Topologies: []string{"standalone", "nginx-fcgi-unix", "nginx-http", "nginx-return"},
				GOMAXPROCS: []int{1}, Connections: []int{1000}, Reps: 1},
			want: []string{"g1-standalone-c1000-r1", "g1-nginx-fcgi-unix-c1000-r1", "g1-nginx-http-c1000-r1", "g1-nginx-return-c1000-r1",
				"erlang-g1-standalone-c1000-r1", "erlang-g1-nginx-http-c1000-r1"},
		},
		{
			name: "no reps, no cells",
			plan: Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{1}, Reps: 0},
			want: nil,
		},
		{
			name: "no connections, no cells",
			plan: Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Reps: 1},
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keys(tt.plan.Cells()))
		})
	}
}

// TestPlanCellsUnknownTopology: a plan read from an env.json that names a
// topology this build does not know (removed or renamed since) still
// lists the cells of the ones it knows, as Cells promises.
func TestPlanCellsUnknownTopology(t *testing.T) {
	p := Plan{Topologies: []string{"standalone", "nginx-gone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 2}
	assert.Equal(t, []string{
		"g1-standalone-c5000-r1", "g1-nginx-http-c5000-r1",
		"g1-nginx-http-c5000-r2", "g1-standalone-c5000-r2",
	}, keys(p.Cells()))
}

// TestPlanCellsRoundsBalanced: over as many rounds as there are
// topologies, every topology takes every position in a round once, so a
// drift within a round favours none.
func TestPlanCellsRoundsBalanced(t *testing.T) {
	tops := []string{"standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return"}
	p := Plan{Topologies: tops, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: len(tops)}
	cells := p.Cells()
	require.Len(t, cells, len(tops)*len(tops))
	positions := map[string]map[int]bool{}
	for i, c := range cells {
		assert.Equal(t, i/len(tops)+1, c.Rep, "rounds run one after the other")
		if positions[c.Topology] == nil {
			positions[c.Topology] = map[int]bool{}
		}
		positions[c.Topology][i%len(tops)] = true
	}
	for _, top := range tops {
		assert.Len(t, positions[top], len(tops), "%s takes every position once", top)
	}
}

func TestRoundOrder(t *testing.T) {
	list := []string{"a", "b", "c"}
	for _, tt := range []struct {
		rep  int
		want []string
	}{
		{1, []string{"a", "b", "c"}},
		{2, []string{"b", "c", "a"}},
		{3, []string{"c", "a", "b"}},
		{4, []string{"a", "b", "c"}},
		{8, []string{"b", "c", "a"}},
	} {
		t.Run(strings.Join(tt.want, ""), func(t *testing.T) {
			assert.Equal(t, tt.want, RoundOrder(list, tt.rep))
		})
	}
	assert.Equal(t, []string{"a", "b", "c"}, list, "the list itself is left alone")
	assert.Nil(t, RoundOrder([]int(nil), 3))
}

func TestSchedulesFor(t *testing.T) {
	closedWait := Schedule{Wait: time.Second}
	rate := Schedule{Rate: 100}
	probe := Schedule{Probe: true, Requests: 10}
	p := Plan{Schedules: []Schedule{closedWait, rate, probe}}
	assert.Equal(t, []Schedule{closedWait}, p.SchedulesFor(LoadWrk), "closed loop, wait kept")
	assert.Equal(t, []Schedule{closedWait, rate, probe}, p.SchedulesFor(LoadBuiltin))
	assert.Equal(t, []Schedule{closedWait, rate, probe}, p.Schedules, "the plan's list is not filtered in place")
	assert.Equal(t, []Schedule{{}}, Plan{}.SchedulesFor(LoadWrk), "no schedules: the closed-loop one")
	assert.Equal(t, []Schedule{{}}, Plan{}.SchedulesFor(LoadBuiltin))
	assert.Empty(t, Plan{Schedules: []Schedule{rate}}.SchedulesFor(LoadWrk), "wrk has nothing to run")
}

func TestGenerators(t *testing.T) {
	assert.Equal(t, []Generator{LoadWrk, LoadBuiltin, LoadH2load, LoadStime}, Generators())
	assert.False(t, LoadH2load.OpenLoop())
	assert.False(t, LoadH2load.Histogram())
	assert.False(t, LoadWrk.OpenLoop())
	assert.False(t, LoadWrk.Histogram())
	assert.True(t, LoadBuiltin.OpenLoop())
	assert.True(t, LoadBuiltin.Histogram())
}

func TestApplies(t *testing.T) {
	for _, top := range topology.All() {
		t.Run(top.Name, func(t *testing.T) {
			assert.True(t, Applies(TargetGo, top), "Go has every path")
			assert.True(t, Applies("", top), "no target is Go")
			assert.Equal(t, top.Backend == topology.HTTPTCP, Applies("erlang", top))
			assert.Equal(t, top.Backend == topology.HTTPTCP, Applies("java-netty", top))
		})
	}
	st, err := topology.Lookup("standalone")
	require.NoError(t, err)
	assert.True(t, Applies("erlang", st))
	ret, err := topology.Lookup("nginx-return")
	require.NoError(t, err)
	assert.False(t, Applies("erlang", ret), "the nginx-only ceilings are measured once, with Go")
}

func TestPlanLists(t *testing.T) {
	assert.Equal(t, []string{TargetGo}, Plan{}.TargetList())
	assert.Equal(t, []string{"erlang"}, Plan{Targets: []string{"erlang"}}.TargetList())
	assert.Equal(t, []Generator{LoadWrk}, Plan{}.LoadList())
	assert.Equal(t, []Generator{LoadBuiltin}, Plan{Loads: []Generator{LoadBuiltin}}.LoadList())
	assert.Equal(t, "5000", Plan{Connections: []int{5000}}.ConnectionsList())
	assert.Equal(t, "30,100,1000", Plan{Connections: []int{30, 100, 1000}}.ConnectionsList())
	assert.Equal(t, "", Plan{}.ConnectionsList())
}

func TestPlanUnmarshal(t *testing.T) {
	const rest = `"topologies":["standalone"],"gomaxprocs":[1],"reps":1,"duration_ns":1,"warmup_ns":0,"threads":1,"timeout_ns":1`
	tests := []struct {
		name string
		json string
		want []int
		err  string
	}{
		{"a number (before connections was a list)", `{` + rest + `,"connections":5000}`, []int{5000}, ""},
		{"a list", `{` + rest + `,"connections":[30,100]}`, []int{30, 100}, ""},
		{"null", `{` + rest + `,"connections":null}`, nil, ""},
		{"absent", `{` + rest + `}`, nil, ""},
		{"a string", `{` + rest + `,"connections":"5000"}`, nil, "cannot unmarshal string"},
		{"unknown field", `{` + rest + `,"connections":1,"bogus":1}`, nil, `unknown field "bogus"`},
		{"trailing data", `{` + rest + `} {}`, nil, "after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Plan
			err := json.Unmarshal([]byte(tt.json), &p)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, p.Connections)
			assert.Equal(t, []string{"standalone"}, p.Topologies, "the other fields are read too")
			assert.Equal(t, 1, p.Reps)
		})
	}
}

// TestPlanRoundTrip writes every field of a plan and reads it back.
func TestPlanRoundTrip(t *testing.T) {
	p := Plan{
		Targets: []string{"go", "erlang"}, Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8},
		Connections: []int{30, 5000}, Loads: []Generator{LoadWrk, LoadBuiltin},
		Schedules: []Schedule{{}, {Name: "slow-requests", Rate: 1000, Wait: time.Second, Requests: 100000}, {Probe: true, Requests: 9}},
		Scenario:  "2016", MaxConnections: 20000, Reps: 6, RepsAuto: &RepsAuto{Max: 12, Within: 0.05},
		Duration: 15 * time.Second, Warmup: 3 * time.Second, Threads: 100, Timeout: 2 * time.Second, Close: true,
		Isolation: IsolateNetns, LinkDelay: 100 * time.Microsecond, PinLoad: "0", PinServer: "1-3",
	}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	var got Plan
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, p, got)
}

// TestCellNames covers Key and String over each dimension alone and
// together: Key names files, so two cells that differ anywhere must get
// different keys.
func TestCellNames(t *testing.T) {
	base := Cell{Topology: "nginx-http", GOMAXPROCS: 8, Rep: 2}
	with := func(f func(*Cell)) Cell {
		c := base
		f(&c)
		return c
	}
	tests := []struct {
		name      string
		cell      Cell
		key, text string
	}{
		{"defaults", base, "g8-nginx-http-r2", "GOMAXPROCS=8 nginx-http rep 2"},
		{"target go is the default", with(func(c *Cell) { c.Target = TargetGo }), "g8-nginx-http-r2", "GOMAXPROCS=8 nginx-http rep 2"},
		{"target", with(func(c *Cell) { c.Target = "java-netty" }), "java-netty-g8-nginx-http-r2", "target=java-netty GOMAXPROCS=8 nginx-http rep 2"},
		{"connections", with(func(c *Cell) { c.Connections = 30 }), "g8-nginx-http-c30-r2", "GOMAXPROCS=8 connections=30 nginx-http rep 2"},
		{"load wrk is the default", with(func(c *Cell) { c.Load = LoadWrk }), "g8-nginx-http-r2", "GOMAXPROCS=8 nginx-http rep 2"},
		{"load builtin", with(func(c *Cell) { c.Load = LoadBuiltin }), "g8-nginx-http-builtin-r2", "GOMAXPROCS=8 load=builtin nginx-http rep 2"},
		{"rate", with(func(c *Cell) { c.Rate = 1e5 }), "g8-nginx-http-rate100000-r2", "GOMAXPROCS=8 rate=100000 nginx-http rep 2"},
		{"wait", with(func(c *Cell) { c.Wait = 1500 * time.Millisecond }), "g8-nginx-http-wait1.5s-r2", "GOMAXPROCS=8 wait=1.5s nginx-http rep 2"},
		{"work", with(func(c *Cell) { c.Work = 200 * time.Microsecond }), "g8-nginx-http-work200us-r2", "GOMAXPROCS=8 work=200µs nginx-http rep 2"},
		{"a named schedule hides rate and wait in the key", with(func(c *Cell) {
			c.Schedule = Schedule{Name: "realistic-high-concurrency", Rate: 10000, Wait: 100 * time.Millisecond}
		}), "g8-nginx-http-realistic-high-concurrency-r2", "GOMAXPROCS=8 scenario=realistic-high-concurrency rate=10000 wait=100ms nginx-http rep 2"},
		{"every dimension", Cell{Target: "erlang", Topology: "standalone", GOMAXPROCS: 1, Connections: 1000, Load: LoadBuiltin,
			Schedule: Schedule{Rate: 0.5, Wait: time.Millisecond}, Rep: 12},
			"erlang-g1-standalone-c1000-builtin-rate0.5-wait1ms-r12", "target=erlang GOMAXPROCS=1 connections=1000 load=builtin rate=0.5 wait=1ms standalone rep 12"},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.key, tt.cell.Key())
			assert.Equal(t, tt.text, tt.cell.String())
			assert.NotContains(t, tt.cell.Key(), "/", "a key is a file name")
		})
		if strings.Contains(tt.name, "is the default") {
			continue
		}
		assert.NotContains(t, seen, tt.key, "%s and %s share a key", tt.name, seen[tt.key])
		seen[tt.key] = tt.name
	}
}

func TestCellDefaults(t *testing.T) {
	assert.Equal(t, TargetGo, Cell{}.TargetName())
	assert.Equal(t, "erlang", Cell{Target: "erlang"}.TargetName())
	assert.Equal(t, LoadWrk, Cell{}.LoadName())
	assert.Equal(t, LoadBuiltin, Cell{Load: LoadBuiltin}.LoadName())
}

func TestPerRequest(t *testing.T) {
	u := Usage{User: 1.5, System: 0.5}
	assert.Equal(t, 2.0, u.Total())
	assert.InDelta(t, 20.0, PerRequest(u, 100000), 1e-9, "2 s over 100k requests is 20 µs each")
	assert.Zero(t, PerRequest(u, 0), "nothing answered: no figure, not +Inf")
	assert.Zero(t, PerRequest(u, -1))
}

func TestErrorsString(t *testing.T) {
	for _, tt := range []struct {
		e    Errors
		want string
	}{
		{Errors{}, "none"},
		{Errors{Timeout: 661}, "timeout 661"},
		{Errors{Timeout: 661, Status: 3}, "timeout 661, non-2xx 3"},
		{Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5}, "connect 1, read 2, write 3, timeout 4, non-2xx 5"},
		{Errors{Status: 7}, "non-2xx 7"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.e.String())
		})
	}
}

// TestCellsFractionAfterClosed: cells at a fraction of the capacity run
// after the block's closed-loop cells, which measure it.
func TestCellsFractionAfterClosed(t *testing.T) {
	p := Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 2}, Connections: []int{100}, Reps: 2,
		Loads: []Generator{LoadBuiltin}, Schedules: []Schedule{{Fraction: 0.5}, {}}}
	var got []string
	for _, c := range p.Cells() {
		got = append(got, c.Key())
	}
	assert.Equal(t, []string{
		"g1-standalone-c100-builtin-r1", "g1-nginx-http-c100-builtin-r1", "g1-nginx-http-c100-builtin-r2", "g1-standalone-c100-builtin-r2",
		"g1-standalone-c100-builtin-frac0.5-r1", "g1-nginx-http-c100-builtin-frac0.5-r1", "g1-nginx-http-c100-builtin-frac0.5-r2", "g1-standalone-c100-builtin-frac0.5-r2",
		"g2-standalone-c100-builtin-r1", "g2-nginx-http-c100-builtin-r1", "g2-nginx-http-c100-builtin-r2", "g2-standalone-c100-builtin-r2",
		"g2-standalone-c100-builtin-frac0.5-r1", "g2-nginx-http-c100-builtin-frac0.5-r1", "g2-nginx-http-c100-builtin-frac0.5-r2", "g2-standalone-c100-builtin-frac0.5-r2",
	}, got)
	withRate := Cell{Topology: "nginx-http", GOMAXPROCS: 1, Schedule: Schedule{Fraction: 0.5, Rate: 1234}, Rep: 1}
	assert.Equal(t, "g1-nginx-http-frac0.5-r1", withRate.Key(), "the rate derived from the fraction is not in the key")
	assert.Empty(t, p.SchedulesFor(LoadWrk)[0].Fraction, "wrk runs the closed-loop schedules only")
	assert.Len(t, p.SchedulesFor(LoadWrk), 1)
}

// TestWindowOf: a pair lasts its topology's own window where the plan
// gives one, the plan's Duration otherwise; a run outside pairs lasts
// the Duration.
func TestWindowOf(t *testing.T) {
	p := Plan{Topologies: []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}, Duration: 3 * time.Second,
		Paired: &Paired{Duet: true, Windows: map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second}}}
	tests := []struct {
		name string
		run  Run
		want time.Duration
	}{
		{"nginx-fcgi-tcp's own", Run{Cell: Cell{Topology: "nginx-fcgi-tcp"}, Pair: &Pair{With: "nginx-fcgi-tcp"}}, 6 * time.Second},
		{"standalone's side of its pair", Run{Cell: Cell{Topology: "standalone"}, Pair: &Pair{With: "nginx-fcgi-tcp"}}, 6 * time.Second},
		{"nginx-http, the plan's", Run{Cell: Cell{Topology: "nginx-http"}, Pair: &Pair{With: "nginx-http"}}, 3 * time.Second},
		{"the A/A", Run{Cell: Cell{Topology: "standalone"}, Pair: &Pair{With: "standalone", Twin: true}}, 3 * time.Second},
		{"outside pairs", Run{Cell: Cell{Topology: "nginx-fcgi-tcp"}}, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, p.WindowOfRun(tt.run))
		})
	}
	assert.Equal(t, "3s (nginx-fcgi-tcp 6s)", p.WindowsLabel())
	p.Paired.Windows = nil
	assert.Equal(t, "3s", p.WindowsLabel())
	assert.Equal(t, 3*time.Second, Plan{Duration: 3 * time.Second}.WindowOf("nginx-fcgi-tcp"), "rounds have no pairs")
}

package sweep

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

func keys(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Key())
	}
	return out
}

func TestCellsInterleaveRepetitions(t *testing.T) {
	p := Plan{results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Connections: []int{500}, Reps: 2}}
	assert.Equal(t, []string{
		"g1-standalone-c500-r1", "g1-nginx-http-c500-r1", "g1-nginx-http-c500-r2", "g1-standalone-c500-r2",
		"g8-standalone-c500-r1", "g8-nginx-http-c500-r1", "g8-nginx-http-c500-r2", "g8-standalone-c500-r2",
	}, keys(p.Cells()))
}

func TestCellsRotateRounds(t *testing.T) {
	p := Plan{results.Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}, GOMAXPROCS: []int{1}, Connections: []int{500}, Reps: 4}}
	var order []string
	for _, c := range p.Cells() {
		order = append(order, fmt.Sprintf("%d:%s", c.Rep, c.Topology))
	}
	assert.Equal(t, []string{
		"1:standalone", "1:nginx-http", "1:nginx-return",
		"2:nginx-http", "2:nginx-return", "2:standalone",
		"3:nginx-return", "3:standalone", "3:nginx-http",
		"4:standalone", "4:nginx-http", "4:nginx-return",
	}, order, "each round starts one topology later; the cyclic order, and so each cell's predecessor, stays")
}

func TestCellsAlternateLoads(t *testing.T) {
	p := Plan{results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{500},
		Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 4}}
	assert.Equal(t, []string{
		"g1-standalone-c500-r1", "g1-standalone-c500-builtin-r1",
		"g1-standalone-c500-builtin-r2", "g1-standalone-c500-r2",
		"g1-standalone-c500-r3", "g1-standalone-c500-builtin-r3",
		"g1-standalone-c500-builtin-r4", "g1-standalone-c500-r4",
	}, keys(p.Cells()), "AB BA AB BA: a drift in the machine's speed favours neither load")
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name   string
		plan   results.Plan
		blocks []string // target/GOMAXPROCS of each block
		cells  []string
	}{
		{
			name:   "connections and loads inside a repetition",
			plan:   results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{30, 100}, Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 1},
			blocks: []string{"go/1"},
			cells:  []string{"g1-standalone-c30-r1", "g1-standalone-c30-builtin-r1", "g1-standalone-c100-r1", "g1-standalone-c100-builtin-r1"},
		},
		{
			name: "open-loop schedules and probes go to the built-in engine only; waits to both",
			plan: results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{2}, Connections: []int{10}, Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 1,
				Schedules: []results.Schedule{{Wait: time.Second}, {Rate: 1000}, {Name: "probe", Probe: true, Requests: 100, Wait: time.Second}}},
			blocks: []string{"go/2"},
			cells:  []string{"g2-standalone-c10-wait1s-r1", "g2-standalone-c10-builtin-wait1s-r1", "g2-standalone-c10-builtin-rate1000-r1", "g2-standalone-c10-builtin-probe-r1"},
		},
		{
			name:   "targets are outer blocks; other targets skip Go-only paths",
			plan:   results.Plan{Targets: []string{"go", "erlang"}, Topologies: []string{"standalone", "nginx-fcgi-unix", "nginx-return"}, GOMAXPROCS: []int{1, 2}, Connections: []int{10}, Reps: 1},
			blocks: []string{"go/1", "go/2", "erlang/1", "erlang/2"},
			cells: []string{
				"g1-standalone-c10-r1", "g1-nginx-fcgi-unix-c10-r1", "g1-nginx-return-c10-r1",
				"g2-standalone-c10-r1", "g2-nginx-fcgi-unix-c10-r1", "g2-nginx-return-c10-r1",
				"erlang-g1-standalone-c10-r1", "erlang-g2-standalone-c10-r1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan{tt.plan}
			var blocks []string
			for _, b := range p.Blocks() {
				blocks = append(blocks, b.Target+"/"+itoa(b.GOMAXPROCS))
				for _, c := range b.Cells {
					assert.Equal(t, b.Target, c.Target)
					assert.Equal(t, b.GOMAXPROCS, c.GOMAXPROCS)
				}
			}
			assert.Equal(t, tt.blocks, blocks)
			assert.Equal(t, tt.cells, keys(p.Cells()))
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRemaining(t *testing.T) {
	p := Plan{results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Connections: []int{500}, Reps: 2}}
	// Everything of GOMAXPROCS=1 and one cell of 8 were measured.
	done := map[string]bool{"g8-nginx-http-c500-r1": true}
	for _, c := range p.Blocks()[0].Cells {
		done[c.Key()] = true
	}
	left := Remaining(p.Blocks(), done)
	require.Len(t, left, 1, "the finished block is not restarted")
	assert.Equal(t, 8, left[0].GOMAXPROCS)
	assert.Equal(t, []string{"g8-standalone-c500-r1", "g8-nginx-http-c500-r2", "g8-standalone-c500-r2"}, keys(left[0].Cells))
	assert.Len(t, p.Cells(), 8, "Remaining must not change the plan")

	// A run recorded and loaded again is found under the same key.
	dir := filepath.Join(t.TempDir(), "r")
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: p.Plan}))
	cell := p.Cells()[3]
	require.NoError(t, results.WriteRun(dir, results.Run{Cell: cell, Error: "failed"}, nil))
	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, cell.Key(), runs[0].Key())
}

func TestValidate(t *testing.T) {
	ok := DefaultPlan()
	require.NoError(t, ok.Validate())
	few := DefaultPlan()
	few.Connections = []int{30, 100, 1000, 5000}
	require.NoError(t, few.Validate(), "fewer connections than threads lowers the threads (the 2009 sweep's -c30)")
	assert.Equal(t, 30, few.ThreadsFor(30))

	tests := []struct {
		name   string
		change func(*Plan)
		want   string
	}{
		{"unknown target", func(p *Plan) { p.Targets = []string{"cobol"} }, "-targets"},
		{"unknown topology", func(p *Plan) { p.Topologies = []string{"nginx-php"} }, "-topologies"},
		{"duplicate topology", func(p *Plan) { p.Topologies = []string{"standalone", "standalone"} }, "-topologies"},
		{"no gomaxprocs", func(p *Plan) { p.GOMAXPROCS = nil }, "-gomaxprocs"},
		{"zero gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{0} }, "-gomaxprocs"},
		{"repeated gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{1, 1} }, "-gomaxprocs"},
		{"no connections", func(p *Plan) { p.Connections = nil }, "-connections"},
		{"repeated connections", func(p *Plan) { p.Connections = []int{100, 100} }, "-connections"},
		{"connections not a multiple of threads", func(p *Plan) { p.Connections = []int{5050} }, "-connections"},
		{"unknown load", func(p *Plan) { p.Loads = []results.Generator{"ab"} }, "-load"},
		{"rate with wrk only", func(p *Plan) { p.Schedules = []results.Schedule{{Rate: 1000}} }, "-rate"},
		{"negative wait", func(p *Plan) { p.Schedules = []results.Schedule{{Wait: -time.Second}} }, "-wait"},
		{"wait past the server's bound", func(p *Plan) { p.Schedules = []results.Schedule{{Wait: time.Hour}} }, "-wait"},
		{"no reps", func(p *Plan) { p.Reps = 0 }, "-reps"},
		{"sub-second duration", func(p *Plan) { p.Duration = 500 * time.Millisecond }, "-duration"},
		{"fractional duration", func(p *Plan) { p.Duration = 1500 * time.Millisecond }, "-duration"},
		{"negative warmup", func(p *Plan) { p.Warmup = -time.Second }, "-warmup"},
		{"no threads", func(p *Plan) { p.Threads = 0 }, "-threads"},
		{"no timeout", func(p *Plan) { p.Timeout = 0 }, "-timeout"},
		{"sub-second timeout", func(p *Plan) { p.Timeout = 500 * time.Millisecond }, "-timeout"},
		{"bad load CPU list", func(p *Plan) { p.PinLoad = "abc" }, "-pin-load"},
		{"bad server CPU list", func(p *Plan) { p.PinServer = "1-" }, "-pin-server"},
		{"a duration of years", func(p *Plan) { p.Duration = 999999 * time.Hour }, "-duration: 999999h0m0s, want at most 1h0m0s a cell"},
		{"a warmup past the bound", func(p *Plan) { p.Warmup = 2 * time.Hour }, "-warmup: 2h0m0s, want at most 1h0m0s"},
		{"a hundred thousand processors", func(p *Plan) { p.GOMAXPROCS = []int{1, 100000} }, "-gomaxprocs: 100000, want at most 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			tt.change(&p)
			err := p.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts(" 1, 8 ")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 8}, got)
	_, err = ParseInts("1,x")
	assert.ErrorContains(t, err, `"x"`)
	_, err = ParseInts(",")
	assert.Error(t, err)
}

func TestParseCPUs(t *testing.T) {
	tests := []struct {
		spec, allowed string
		load, server  string
		err           string
	}{
		{"auto", "0", "", "", ""},
		{"auto", "0-1", "0", "1", ""},
		{"auto", "0-7", "0", "1-7", ""},
		{"auto", "2-3", "2", "3", ""}, // a container's cpuset need not start at 0
		{"auto", "1,3,5", "1", "3,5", ""},
		{"first", "0-7", "0", "1-7", ""},
		{"none", "0-7", "", "", ""},
		{"0/1-3", "0-7", "0", "1-3", ""},
		{"0/1,2,3", "0-7", "0", "1-3", ""},
		{"0-1/1", "0-7", "", "", "CPU 1 is in both sets"},
		{"0", "0-7", "", "", "want auto, first, none or LOAD/SERVER"},
		{"x/1", "0-7", "", "", "load generator: CPU list"},
		{"0/1-", "0-7", "", "", "servers: CPU list"},
		{"0/7", "0-1", "", "", `servers: CPU list "7": CPU 7 is not one this process may run on (0-1)`},
		{"99/1", "0-1", "", "", "load generator: CPU list \"99\": CPU 99"},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" on "+tt.allowed, func(t *testing.T) {
			allowed, err := cpuset.Parse(tt.allowed)
			require.NoError(t, err)
			load, server, err := ParseCPUs(tt.spec, allowed)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.load, load)
			assert.Equal(t, tt.server, server)
		})
	}
}

func TestCheckCPUs(t *testing.T) {
	two := cpuset.Of(0, 1)
	for _, tt := range []struct {
		name, load, server, want string
	}{
		{"unpinned", "", "", ""},
		{"within", "0", "1", ""},
		{"-pin-load 99", "99", "", `-pin-load: CPU list "99": CPU 99 is not one this process may run on (0-1)`},
		{"-pin-server 99", "0", "99", `-pin-server: CPU list "99": CPU 99 is not one this process may run on (0-1)`},
		{"-pin-server 1-2", "", "1-2", "-pin-server: CPU list \"1-2\": CPU 2"},
		{"a bad list", "x", "", "-pin-load: CPU list"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			p.PinLoad, p.PinServer = tt.load, tt.server
			r, err := p.Resolve()
			if err == nil {
				err = r.CheckCPUs(two)
			}
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

func TestValidateTargets(t *testing.T) {
	p := DefaultPlan()
	p.Targets = []string{"go", "go"}
	require.ErrorContains(t, p.Validate(), "-targets: go listed twice")
	p.Targets = []string{"java-jvm"}
	require.ErrorContains(t, p.Validate(), `-targets: unknown target "java-jvm"`)
}

// TestResolve: the names and lists of a plan are looked up and parsed
// once, into the values the sweep passes down.
func TestResolve(t *testing.T) {
	p := DefaultPlan()
	p.Topologies = []string{"nginx-http", "standalone", "nginx-return"}
	p.PinLoad, p.PinServer = "0", "1,2,3"
	r, err := p.Resolve()
	require.NoError(t, err)
	var names []string
	for _, tp := range r.Tops {
		names = append(names, tp.Name)
	}
	assert.Equal(t, p.Topologies, names, "in the plan's order")
	assert.Equal(t, "nginx-http", r.Topology("nginx-http").Name)
	assert.True(t, r.Topology("nginx-http").ViaNginx())
	assert.Equal(t, topology.Standalone, r.Topology(topology.Standalone).Name)
	assert.Zero(t, r.Topology("nginx-php"), "a name the plan lacks")
	assert.Equal(t, cpuset.Of(0), r.LoadCPUs)
	assert.Equal(t, "1-3", r.ServerCPUs.String())
	assert.Equal(t, "1,2,3", p.PinServer, "the plan keeps what env.json records")

	var block []Cell
	for _, c := range p.Cells() {
		if c.Topology != "nginx-http" {
			block = append(block, c)
		}
	}
	var got []string
	for _, tp := range r.TopologiesOf(block) {
		got = append(got, tp.Name)
	}
	assert.Equal(t, []string{"standalone", "nginx-return"}, got, "a block's topologies, each once, in plan order")

	unpinned, err := DefaultPlan().Resolve()
	require.NoError(t, err)
	assert.True(t, unpinned.LoadCPUs.IsEmpty())
	assert.True(t, unpinned.ServerCPUs.IsEmpty())
	assert.NoError(t, unpinned.CheckCPUs(cpuset.Of(0)), "unpinned fits any machine")

	_, err = Plan{}.Resolve()
	assert.Error(t, err, "an empty plan does not resolve")
}

// TestMaxWaitIsHellos: the plan's bound on -wait is cmd/hello's own.
func TestMaxWaitIsHellos(t *testing.T) {
	p := DefaultPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Schedules = []results.Schedule{{Rate: 100, Wait: MaxWait}}
	require.NoError(t, p.Validate())
	p.Schedules[0].Wait = MaxWait + time.Millisecond
	assert.ErrorContains(t, p.Validate(), "-wait")
}

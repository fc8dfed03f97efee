package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// smallPlan is a short plan of the topologies given.
func smallPlan(tops ...string) Plan {
	p := DefaultPlan()
	p.Topologies = tops
	p.GOMAXPROCS = []int{1, 2}
	p.Connections = []int{100}
	p.Reps = 2
	p.Warmup = time.Second
	return p
}

// fakeProgram is an executable that a command target may name.
func fakeProgram(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "api")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	return p
}

func TestValidate(t *testing.T) {
	ok := DefaultPlan()
	require.NoError(t, ok.Validate(Where{}))
	few := DefaultPlan()
	few.Connections = []int{30, 100, 1000, 5000}
	require.NoError(t, few.Validate(Where{}), "fewer connections than threads lowers the threads (the 2009 sweep's -c30)")
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
			err := p.Validate(Where{})
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
			r, err := p.Check(Where{})
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
	require.ErrorContains(t, p.Validate(Where{}), "-targets: go listed twice")
	p.Targets = []string{"java-jvm"}
	require.ErrorContains(t, p.Validate(Where{}), `-targets: unknown target "java-jvm"`)
}

// TestResolve: the names and lists of a plan are looked up and parsed
// once, into the values the sweep passes down.
func TestResolve(t *testing.T) {
	p := DefaultPlan()
	p.Topologies = []string{"nginx-http", "standalone", "nginx-return"}
	p.PinLoad, p.PinServer = "0", "1,2,3"
	r, err := p.Check(Where{})
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

	var block []results.Cell
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

	unpinned, err := DefaultPlan().Check(Where{})
	require.NoError(t, err)
	assert.True(t, unpinned.LoadCPUs.IsEmpty())
	assert.True(t, unpinned.ServerCPUs.IsEmpty())
	assert.NoError(t, unpinned.CheckCPUs(cpuset.Of(0)), "unpinned fits any machine")

	_, err = Plan{}.Check(Where{})
	assert.Error(t, err, "an empty plan does not resolve")
}

// TestMaxWaitIsHellos: the plan's bound on -wait is cmd/hello's own.
func TestMaxWaitIsHellos(t *testing.T) {
	p := DefaultPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Schedules = []results.Schedule{{Rate: 100, Wait: MaxWait}}
	require.NoError(t, p.Validate(Where{}))
	p.Schedules[0].Wait = MaxWait + time.Millisecond
	assert.ErrorContains(t, p.Validate(Where{}), "-wait")
}

func TestParseKeepalives(t *testing.T) {
	ks, err := ParseKeepalives("300, auto")
	require.NoError(t, err)
	assert.Equal(t, []results.Keepalive{300, results.KeepaliveAuto}, ks)
	for _, tc := range []struct{ in, err string }{
		{"300,lots", `"lots", want auto or a positive number of connections`},
		{"0", `"0", want auto or a positive number of connections`},
		{",", `no pools in ",", want auto or counts such as 300,auto`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseKeepalives(tc.in)
			require.Error(t, err)
			assert.Equal(t, tc.err, err.Error())
		})
	}
}

func TestPlanChecksKeepalives(t *testing.T) {
	for _, tc := range []struct {
		name string
		tops []string
		ks   []results.Keepalive
		err  string
	}{
		{"two pools", []string{"standalone", "nginx-http"}, []results.Keepalive{300, results.KeepaliveAuto}, ""},
		{"one pool without nginx", []string{"standalone"}, []results.Keepalive{results.KeepaliveAuto}, ""},
		{"twice", []string{"nginx-http"}, []results.Keepalive{300, 300}, "-upstream-keepalive: 300 listed twice"},
		{"a bad count", []string{"nginx-http"}, []results.Keepalive{-7}, "-upstream-keepalive: -7, want auto or a positive number of connections"},
		{"nothing to pool", []string{"standalone", "nginx-return"}, []results.Keepalive{300, results.KeepaliveAuto},
			"-upstream-keepalive: 2 pools, and no topology of the plan goes through nginx to a server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan(tc.tops...)
			p.UpstreamKeepalive = tc.ks
			err := p.Validate(Where{})
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
}

func TestKeepaliveNeedsNginxHere(t *testing.T) {
	p := smallPlan("nginx-http")
	agents := Where{HelloAgent: true, NginxAgent: true}
	require.NoError(t, p.Validate(agents), "the default pool is what the agent renders")
	p.UpstreamKeepalive = []results.Keepalive{results.KeepaliveAuto}
	err := p.Validate(agents)
	require.ErrorIs(t, err, ErrPlan)
	assert.Equal(t, "-upstream-keepalive: nginx runs elsewhere (-nginx-agent, -swarm) with the pool of 300 it was rendered with; measure other pools with nginx here", err.Error())
	require.NoError(t, p.Validate(Where{}))
}

// TestParseOwn: -window and -lead take one duration for every topology
// and TOPOLOGY=D for a topology's own; a window in whole seconds, a lead
// from 0 to 1m.
func TestParseOwn(t *testing.T) {
	tops := []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}
	windows, leads := ParseWindows, ParseLeads
	tests := []struct {
		flag  string
		parse func(string, []string) (time.Duration, map[string]time.Duration, error)
		in    string
		all   time.Duration
		own   map[string]time.Duration
		err   string
	}{
		{"-window", windows, "3s", 3 * time.Second, nil, ""},
		{"-window", windows, "3s,nginx-fcgi-tcp=6s", 3 * time.Second, map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second}, ""},
		{"-window", windows, "nginx-fcgi-tcp=6s, nginx-http=4s", DefaultWindow, map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second, "nginx-http": 4 * time.Second}, ""},
		{"-window", windows, "1500ms", 0, nil, "want whole seconds"},
		{"-window", windows, "0", 0, nil, "want whole seconds from 1s"},
		{"-window", windows, "3s,nginx-fcgi-tcp=2500ms", 0, nil, "want whole seconds"},
		{"-window", windows, "2h", 0, nil, "want whole seconds from 1s to 1h0m0s"},
		{"-window", windows, "3s,4s", 0, nil, "one duration for every topology"},
		{"-window", windows, "3s,nginx-fcgi-unix=6s", 0, nil, `"nginx-fcgi-unix" is not a topology of the plan`},
		{"-lead", leads, "1s", time.Second, nil, ""},
		{"-lead", leads, "0", 0, nil, ""},
		{"-lead", leads, "1s,standalone=250ms", time.Second, map[string]time.Duration{"standalone": 250 * time.Millisecond}, ""},
		{"-lead", leads, "standalone=250ms", DefaultLead, map[string]time.Duration{"standalone": 250 * time.Millisecond}, ""},
		{"-lead", leads, "1s,2s", 0, nil, "one duration for every topology"},
		{"-lead", leads, "1s,nginx-fcgi-unix=2s", 0, nil, `"nginx-fcgi-unix" is not a topology of the plan`},
		{"-lead", leads, "2m", 0, nil, "want a duration from 0 to 1m"},
		{"-lead", leads, "standalone=fast", 0, nil, "want a duration from 0 to 1m"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+" "+tt.in, func(t *testing.T) {
			all, own, err := tt.parse(tt.in, tops)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.flag+": "), "names the flag")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.all, all)
			assert.Equal(t, tt.own, own)
		})
	}
	// What the plan makes of them.
	p := results.Paired{Lead: time.Second, Leads: map[string]time.Duration{"standalone": 250 * time.Millisecond}}
	assert.Equal(t, time.Second, p.LeadOf("nginx-http"))
	assert.Equal(t, 250*time.Millisecond, p.LeadOf("standalone"))
}

func TestValidateCommandTargets(t *testing.T) {
	prog := fakeProgram(t)
	for _, tt := range []struct {
		name    string
		targets []string
		change  func(*Plan)
		want    string // "" for a valid plan
	}{
		{"tcp", []string{"cmd:" + prog + " -listen {addr}"}, nil, ""},
		{"unix", []string{"cmd:" + prog + " -unix {unix}"}, nil, ""},
		{"with go", []string{"go", "cmd:'" + prog + "' -listen {addr}"}, nil, ""},
		{"a path with a query", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Path = "/api/x?page=2" }, ""},
		{"nowhere to listen", []string{"cmd:" + prog + " -v"}, nil, "-targets: target \"cmd:" + prog + " -v\": the command must say where to listen"},
		{"unknown placeholder", []string{"cmd:" + prog + " -listen {adr}"}, nil, "unknown placeholder {adr}"},
		{"two commands of one program", []string{"cmd:" + prog + " -listen {addr}", "cmd:" + prog + " -listen {addr} -v"}, nil, "would both be named cmd-api"},
		{"listed twice", []string{"cmd:" + prog + " -listen {addr}", "cmd:" + prog + " -listen {addr}"}, nil, "listed twice"},
		{"handler work", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Schedules = []results.Schedule{{Work: 1000}} }, "-work: cmd:" + prog},
		{"handler wait", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Schedules = []results.Schedule{{Wait: 1000}} }, "-wait: a command target"},
		{"a path without /", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Path = "api/x" }, `-path: "api/x"`},
		{"a path with a space", []string{"go"}, func(p *Plan) { p.Path = "/a b" }, "-path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Targets = tt.targets
			if tt.change != nil {
				tt.change(&p)
			}
			err := p.Validate(Where{})
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
}

// TestValidateWork: -work and fractions are checked before anything runs.
func TestValidateWork(t *testing.T) {
	builtin := func(p *Plan) { p.Loads = []results.Generator{results.LoadBuiltin} }
	for _, c := range []struct {
		name   string
		change func(*Plan)
		want   string
	}{
		{"negative work", func(p *Plan) { p.Schedules = []results.Schedule{{Work: -time.Microsecond}} }, "-work: -1µs is negative"},
		{"work past cmd/hello's bound", func(p *Plan) { p.Schedules = []results.Schedule{{Work: hello.MaxWork + time.Microsecond}} },
			"-work: " + (hello.MaxWork + time.Microsecond).String() + " is more than cmd/hello works (" + hello.MaxWork.String() + ")"},
		{"a target that takes no work", func(p *Plan) {
			p.Targets = []string{"go", "erlang"}
			p.Schedules = []results.Schedule{{Work: time.Millisecond}}
		}, "-work: erlang does not take handler work (?work=); cmd/hello does"},
		{"a fraction above 1", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{Fraction: 1.5}} }, "-fraction: a fraction of capacity of 1.5"},
		{"a negative fraction", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{Fraction: -0.5}} }, "-fraction: a fraction of capacity of -0.5"},
		{"a fraction with wrk only", func(p *Plan) { p.Schedules = []results.Schedule{{Fraction: 0.5}} }, "needs -load builtin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultPlan()
			c.change(&p)
			err := p.Validate(Where{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	for _, c := range []struct {
		name   string
		change func(*Plan)
	}{
		{"the most work", func(p *Plan) { p.Schedules = []results.Schedule{{Work: hello.MaxWork}} }},
		{"no work for a target that takes none", func(p *Plan) { p.Targets = []string{"go", "erlang"} }},
		{"a whole fraction", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{Fraction: 1}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultPlan()
			c.change(&p)
			assert.NoError(t, p.Validate(Where{}))
		})
	}
}

func TestScenarios(t *testing.T) {
	for _, name := range Scenarios() {
		t.Run(name, func(t *testing.T) {
			p, err := Scenario(name, 1, 2)
			require.NoError(t, err)
			assert.Equal(t, name, p.Scenario)
			assert.NoError(t, p.Validate(Where{}), "every preset is a valid plan")
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

func TestParseList(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, ParseList(" a, ,b ,"))
	assert.Nil(t, ParseList(" , "))
}

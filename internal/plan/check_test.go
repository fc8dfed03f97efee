package plan

import (
	"fmt"
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
	"github.com/topobench/topobench/internal/tlscert"
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

// TestCheck: each rule of the plan alone is refused, naming its field;
// the error is an ErrPlan of one line.
func TestCheck(t *testing.T) {
	ok := DefaultPlan()
	require.NoError(t, ok.Validate(Where{}))
	few := DefaultPlan()
	few.Connections = []int{30, 100, 1000, 5000}
	require.NoError(t, few.Validate(Where{}), "fewer connections than threads lowers the threads (the 2009 sweep's -c30)")
	assert.Equal(t, 30, few.ThreadsFor(30))
	h2plan := DefaultPlan()
	h2plan.Loads, h2plan.Connections = []results.Generator{results.LoadH2load}, []int{150}
	require.NoError(t, h2plan.Validate(Where{}), "h2load over HTTP/1.1 in rounds, its threads sharing any count of connections")

	builtin := func(p *Plan) { p.Loads = []results.Generator{results.LoadBuiltin} }
	h2 := func(p *Plan) { p.Loads = []results.Generator{results.LoadH2load} }
	sched := func(sc results.Schedule) func(*Plan) {
		return func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{sc} }
	}
	tests := []struct {
		name   string
		change func(*Plan)
		field  Field
		want   string
	}{
		{"unknown target", func(p *Plan) { p.Targets = []string{"cobol"} }, Targets, `unknown target "cobol"`},
		{"a target twice", func(p *Plan) { p.Targets = []string{"go", "go"} }, Targets, "go listed twice"},
		{"a target that serves none of the topologies", func(p *Plan) {
			p.Targets, p.Topologies = []string{"go", "erlang"}, []string{"nginx-fcgi-unix"}
		}, Targets, "erlang serves only standalone, nginx-http; -topologies names none of them"},
		{"a command that serves none of the topologies", func(p *Plan) {
			p.Targets, p.Topologies = []string{"cmd:./api -unix {unix}"}, []string{"standalone", "nginx-http"}
		}, Targets, "cmd:./api -unix {unix} serves only nginx-http-unix; -topologies names none of them"},
		{"a path without /", func(p *Plan) { p.Path = "api" }, Path, `"api", want /PATH`},
		{"unknown topology", func(p *Plan) { p.Topologies = []string{"nginx-php"} }, Topologies, "nginx-php"},
		{"a TLS topology under the event loops", func(p *Plan) {
			p.Topologies, p.Loads, p.EngineLoops = []string{"standalone", "nginx-tls-http"}, []results.Generator{results.LoadBuiltin}, true
		}, Engine, "loops: the event loops speak no TLS, which nginx-tls-http does; give -engine goroutines"},
		{"TLS settings and no TLS topology", func(p *Plan) { p.SetTLS(func(s *tlscert.Settings) { s.Resume = true }) }, Topologies, "names no topology over TLS (standalone-tls, nginx-tls-http, nginx-tls-http-unix), and -tls-key, -tls-version or -tls-resume applies to them alone"},
		{"an unknown TLS key", func(p *Plan) {
			p.Topologies = []string{"standalone-tls"}
			p.SetTLS(func(s *tlscert.Settings) { s.Key = 7 })
		}, TLSKey, "Key(7), want p256 or rsa2048"},
		{"an unknown TLS version", func(p *Plan) {
			p.Topologies = []string{"standalone-tls"}
			p.SetTLS(func(s *tlscert.Settings) { s.Version = 7 })
		}, TLSVersion, "Version(7), want 1.3 or 1.2"},
		{"duplicate topology", func(p *Plan) { p.Topologies = []string{"standalone", "standalone"} }, Topologies, "standalone"},
		{"no gomaxprocs", func(p *Plan) { p.GOMAXPROCS = nil }, GOMAXPROCS, "no values"},
		{"zero gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{0} }, GOMAXPROCS, "0 is not a positive number"},
		{"repeated gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{1, 1} }, GOMAXPROCS, "1 listed twice"},
		{"a hundred thousand processors", func(p *Plan) { p.GOMAXPROCS = []int{1, 100000} }, GOMAXPROCS, "100000, want at most 1024"},
		{"no connections", func(p *Plan) { p.Connections = nil }, Connections, "no values"},
		{"repeated connections", func(p *Plan) { p.Connections = []int{100, 100} }, Connections, "100 listed twice"},
		{"connections not a multiple of threads", func(p *Plan) { p.Connections = []int{5050} }, Connections, "5050 is not a multiple of -threads 100"},
		{"unknown load", func(p *Plan) { p.Loads = []results.Generator{"ab"} }, Load, `unknown load generator "ab"`},
		{"a load twice", func(p *Plan) { p.Loads = []results.Generator{"wrk", "wrk"} }, Load, "wrk listed twice"},
		{"rate with wrk only", func(p *Plan) { p.Schedules = []results.Schedule{{Rate: 1000}} }, Rate, "needs -load builtin"},
		{"rate with h2load only", func(p *Plan) { h2(p); p.Schedules = []results.Schedule{{Rate: 1000}} }, Rate, "needs -load builtin"},
		{"streams without h2load", func(p *Plan) { p.Streams = 8 }, Streams, "applies to -load h2load"},
		{"negative streams", func(p *Plan) { h2(p); p.Streams = -1 }, Streams, "-1, want 1 to 1024 HTTP/2 streams a connection"},
		{"too many streams", func(p *Plan) { h2(p); p.Streams = 100000 }, Streams, "100000, want 1 to 1024"},
		{"streams over plain HTTP", func(p *Plan) { h2(p); p.Streams = 8 }, Streams, "standalone is plain HTTP, which h2load loads over HTTP/1.1"},
		{"a negative rate", sched(results.Schedule{Rate: -1}), Rate, "-1 is not a positive rate"},
		{"negative wait", sched(results.Schedule{Wait: -time.Second}), Wait, "-1s is negative"},
		{"wait past the server's bound", sched(results.Schedule{Wait: time.Hour}), Wait, "is more than cmd/hello waits"},
		{"negative work", sched(results.Schedule{Work: -time.Second}), Work, "-1s is negative"},
		{"a negative count of requests", sched(results.Schedule{Rate: 10, Requests: -1}), Requests, "-1 is negative"},
		{"a fraction past 1", sched(results.Schedule{Fraction: 2}), Fraction, "a fraction of capacity of 2"},
		{"negative max connections", func(p *Plan) { p.MaxConnections = -1 }, MaxConnections, "-1 is negative"},
		{"no reps", func(p *Plan) { p.Reps = 0 }, Reps, "0, want at least 1"},
		{"sub-second duration", func(p *Plan) { p.Duration = 500 * time.Millisecond }, Duration, "want at least 1s"},
		{"fractional duration", func(p *Plan) { p.Duration = 1500 * time.Millisecond }, Duration, "want whole seconds"},
		{"a duration of years", func(p *Plan) { p.Duration = 999999 * time.Hour }, Duration, "999999h0m0s, want at most 1h0m0s a cell"},
		{"negative warmup", func(p *Plan) { p.Warmup = -time.Second }, Warmup, "-1s is negative"},
		{"fractional warmup", func(p *Plan) { p.Warmup = 1500 * time.Millisecond }, Warmup, "want whole seconds"},
		{"a warmup past the bound", func(p *Plan) { p.Warmup = 2 * time.Hour }, Warmup, "2h0m0s, want at most 1h0m0s"},
		{"no threads", func(p *Plan) { p.Threads = 0 }, Threads, "0, want at least 1"},
		{"no timeout", func(p *Plan) { p.Timeout = 0 }, Timeout, "want whole seconds, at least 1s"},
		{"sub-second timeout", func(p *Plan) { p.Timeout = 500 * time.Millisecond }, Timeout, "want whole seconds, at least 1s"},
		{"bad load CPU list", func(p *Plan) { p.PinLoad = "abc" }, PinLoad, "CPU list"},
		{"bad server CPU list", func(p *Plan) { p.PinServer = "1-" }, PinServer, "CPU list"},
		{"unknown isolation", func(p *Plan) { p.Isolation = "vm" }, Isolate, `"vm", want netns or none`},
		{"a negative link delay", func(p *Plan) { p.LinkDelay = -time.Microsecond }, LinkDelay, "want zero or more"},
		{"a link delay below tc's resolution", func(p *Plan) { p.LinkDelay = 1500 * time.Nanosecond }, LinkDelay, "want whole microseconds"},
		{"a link delay on loopback", func(p *Plan) { p.Isolation, p.LinkDelay = results.IsolateNone, time.Millisecond }, LinkDelay, "needs -isolate netns"},
		{"a bad keepalive", func(p *Plan) { p.UpstreamKeepalive = []results.Keepalive{-7} }, Keepalive, "-7, want auto or a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			tt.change(&p)
			requireFieldError(t, p.Validate(Where{}), tt.field, tt.want)
		})
	}
}

// requireFieldError checks err is an ErrPlan of one line naming field,
// whose text holds want after the field's "-field: ".
func requireFieldError(t *testing.T, err error, field Field, want string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrPlan)
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, field, fe.Field, "%v", err)
	assert.True(t, strings.HasPrefix(err.Error(), "-"+string(field)+": "), "%v", err)
	assert.Contains(t, err.Error(), want)
	assert.NotContains(t, err.Error(), "\n", "one line")
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
		{"handler wait", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Schedules = []results.Schedule{{Wait: 1000}} }, "-wait: a command or running target"},
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

// TestTLS: a plan with a TLS topology gets the default settings, which
// a preset's plan does not share once changed, and are recorded.
func TestTLS(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	p.DefaultTLS()
	assert.Nil(t, p.TLS, "no TLS topology, no TLS settings")

	p = smallPlan("standalone-tls", "nginx-tls-http")
	assert.True(t, p.HasTLS())
	p.DefaultTLS()
	require.NotNil(t, p.TLS)
	assert.Equal(t, tlscert.Settings{}, *p.TLS, "P-256, TLS 1.3, no resumption")
	q := p
	q.SetTLS(func(s *tlscert.Settings) { s.Key = tlscert.RSA2048 })
	assert.Equal(t, tlscert.P256, p.TLS.Key, "SetTLS gives q its own settings")
	assert.Equal(t, tlscert.RSA2048, q.TLSSettings().Key)

	for _, tt := range []struct {
		in   string
		want bool
	}{{"on", true}, {"off", false}} {
		got, err := ParseTLSResume(tt.in)
		require.NoError(t, err)
		assert.Equal(t, tt.want, got, tt.in)
	}
	_, err := ParseTLSResume("yes")
	assert.EqualError(t, err, `"yes", want on or off`)
}

// TestCheckTLSPasses: the TLS topologies with the loads that speak TLS,
// beside the plain ones, with a connection a request.
func TestCheckTLSPasses(t *testing.T) {
	p := smallPlan("standalone", "standalone-tls", "nginx-tls-http", "nginx-tls-http-unix")
	p.Close = true
	p.SetTLS(func(s *tlscert.Settings) { s.Version, s.Resume = tlscert.TLS12, true })
	for _, loads := range [][]results.Generator{{results.LoadWrk}, {results.LoadBuiltin}, {results.LoadWrk, results.LoadBuiltin}} {
		p.Loads = loads
		r, err := p.Check(Where{})
		require.NoError(t, err, "%v", loads)
		assert.Len(t, r.Tops, 4)
	}
}

// TestTLSLoads: the generators that speak TLS load the paths over it,
// h2load over HTTP/2 too.
func TestTLSLoads(t *testing.T) {
	for _, tc := range []struct {
		load    results.Generator
		streams int
	}{{results.LoadWrk, 0}, {results.LoadBuiltin, 0}, {results.LoadH2load, 0}, {results.LoadH2load, 8}} {
		t.Run(fmt.Sprintf("%s streams %d", tc.load, tc.streams), func(t *testing.T) {
			p := smallPlan("standalone-tls", "nginx-tls-http", "nginx-tls-http-unix")
			p.Loads, p.Streams = []results.Generator{tc.load}, tc.streams
			assert.NoError(t, p.Validate(Where{}))
		})
	}
}

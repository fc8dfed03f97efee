package plan

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// pairedPlan is a short paired plan of standalone and two topologies.
func pairedPlan() Plan {
	p := smallPlan("standalone", "nginx-http", "nginx-fcgi-tcp")
	p.Reps, p.Duration, p.Warmup = 1, 2*time.Second, time.Second
	p.Paired = &results.Paired{Pairs: 3, Seed: 42}
	return p
}

// TestCheckPaired: what the paired and duet designs cannot measure.
func TestCheckPaired(t *testing.T) {
	require.NoError(t, pairedPlan().Validate(Where{}))
	tls := pairedPlan()
	tls.Topologies, tls.Loads, tls.Paired.Duet = []string{"standalone-tls", "nginx-tls-http", "nginx-tls-http-unix"}, []results.Generator{results.LoadBuiltin}, true
	require.NoError(t, tls.Validate(Where{}), "a duet of paths over TLS beside standalone-tls")
	assert.Equal(t, "standalone-tls", tls.Baseline())
	builtin := func(p *Plan) { p.Loads = []results.Generator{results.LoadBuiltin} }
	duet := func(p *Plan) { builtin(p); p.Paired.Duet = true }
	h2load := func(p *Plan) { p.Loads = []results.Generator{results.LoadH2load} }
	check := func(c results.Check) func(*Plan) {
		return func(p *Plan) { builtin(p); p.Paired.Check = &c }
	}
	wrk := results.Check{Load: results.LoadWrk, Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: 1, Duration: 15 * time.Second}
	with := func(f func(*results.Check)) results.Check { c := wrk; f(&c); return c }
	tests := []struct {
		name   string
		change func(*Plan)
		field  Field
		want   string
	}{
		{"no pairs", func(p *Plan) { p.Paired.Pairs = 0 }, Reps, "0 pairs, want at least 1"},
		{"TLS beside plaintext", func(p *Plan) { p.Topologies = []string{"standalone", "standalone-tls", "nginx-tls-http"} }, Topologies, "paired: pairs every topology with one baseline; measure standalone-tls, nginx-tls-http (over TLS) and standalone (plaintext) in separate sweeps"},
		{"a duet over TLS beside plaintext", func(p *Plan) { duet(p); p.Topologies = []string{"standalone", "nginx-tls-http"} }, Topologies, "duet: pairs every topology with one baseline; measure nginx-tls-http (over TLS) and standalone (plaintext)"},
		{"TLS without standalone-tls", func(p *Plan) { duet(p); p.Topologies = []string{"nginx-tls-http", "nginx-tls-http-unix"} }, Design, "duet: -topologies needs standalone-tls, which every other is measured beside"},
		{"no standalone", func(p *Plan) { p.Topologies = []string{"nginx-http"} }, Design, "paired: -topologies needs standalone"},
		{"two loads", func(p *Plan) { p.Loads = []results.Generator{"wrk", "builtin"} }, Design, "paired: give one -load"},
		{"two connections", func(p *Plan) { p.Connections = []int{100, 200} }, Design, "paired: give one -connections value"},
		{"open loop", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{Rate: 100}} }, Design, "paired: windows are closed loop"},
		{"open loop at a fraction", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{Work: time.Millisecond, Fraction: 0.5}} }, Design, "paired: windows are closed loop"},
		{"a handler wait", func(p *Plan) { builtin(p); p.Schedules = []results.Schedule{{}, {Wait: time.Millisecond}} }, Design, "paired: windows are closed loop"},
		{"a duet's handler wait", func(p *Plan) { duet(p); p.Schedules = []results.Schedule{{Wait: time.Millisecond}} }, Design, "duet: windows are closed loop"},
		{"a connection a request", func(p *Plan) { p.Close = true }, Design, "paired: -close opens a connection a request"},
		{"a duet on wrk", func(p *Plan) { p.Paired.Duet = true }, Design, "duet: needs -load builtin"},
		{"a duet on h2load", func(p *Plan) { h2load(p); p.Paired.Duet = true }, Design, "duet: needs -load builtin"},
		{"a lead on h2load", func(p *Plan) { h2load(p); p.Paired.Lead = time.Second }, Lead, "applies to -load builtin"},
		{"an h2load cross-check of HTTP/2 streams over plain HTTP", func(p *Plan) {
			check(with(func(c *results.Check) { c.Load = results.LoadH2load }))(p)
			p.Streams = 8
		}, Streams, "standalone is plain HTTP"},
		{"a lead on wrk", func(p *Plan) { p.Paired.Lead = time.Second }, Lead, "applies to -load builtin"},
		{"a topology's lead on wrk", func(p *Plan) { p.Paired.Leads = map[string]time.Duration{"standalone": time.Second} }, Lead, "applies to -load builtin"},
		{"a cross-check of an unknown load", check(with(func(c *results.Check) { c.Load = "ab" })), CrossCheck, `unknown load generator "ab"`},
		{"a cross-check of the pairs' load", check(with(func(c *results.Check) { c.Load = results.LoadBuiltin })), CrossCheck, "the pairs' load is builtin already"},
		{"a cross-check at another GOMAXPROCS", check(with(func(c *results.Check) { c.GOMAXPROCS = 4 })), CrossCheck, "GOMAXPROCS=4 is not among -gomaxprocs"},
		{"a cross-check of part seconds", check(with(func(c *results.Check) { c.Duration = 1500 * time.Millisecond })), CrossCheck, "a run of 1.5s, want whole seconds"},
		{"a cross-check of another topology", check(with(func(c *results.Check) { c.Topologies = []string{"nginx-return"} })), CrossCheck, "nginx-return is not among -topologies"},
		{"a wrk cross-check of connections its threads cannot share", func(p *Plan) {
			check(wrk)(p)
			p.Connections, p.Threads = []int{150}, 100
		}, Connections, "150 is not a multiple of -threads 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pairedPlan()
			tt.change(&p)
			requireFieldError(t, p.Validate(Where{}), tt.field, tt.want)
		})
	}
	p := pairedPlan()
	check(wrk)(&p)
	require.NoError(t, p.Validate(Where{}), "a wrk cross-check of the engine's pairs")
	p = pairedPlan()
	check(with(func(c *results.Check) { c.Load = results.LoadH2load }))(&p)
	require.NoError(t, p.Validate(Where{}), "an h2load cross-check of the engine's pairs")
	p = pairedPlan()
	h2load(&p)
	require.NoError(t, p.Validate(Where{}), "h2load's pairs, a run a window as wrk's")
	for _, change := range []func(*Plan){builtin, duet} {
		p := pairedPlan()
		change(&p)
		p.Schedules = Product(nil, nil, []time.Duration{0, 200 * time.Microsecond})
		require.NoError(t, p.Validate(Where{}), "handler work under %s", p.Paired.Design())
	}
}

// TestCheckWhere: the rules of where a plan runs, each refused where it
// breaks and passed on this machine.
func TestCheckWhere(t *testing.T) {
	agents := Where{HelloAgent: true, NginxAgent: true}
	swarm := Where{Cluster: true}
	onCluster := func(p *Plan) { p.Loads = []results.Generator{results.LoadBuiltin} }
	tests := []struct {
		name   string
		change func(*Plan)
		where  Where
		field  Field
		want   string
	}{
		{"resuming one machine's sweep on a cluster", onCluster, Where{Cluster: true, Resume: true, Dir: "r/1"}, Resume, "r/1 did not run on a cluster; resume it without -swarm"},
		{"resuming a cluster's sweep here", nil, Where{Resume: true, Dir: "r/1", ResumedOn: "swarm"}, Resume, "r/1 ran on a cluster (swarm); resume it with -swarm"},
		{"an nginx agent alone", nil, Where{NginxAgent: true}, NginxAgent, "needs -hello-agent"},
		{"agents on a cluster", onCluster, Where{HelloAgent: true, Cluster: true}, HelloAgent, "the servers run on the cluster's server node"},
		{"pinned servers elsewhere", func(p *Plan) { p.PinServer = "1" }, agents, PinServer, "the servers run elsewhere (-hello-agent)"},
		{"free ports elsewhere", nil, Where{HelloAgent: true, NginxAgent: true, FreePorts: true}, FreePorts, "with -hello-agent the servers listen on the reference ports"},
		{"nginx topologies without an nginx agent", nil, Where{HelloAgent: true}, NginxAgent, "topologies through nginx need it"},
		{"another target under agents", func(p *Plan) { p.Targets = []string{"go", "erlang"} }, agents, Targets, "with -hello-agent only go runs"},
		{"namespaces under agents", func(p *Plan) { p.Isolation = results.IsolateNetns }, agents, Isolate, "netns: the servers run elsewhere"},
		{"a link delay under agents", func(p *Plan) { p.LinkDelay = time.Millisecond }, agents, LinkDelay, "needs -isolate netns"},
		{"free ports on a cluster", onCluster, Where{Cluster: true, FreePorts: true}, FreePorts, "on the cluster the servers listen on the reference ports"},
		{"CPU lists on a cluster", func(p *Plan) { onCluster(p); p.PinLoad = "0" }, swarm, CPUs, "give no CPU lists"},
		{"namespaces on a cluster", func(p *Plan) { onCluster(p); p.Isolation = results.IsolateNetns }, swarm, Isolate, "netns: on the cluster"},
		{"a link delay on a cluster", func(p *Plan) { onCluster(p); p.LinkDelay = time.Millisecond }, swarm, LinkDelay, "not on the cluster"},
		{"wrk on a cluster", nil, swarm, Load, "wrk: on the cluster the load is the built-in engine"},
		{"h2load on a cluster", func(p *Plan) { p.Loads = []results.Generator{results.LoadH2load} }, swarm, Load, "h2load: on the cluster the load is the built-in engine"},
		{"another target on a cluster", func(p *Plan) { onCluster(p); p.Targets = []string{"go", "erlang"} }, swarm, Targets, "erlang: on the cluster only cmd/hello (go) runs yet"},
		{"a probe on a cluster", func(p *Plan) {
			onCluster(p)
			p.Schedules = []results.Schedule{{Probe: true, Wait: time.Second, Requests: 10}}
		}, swarm, Requests, "schedules bounded by a request count or probes do not run on the cluster yet"},
		{"a keepalive nginx elsewhere was not rendered with", func(p *Plan) { p.UpstreamKeepalive = []results.Keepalive{results.KeepaliveAuto} }, agents, Keepalive, "nginx runs elsewhere"},
		{"a speed probe elsewhere", func(p *Plan) { p.SpeedProbe = true }, agents, SpeedProbe, "it measures this machine's CPUs"},
		{"standalone's own process elsewhere", func(p *Plan) { p.Paired = &results.Paired{Pairs: 1, Own: true} }, agents, StandaloneProcess, "own: starts standalone's server here"},
		{"TLS on a cluster", func(p *Plan) {
			onCluster(p)
			p.Topologies = []string{"standalone", "standalone-tls"}
		}, swarm, Topologies, "standalone-tls speaks TLS, whose servers run here only, not through agents or a cluster"},
		{"TLS under agents", func(p *Plan) { p.Topologies = []string{"standalone", "nginx-tls-http"} }, agents, Topologies, "nginx-tls-http speaks TLS, whose servers run here only"},
		{"a duet elsewhere", func(p *Plan) {
			onCluster(p)
			p.Paired = &results.Paired{Pairs: 1, Duet: true}
		}, swarm, Design, "duet: runs its two sides' servers here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pairedPlan()
			p.Paired = nil
			if tt.change != nil {
				tt.change(&p)
			}
			requireFieldError(t, p.Validate(tt.where), tt.field, tt.want)
			if !tt.where.Resume && !tt.where.HelloAgent && !tt.where.NginxAgent && !tt.where.Cluster {
				return
			}
			require.NoError(t, p.Validate(Where{}), "the same plan here")
		})
	}
}

// TestCheckWherePasses: plans that fit where they run.
func TestCheckWherePasses(t *testing.T) {
	p := pairedPlan()
	p.Paired = nil
	require.NoError(t, p.Validate(Where{HelloAgent: true, NginxAgent: true}))
	p.Loads = []results.Generator{results.LoadBuiltin}
	require.NoError(t, p.Validate(Where{Cluster: true}))
	require.NoError(t, p.Validate(Where{Cluster: true, Resume: true, ResumedOn: "swarm"}))
	p.Paired = &results.Paired{Pairs: 1}
	require.NoError(t, p.Validate(Where{Cluster: true}), "standalone shares the servers' process on a cluster")
}

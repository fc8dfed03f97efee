package loadgen

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

// TestBuiltinSpec: the spec a cell hands the engine, in the JSON form it is
// recorded in (runs/<cell>.spec).
func TestBuiltinSpec(t *testing.T) {
	p := smallPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Duration, p.Warmup, p.Timeout, p.MaxConnections = 10*time.Second, 2*time.Second, 2*time.Second, 5000
	g := &builtinGen{plan: p, bin: "/bin/topobench", dir: "/tmp/r"}
	url := "http://127.0.0.1:8080/"
	cell := func(sc results.Schedule) results.Cell {
		return results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: sc, Rep: 1}
	}
	const common = `"target": "http://127.0.0.1:8080/", "seed": 1, "procs": 1, "json": true, "quiet": true, `
	for _, tc := range []struct {
		name  string
		c     results.Cell
		warm  bool
		loops bool
		want  string
	}{
		{"closed", cell(results.Schedule{}), false, false,
			`"connections": 100, "goroutines": true, "duration": "10s", "timeout": "2s"`},
		{"closed on event loops (-engine loops)", cell(results.Schedule{}), false, true,
			`"connections": 100, "threads": 100, "duration": "10s", "timeout": "2s"`},
		{"closed warmup", cell(results.Schedule{}), true, false,
			`"connections": 100, "goroutines": true, "duration": "2s", "timeout": "2s"`},
		{"open by count", cell(slowRequests), false, false,
			`"rate": 1000, "arrivals": "poisson", "connections": 100, "max-connections": 5000, "requests": 100000, "wait": "1s", "timeout": "3s"`},
		{"open warmup runs for the warmup", cell(slowRequests), true, false,
			`"rate": 1000, "arrivals": "poisson", "connections": 100, "max-connections": 5000, "duration": "2s", "wait": "1s", "timeout": "3s"`},
		{"open by duration", cell(results.Schedule{Rate: 500}), false, false,
			`"rate": 500, "arrivals": "poisson", "connections": 100, "max-connections": 5000, "duration": "10s", "timeout": "2s"`},
		{"probe", cell(concurrencyProbe), false, false,
			`"probe": 8000, "wait": "10s", "connections": 100`},
		{"probe warmup is closed loop without the wait", cell(concurrencyProbe), true, false,
			`"connections": 100, "goroutines": true, "duration": "2s", "timeout": "2s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.c.Probe && !tc.warm {
				if limit, err := load.MaxProbe(); err != nil || limit < tc.c.Requests {
					t.Skipf("the open-files limit here (%d) is below the probe's %d requests", limit, tc.c.Requests)
				}
			}
			// The sweep's URL carries ?wait=; the engine gets it as Wait.
			d := p.Duration
			if tc.warm {
				d = p.Warmup
			}
			g.plan.EngineLoops = tc.loops
			s, err := g.spec(tc.c, WithSchedule(url, tc.c.Schedule), d, tc.warm)
			require.NoError(t, err)
			b, err := specFile(s)
			require.NoError(t, err)
			assert.JSONEq(t, "{"+common+tc.want+"}", string(b))
			// What the child reads is what the sweep built.
			back, err := load.ReadSpec(bytes.NewReader(b))
			require.NoError(t, err)
			assert.Equal(t, s, back)
		})
	}
	t.Run("a recorded run primes nothing, as wrk: its servers' CPU is read across the child", func(t *testing.T) {
		for _, c := range []results.Cell{cell(results.Schedule{}), cell(slowRequests)} {
			s, err := g.measuredSpec(c, WithSchedule(url, c.Schedule), p.Duration)
			require.NoError(t, err)
			assert.True(t, s.NoPrime, "%+v", c.Schedule)
			w, err := g.spec(c, WithSchedule(url, c.Schedule), p.Duration, false)
			require.NoError(t, err)
			assert.False(t, w.NoPrime, "a kept session's pools are primed as they open")
		}
	})
	assert.Equal(t, 60*time.Second, g.requestTimeout(cell(results.Schedule{Wait: 59 * time.Second})), "at most the engine's 60 s")
	assert.Equal(t, []string{"load", "-spec", "/r/runs/k.spec", "-out", "/r/runs/.k.load"}, args("/r/runs/k.spec", "/r/runs/.k.load"))
	assert.Equal(t, []string{"load", "-spec", "/r/runs/.k.warm.spec"}, args("/r/runs/.k.warm.spec", ""))

}

// TestBuiltinSpecAllow: the engine may load the run's veth address under
// isolation, and nothing off this machine otherwise.
func TestBuiltinSpecAllow(t *testing.T) {
	p := smallPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	g := &builtinGen{plan: p, bin: "/bin/topobench", dir: "/tmp/r"}
	cell := func(sc results.Schedule) results.Cell {
		return results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: sc, Rep: 1}
	}
	t.Run("isolated: the veth address is allowed", func(t *testing.T) {
		g := *g
		g.allow = netip.MustParseAddr("169.254.10.1")
		s, err := g.spec(cell(results.Schedule{}), "http://169.254.10.1:8080/", p.Duration, false)
		require.NoError(t, err)
		var m map[string]any
		b, _ := json.Marshal(s)
		require.NoError(t, json.Unmarshal(b, &m))
		assert.Equal(t, "169.254.10.1", m["allow"])
	})
	t.Run("a target off this machine is refused before any child starts", func(t *testing.T) {
		_, err := g.spec(cell(results.Schedule{}), "http://10.0.0.1:8080/", p.Duration, false)
		var fe *load.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "target", fe.Field)
	})
}

// TestBuiltinSpecWork: the handler's work goes in the engine's target
// query, in ASCII; the wait stays out of it (the engine sends it itself).
func TestBuiltinSpecWork(t *testing.T) {
	p := smallPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.MaxConnections = 5000
	g := &builtinGen{plan: p, bin: "/bin/topobench", dir: "/tmp/r"}
	const url = "http://127.0.0.1:8080/"
	for _, c := range []struct {
		sc   results.Schedule
		want string
	}{
		{results.Schedule{}, url},
		{results.Schedule{Work: 200 * time.Microsecond}, url + "?work=200us"},
		{results.Schedule{Work: time.Millisecond, Rate: 500}, url + "?work=1ms"},
		{results.Schedule{Work: 50 * time.Microsecond, Wait: time.Second, Rate: 100}, url + "?work=50us"},
	} {
		cell := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: c.sc, Rep: 1}
		for _, warm := range []bool{false, true} {
			s, err := g.spec(cell, WithSchedule(url, c.sc), time.Second, warm)
			require.NoError(t, err)
			assert.Equal(t, c.want, s.Target.String(), "%+v warm=%v", c.sc, warm)
			assert.Equal(t, c.sc.Wait, s.Wait)
		}
	}
}

// TestBuiltinSpecTLS: an https:// cell's spec carries the TLS client the
// generator was given, and the plan's Connection: close; without a TLS
// client, or on the event loops, it is refused before any child starts.
func TestBuiltinSpecTLS(t *testing.T) {
	pair, err := tlscert.Generate(t.TempDir(), tlscert.RSA2048)
	require.NoError(t, err)
	tl := load.TLS{CA: pair.Cert, Settings: tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}}
	p := smallPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Close = true
	cell := results.Cell{Topology: "standalone-tls", GOMAXPROCS: 1, Connections: 10, Load: results.LoadBuiltin, Rep: 1}
	const url = "https://127.0.0.1:8443/"
	gen, err := NewBuiltin(p, t.TempDir(), WithBin("/bin/topobench"), WithTLS(tl))
	require.NoError(t, err)
	g := gen.(*builtinGen)

	s, err := g.spec(cell, url, time.Second, false)
	require.NoError(t, err)
	b, err := specFile(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"target": "https://127.0.0.1:8443/", "seed": 1, "procs": 1, "json": true, "quiet": true,
		"connections": 10, "goroutines": true, "duration": "1s", "timeout": "2s", "close": true,
		"tls-ca": "`+pair.Cert+`", "tls-version": "1.2", "tls-key-type": "rsa2048", "tls-resume": true}`, string(b))
	back, err := load.ReadSpec(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, s, back, "what the child reads is what the sweep built")

	for _, tc := range []struct {
		name string
		edit func(g *builtinGen)
		want string
	}{
		{"no TLS client", func(g *builtinGen) { g.tls = load.TLS{} }, "given no TLS client"},
		{"event loops", func(g *builtinGen) { g.plan.EngineLoops = true }, "goroutines: an https:// target needs a goroutine per connection"},
		{"CA file gone", func(g *builtinGen) { g.tls.CA += ".gone" }, "tls-ca: reading the CA file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := *g
			tc.edit(&g)
			_, err := g.spec(cell, url, time.Second, false)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

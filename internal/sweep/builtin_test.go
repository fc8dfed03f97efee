package sweep

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

func TestBuiltinArgs(t *testing.T) {
	p := DefaultPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Duration, p.Warmup, p.Timeout, p.MaxConnections = 10*time.Second, 2*time.Second, 2*time.Second, 5000
	g := &builtinGen{plan: p, bin: "/bin/topobench", dir: "/tmp/r"}
	url := "http://127.0.0.1:8080/"
	cell := func(sc results.Schedule) Cell {
		return Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Schedule: sc, Rep: 1}
	}
	for _, tc := range []struct {
		name string
		c    Cell
		warm bool
		want string
	}{
		{"closed", cell(results.Schedule{}), false,
			"load -json -quiet -connections 100 -duration 10s -timeout 2s " + url},
		{"closed warmup", cell(results.Schedule{}), true,
			"load -json -quiet -connections 100 -duration 2s -timeout 2s " + url},
		{"open by count", cell(slowRequests), false,
			"load -json -quiet -rate 1000 -arrivals poisson -connections 100 -max-connections 5000 -requests 100000 -wait 1s -timeout 3s " + url},
		{"open warmup runs for the warmup", cell(slowRequests), true,
			"load -json -quiet -rate 1000 -arrivals poisson -connections 100 -max-connections 5000 -duration 2s -wait 1s -timeout 3s " + url},
		{"open by duration", cell(results.Schedule{Rate: 500}), false,
			"load -json -quiet -rate 500 -arrivals poisson -connections 100 -max-connections 5000 -duration 10s -timeout 2s " + url},
		{"probe", cell(concurrencyProbe), false,
			"load -json -quiet -probe 8000 -wait 10s " + url},
		{"probe warmup is closed loop without the wait", cell(concurrencyProbe), true,
			"load -json -quiet -connections 100 -duration 2s -timeout 2s " + url},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The sweep's URL carries ?wait=; the engine gets it as -wait.
			got := g.args(tc.c, withWait(url, tc.c.Wait), tc.warm)
			assert.Equal(t, tc.want, strings.Join(got, " "))
		})
	}
	assert.Equal(t, 60*time.Second, g.requestTimeout(cell(results.Schedule{Wait: 59 * time.Second})), "at most the engine's 60 s")
}

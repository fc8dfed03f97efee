package analysistest

import (
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

// TLSOptions shape TLSSweep.
type TLSOptions struct {
	// Close makes every request a handshake (-close).
	Close bool
	// Loads are the generators, wrk alone when empty; every one after
	// the first serves Faster times the first's rate (1 when zero).
	Loads  []results.Generator
	Faster float64
	// LoadBound names a topology whose every run's load generator used
	// 95% of its CPUs.
	LoadBound string
	// Plain adds standalone and nginx-http beside the TLS paths.
	Plain bool
	// TLS is the plan's settings; the defaults when nil.
	TLS *tlscert.Settings
}

// tlsCost is a path's nginx and server CPU µs a request (a handshake
// under -close), which sets its rate: 10⁶ ÷ their sum on one core.
var tlsCost = map[bool]map[string][2]float64{
	false: {"standalone": {0, 25}, "nginx-http": {36, 26}, "standalone-tls": {0, 32}, "nginx-tls-http": {44, 27}, "nginx-tls-http-unix": {40, 24}},
	true:  {"standalone": {0, 60}, "nginx-http": {70, 30}, "standalone-tls": {0, 400}, "nginx-tls-http": {420, 30}, "nginx-tls-http-unix": {410, 27}},
}

// TLSSweep is a fake rounds sweep of the TLS paths (standalone-tls,
// nginx-tls-http, nginx-tls-http-unix) at GOMAXPROCS=1 and 100
// connections, six rounds on pinned CPUs, whose rates follow the CPU
// per request of tlsCost (nginx + server µs, one core) but for a
// round-to-round wobble of ±1%, under each of the options' loads.
func TLSSweep(o TLSOptions) (results.Env, []results.Run) {
	tops := []string{"standalone-tls", "nginx-tls-http", "nginx-tls-http-unix"}
	if o.Plain {
		tops = append([]string{"standalone", "nginx-http"}, tops...)
	}
	settings := o.TLS
	if settings == nil {
		settings = &tlscert.Settings{}
	}
	t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	plan := results.Plan{Topologies: tops, GOMAXPROCS: []int{1}, Connections: []int{100}, Loads: o.Loads,
		Reps: 6, Duration: 10 * time.Second, Warmup: time.Second, Threads: 4, Timeout: 2 * time.Second,
		Close: o.Close, Isolation: results.IsolateNetns, PinLoad: "0", PinServer: "1", TLS: settings}
	env := results.Env{Command: []string{"topobench", "compare", "-design", "rounds", "-topologies", strings.Join(tops, ",")},
		Start: t0, End: t0.Add(20 * time.Minute), CPUModel: "AMD EPYC", CPUs: 2, Plan: plan}
	wobble := []float64{1, 1.01, 0.99, 1.005, 0.995, 1}
	var runs []results.Run
	for rep := 1; rep <= 6; rep++ {
		for li, load := range plan.LoadList() {
			for _, top := range tops {
				cost := tlsCost[o.Close][top]
				k := wobble[(rep+li)%6]
				if li > 0 && o.Faster > 0 {
					k *= o.Faster
				}
				rate := 1e6 / (cost[0] + cost[1]) * k
				n := int64(rate * 10)
				per := func(us float64) results.Usage {
					return results.Usage{User: us * float64(n) / 2e6, System: us * float64(n) / 2e6}
				}
				r := results.Run{
					Cell:    results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Load: load, Rep: rep},
					Start:   t0.Add(time.Duration(len(runs)) * 12 * time.Second),
					Wall:    10 * time.Second,
					Figures: &results.Figures{Requests: n, ReqPerSec: rate, Latency: true, P50: 2 * time.Millisecond, P99: 8 * time.Millisecond, Max: 20 * time.Millisecond},
					CPU:     &results.CPU{Load: per(20), Server: new(per(cost[1]))},
				}
				if cost[0] > 0 {
					r.CPU.Nginx = new(per(cost[0]))
				}
				if top == o.LoadBound {
					r.LoadShare = 0.95
				}
				runs = append(runs, r)
			}
		}
	}
	return env, runs
}

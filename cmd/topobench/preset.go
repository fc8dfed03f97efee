package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// preset is a sweep compare starts from: a scenario's plan and the
// design's settings, each a default the user's own flags change.
type preset struct {
	name     string
	scenario string        // plan.Scenario's plan
	design   string        // -design
	budget   time.Duration // -budget; 0 stops at the plan's -reps
	window   string        // -window; "" for a rounds design
	check    string        // -cross-check
	pools    bool          // the engine's kept pools: -load builtin, -upstream-keepalive auto
	latency  string        // -latency-rate; "" is off
}

// latencyRate is the preset's -latency-rate.
func (pr preset) latencyRate() string {
	if pr.latency == "" {
		return "off"
	}
	return pr.latency
}

// defaultPreset is what a bare compare runs: the duet on a budget.
const defaultPreset = "duet"

// presets are compare's named sweeps; each scenario of plan.Scenarios
// is one too, in rounds.
var presets = []preset{
	// The duet's windows: 3 s, and 6 s on net/http/fcgi's paths, whose
	// backend collects its garbage about every second (topobench windows).
	{name: "duet", scenario: "2013", design: "duet", budget: 12 * time.Minute, window: "3s,nginx-fcgi-tcp=6s,nginx-fcgi-unix=6s", pools: true, latency: "auto"},
	{name: "paired", scenario: "2013", design: "paired", budget: 15 * time.Minute, window: "2s", check: string(results.LoadWrk), pools: true},
	// make compare-tls's kept connections, beside tls-handshake's rounds.
	{name: "tls", scenario: "tls", design: "duet", budget: 5 * time.Minute, window: "3s", pools: true},
}

const presetHelp = "duet (the default: the engine's -c5000 pools of standalone and each topology loaded at once, in windows, at GOMAXPROCS 1 and 8, on a 12m budget), paired (their windows one after the other, 15m, and a wrk cross-check), 2013 (the faithful reproduction: wrk -t100 -c5000, 12 interleaved rounds of 15 s runs, about 75 minutes), 2009 (concurrency 30,100,1000,5000; req/s and p99), 2016 (open-loop target-rate scenarios and the concurrency probe), 2007 (-c1000 with Connection: close, standalone, go and the 2007 Java and Erlang servers), cost (handler work 0,50us,200us,1ms: what each path costs a service that does work), tls (the duet of standalone-tls, nginx-tls-http and nginx-tls-http-unix on kept connections at GOMAXPROCS 1, 5m), tls-handshake (the same paths in rounds, a new connection and so a handshake a request, -c100, GOMAXPROCS 1)"

// presetNamed is the preset of that name; "" is the default.
func presetNamed(name string) (preset, error) {
	if name == "" {
		name = defaultPreset
	}
	for _, p := range presets {
		if p.name == name {
			return p, nil
		}
	}
	if slices.Contains(plan.Scenarios(), name) {
		return preset{name: name, scenario: name, design: "rounds"}, nil
	}
	names := []string{}
	for _, p := range presets {
		names = append(names, p.name)
	}
	for _, sc := range plan.Scenarios() {
		if !slices.Contains(names, sc) {
			names = append(names, sc)
		}
	}
	return preset{}, fmt.Errorf("-preset: unknown preset %q (known: %s)", name, strings.Join(names, ", "))
}

// plan is the preset's plan before the flags; scale is -scale's.
func (pr preset) plan(scale float64) (plan.Plan, error) {
	p, err := plan.Scenario(pr.scenario, scale, runtime.NumCPU())
	if err != nil || !pr.pools {
		return p, err
	}
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.UpstreamKeepalive = []results.Keepalive{results.KeepaliveAuto}
	return p, nil
}

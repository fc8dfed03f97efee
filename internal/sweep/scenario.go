package sweep

import (
	"fmt"
	"math"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Scenarios lists the presets Scenario knows.
func Scenarios() []string { return []string{"2013", "2009", "2016", "2007"} }

// The 2016 study's scenarios (../shared/reference/seed-2016-jvm-scenarios.csv):
// a target rate with exponential inter-arrival times, a handler wait, and
// 100k requests each, after a probe of how many requests a server takes on
// at once.
var (
	slowRequests = results.Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second, Requests: 100000}
	highConc     = results.Schedule{Name: "realistic-high-concurrency", Rate: 10000, Wait: 100 * time.Millisecond, Requests: 100000}
	overhead     = results.Schedule{Name: "realistic-overhead", Rate: 100000, Requests: 100000}
	// The 2016 probe opened 54,000 requests; here the open-files limit
	// (20000 on small machines, and nginx holds two descriptors per
	// proxied request) bounds it to 8000, each asking for a 10 s wait:
	// long enough that a queued request shows as one that took longer.
	concurrencyProbe = results.Schedule{Name: "concurrency-level", Probe: true, Wait: 10 * time.Second, Requests: 8000}
)

// Scenario returns a preset plan: "2013" reproduces the nginx + Go
// benchmark (the default plan), "2009" the hello-world servers'
// concurrency sweep (30, 100, 1000 and 5000 connections, req/s and p99),
// "2016" the JVM study's target-rate scenarios and concurrency probe on the
// built-in open-loop engine, "2007" the thread-model test (ab -c1000 with
// short connections against Java thread-per-connection, a Java pool of 5
// threads, Erlang and Go, standalone, one processor). scale multiplies the request counts of the
// 2016 scenarios (0.1 runs a tenth of each, for quick runs); the rates
// and waits stay.
func Scenario(name string, scale float64, cpus int) (Plan, error) {
	if scale <= 0 || scale > 1 {
		return Plan{}, fmt.Errorf("-scale: %g, want more than 0 and at most 1", scale)
	}
	p := DefaultPlan()
	p.Scenario = name
	procs := []int{1}
	if cpus > 1 {
		procs = append(procs, cpus)
	}
	switch name {
	case "2013":
	case "2009":
		// ab in 2009: nginx's static file and hello module, Go; one core
		// ("1C") and all of them.
		p.Topologies = []string{topology.Standalone, "nginx-http", "nginx-return", "nginx-static"}
		p.Connections = []int{30, 100, 1000, 5000}
		p.GOMAXPROCS = procs
	case "2007":
		// ab -n 50000 -c 1000 on a Pentium 4 (one core): short
		// connections, standalone servers, and Go beside them.
		p.Targets = []string{results.TargetGo, "java-threads", "java-pool", "erlang"}
		p.Topologies = []string{topology.Standalone}
		p.Connections = []int{1000}
		p.GOMAXPROCS = []int{1}
		p.Close = true
	case "2016":
		p.Topologies = []string{topology.Standalone, "nginx-http", "nginx-fcgi-unix", "nginx-fcgi-fast-unix"}
		p.GOMAXPROCS = procs[len(procs)-1:] // the target had every CPU (2 vCPU)
		p.Loads = []results.Generator{results.LoadBuiltin}
		p.Connections = []int{100} // the engine opens more as the schedule needs
		p.MaxConnections = 5000
		p.Warmup = 2 * time.Second
		for _, sc := range []results.Schedule{concurrencyProbe, slowRequests, highConc, overhead} {
			sc.Requests = max(1, int(math.Round(float64(sc.Requests)*scale)))
			p.Schedules = append(p.Schedules, sc)
		}
	default:
		return Plan{}, fmt.Errorf("-scenario: unknown scenario %q (known: 2013, 2009, 2016, 2007)", name)
	}
	return p, nil
}

// Product is the schedules of every rate with every wait (closed loop when
// there are no rates, no wait when there are no waits).
func Product(rates []float64, waits []time.Duration) []results.Schedule {
	if len(rates) == 0 {
		rates = []float64{0}
	}
	if len(waits) == 0 {
		waits = []time.Duration{0}
	}
	var out []results.Schedule
	for _, r := range rates {
		for _, w := range waits {
			out = append(out, results.Schedule{Rate: r, Wait: w})
		}
	}
	return out
}

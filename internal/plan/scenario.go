package plan

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// tlsPaths are the tls scenarios' topologies: Go's own TLS, and nginx
// terminating it before Go over TCP and over a unix socket.
var tlsPaths = []string{topology.StandaloneTLS, "nginx-tls-http", "nginx-tls-http-unix"}

// Scenarios lists the presets Scenario knows.
func Scenarios() []string {
	return []string{"2013", "2009", "2016", "2007", "cost", "tls", "tls-handshake"}
}

// The cost scenario's handler work per request and open-loop load: half
// of the capacity each block measured closed loop.
var (
	costWork     = []time.Duration{0, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond}
	costFraction = 0.5
)

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
// threads, Erlang and Go, standalone, one processor), "cost" what each
// path costs a handler that does work (-work 0,50us,200us,1ms, closed
// loop, then open loop at half the measured capacity), "tls" the paths over
// TLS on kept connections (the 2013 load), "tls-handshake" the same paths
// with a new connection, so a handshake, a request. scale multiplies the request counts of the
// 2016 scenarios (0.1 runs a tenth of each, for quick runs); the rates
// and waits stay.
func Scenario(name string, scale float64, cpus int) (Plan, error) {
	if scale <= 0 || scale > 1 {
		return Plan{}, Errorf(Scale, "%g, want more than 0 and at most 1", scale)
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
	case "cost":
		// What each path costs a service that does work: the handler
		// spends 0 to 1 ms of CPU per request; closed loop at a moderate
		// concurrency for the rates, then open loop at half the least
		// capacity of the block's paths, so latency compares at one load.
		p.Topologies = []string{topology.Standalone, "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-fcgi-fast-unix"}
		p.GOMAXPROCS = procs
		p.Loads = []results.Generator{results.LoadBuiltin}
		p.Connections = []int{100}
		p.Reps = 6
		p.Duration = 10 * time.Second
		p.Warmup = 2 * time.Second
		p.Schedules = CostSchedules(costWork)
	case "tls":
		// The servers share one CPU here: one GOMAXPROCS leaves the
		// budget's pairs to three ratios.
		p.Topologies = slices.Clone(tlsPaths)
		p.GOMAXPROCS = []int{1}
	case "tls-handshake":
		// A handshake costs the client about what it costs the server:
		// a hundred connections at a time keep the load's CPU from
		// being the limit sooner than thousands would.
		p.Topologies = slices.Clone(tlsPaths)
		p.Close = true
		p.GOMAXPROCS = []int{1}
		p.Loads = []results.Generator{results.LoadBuiltin}
		p.Connections = []int{100}
		p.Reps = 6 // the fewest an interval of a median takes
		p.Duration = 4 * time.Second
		p.Warmup = time.Second
	default:
		return Plan{}, Errorf(Preset, "unknown preset %q (known: %s)", name, strings.Join(Scenarios(), ", "))
	}
	return p, nil
}

// CostSchedules are the cost scenario's schedules for these handler works:
// closed loop, and open loop at half the capacity measured closed loop.
func CostSchedules(works []time.Duration) []results.Schedule {
	var out []results.Schedule
	for _, w := range works {
		out = append(out, results.Schedule{Work: w}, results.Schedule{Work: w, Fraction: costFraction})
	}
	return out
}

// Product is the schedules of every rate with every wait and every
// handler work (closed loop when there are no rates, no wait or work when
// there are none).
func Product(rates []float64, waits, works []time.Duration) []results.Schedule {
	if len(rates) == 0 {
		rates = []float64{0}
	}
	if len(waits) == 0 {
		waits = []time.Duration{0}
	}
	if len(works) == 0 {
		works = []time.Duration{0}
	}
	var out []results.Schedule
	for _, r := range rates {
		for _, w := range waits {
			for _, k := range works {
				out = append(out, results.Schedule{Rate: r, Wait: w, Work: k})
			}
		}
	}
	return out
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// planFlags are compare's flags that set the plan: each one given
// applies itself to the scenario's preset, in the order given, and
// -rate, -wait and -work make its schedules.
type planFlags struct {
	apply             []func(p *plan.Plan) error
	rates             []float64
	waits, works      []time.Duration
	cpusSet, cpusAuto bool // -cpus was given; it is (or stays) auto
}

// planFlagSet declares plan flags on fs, each applying itself to the
// preset's plan when given.
type planFlagSet struct {
	fs *flag.FlagSet
	f  *planFlags
}

// flag declares a plan flag whose default is value.
func (d planFlagSet) flag(name, value, usage string, set func(p *plan.Plan, v string) error) {
	d.fs.Func(name, usage+" (default "+value+")", func(v string) error {
		d.f.apply = append(d.f.apply, func(p *plan.Plan) error {
			if err := set(p, v); err != nil {
				return fmt.Errorf("-%s: %w", name, err)
			}
			return nil
		})
		return nil
	})
}

// boolean is a plan flag that may stand alone: -X is -X=true.
func (d planFlagSet) boolean(name, usage string, set func(p *plan.Plan, v bool)) {
	d.fs.BoolFunc(name, usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		d.f.apply = append(d.f.apply, func(p *plan.Plan) error { set(p, b); return nil })
		return nil
	})
}

// addPlanFlags declares the plan's flags on fs with the defaults of def,
// the preset's plan (budgeted: the preset stops on a budget, not at its
// -reps); allowed are the CPUs -cpus may divide.
func addPlanFlags(fs *flag.FlagSet, allowed cpuset.CPUSet, def plan.Plan, budgeted bool) *planFlags {
	f := &planFlags{cpusAuto: true}
	d := planFlagSet{fs, f}
	addWhatFlags(d, def)
	addLoadFlags(d, def, budgeted)
	addWhereFlags(d, allowed)
	return f
}

// addWhatFlags declares the flags of what the plan measures.
func addWhatFlags(d planFlagSet, def plan.Plan) {
	planFlag, f := d.flag, d.f
	planFlag("targets", strings.Join(def.Targets, ","), "comma-separated servers to measure, or all (known: "+strings.Join(plan.KnownTargets(), ", ")+", or cmd:'PATH ARGS' for your own HTTP server, with {addr} or {unix} where it listens); targets other than go serve only standalone and nginx-http (and nginx-http-unix for a command with {unix})", func(p *plan.Plan, v string) (err error) {
		p.Targets, err = plan.ParseTargets(v)
		return err
	})
	planFlag("path", def.RequestPath(), "request path (and query) the load and the parity check ask for, e.g. /api/x for your own service", func(p *plan.Plan, v string) error {
		p.Path = v
		return nil
	})
	planFlag("topologies", strings.Join(def.Topologies, ","), "comma-separated topologies to measure (known: "+strings.Join(topology.Names(), ", ")+")", func(p *plan.Plan, v string) error {
		p.Topologies = plan.ParseList(v)
		return nil
	})
	planFlag("gomaxprocs", joinList(def.GOMAXPROCS), "comma-separated GOMAXPROCS values; the servers restart for each", func(p *plan.Plan, v string) (err error) {
		p.GOMAXPROCS, err = plan.ParseInts(v)
		return err
	})
	planFlag("connections", joinList(def.Connections), "comma-separated open connections (wrk -c), each a multiple of the threads", func(p *plan.Plan, v string) (err error) {
		p.Connections, err = plan.ParseInts(v)
		return err
	})
	planFlag("load", joinList(def.LoadList()), "comma-separated load generators: wrk (closed loop), builtin (topobench's engine, closed or open loop), h2load (nghttp2's, closed loop: HTTP/1.1, or HTTP/2 over TLS with -streams), s_time (OpenSSL's, a handshake a request: TLS topologies, -close, rounds; each connection a process, at most 64)", func(p *plan.Plan, v string) error {
		p.Loads = nil
		for _, l := range plan.ParseList(v) {
			p.Loads = append(p.Loads, results.Generator(l))
		}
		return nil
	})
	planFlag("upstream-keepalive", joinList(def.KeepaliveList()), "comma-separated nginx upstream keepalive pools, each a count of idle connections per worker or auto (as many as the most -connections: a warm nginx opens about none, one per 1,000 requests a connection carries at most, its upstream keepalive_requests), e.g. 300,auto; nginx restarts for each", func(p *plan.Plan, v string) (err error) {
		p.UpstreamKeepalive, err = plan.ParseKeepalives(v)
		return err
	})
	planFlag("rate", "closed loop", "comma-separated open-loop target rates in requests/s (needs -load builtin)", func(p *plan.Plan, v string) error {
		for _, x := range plan.ParseList(v) {
			r, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return fmt.Errorf("%q is not a rate", x)
			}
			f.rates = append(f.rates, r)
		}
		return nil
	})
	planFlag("wait", "none", "comma-separated handler waits each request asks for (?wait=), e.g. 100ms,1s", func(p *plan.Plan, v string) error {
		ds, err := parseDurations(v)
		f.waits = append(f.waits, ds...)
		return err
	})
	planFlag("work", "none", "comma-separated CPU time the handler spends on each request before it answers (cmd/hello's ?work=), e.g. 0,50us,200us,1ms: what each path costs a service that does work", func(p *plan.Plan, v string) error {
		ds, err := parseDurations(v)
		f.works = append(f.works, ds...)
		return err
	})
}

// addLoadFlags declares the flags of the load and of how long it runs.
func addLoadFlags(d planFlagSet, def plan.Plan, budgeted bool) {
	planFlag := d.flag
	planFlag("max-connections", "the connections", "open loop: connections the built-in engine may open when none is free", func(p *plan.Plan, v string) (err error) {
		p.MaxConnections, err = strconv.Atoi(v)
		return err
	})
	planFlag("threads", strconv.Itoa(def.Threads), "wrk -t: load generator threads (at most the connections)", func(p *plan.Plan, v string) (err error) {
		p.Threads, err = strconv.Atoi(v)
		return err
	})
	planFlag("streams", "none: HTTP/1.1, one request at a time a connection", "h2load: speak HTTP/2 with this many concurrent streams a connection (h2load -m); TLS topologies only", func(p *plan.Plan, v string) (err error) {
		if p.Streams, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("%q is not a count of streams", v)
		}
		return nil
	})
	planFlag("engine", "goroutines", "the built-in engine's closed loop: goroutines (one per connection, on Go's poller) or loops (-threads event loops in wrk's shape, each on its own OS thread)", func(p *plan.Plan, v string) error {
		switch v {
		case "goroutines":
			p.EngineLoops = false
		case "loops":
			p.EngineLoops = true
		default:
			return fmt.Errorf("%q, want goroutines or loops", v)
		}
		return nil
	})
	planFlag("duration", def.Duration.String(), "measured time per cell, whole seconds", func(p *plan.Plan, v string) (err error) {
		p.Duration, err = time.ParseDuration(v)
		return err
	})
	reps := strconv.Itoa(def.Reps)
	if budgeted {
		reps = "none: the preset stops by -budget; " + reps + " with -preset 2013"
	}
	planFlag("reps", reps, "a fixed count instead of -budget: rounds of every cell, interleaved, under -design rounds; pairs of windows each topology gets beside standalone under paired and duet", func(p *plan.Plan, v string) (err error) {
		if strings.HasPrefix(v, "auto") {
			return errors.New("auto: removed; -budget D -precision P adds runs until every ratio is within P")
		}
		if p.Reps, err = strconv.Atoi(v); err != nil {
			return fmt.Errorf("%q is not a count", v)
		}
		p.RepsAuto = nil
		return nil
	})
	planFlag("warmup", def.Warmup.String(), "unrecorded load before each cell, whole seconds (0 disables)", func(p *plan.Plan, v string) (err error) {
		p.Warmup, err = time.ParseDuration(v)
		return err
	})
	planFlag("timeout", def.Timeout.String(), "request timeout (wrk --timeout): a slower response counts as a timeout error", func(p *plan.Plan, v string) (err error) {
		p.Timeout, err = time.ParseDuration(v)
		return err
	})
	addTLSFlags(d)
	planFlag("close", "false (true with -preset 2007)", "send Connection: close with every request: one request per connection, as ab without -k", func(p *plan.Plan, v string) (err error) {
		p.Close, err = strconv.ParseBool(v)
		return err
	})
}

// addTLSFlags declares the flags of the TLS the topologies over TLS
// (standalone-tls, nginx-tls-http...) speak, both servers alike.
func addTLSFlags(d planFlagSet) {
	planFlag := d.flag
	planFlag("tls-key", "p256", "the TLS topologies' certificate key: p256 (ECDSA) or rsa2048, a new one each sweep", func(p *plan.Plan, v string) error {
		k, err := tlscert.ParseKey(v)
		p.SetTLS(func(s *tlscert.Settings) { s.Key = k })
		return err
	})
	planFlag("tls-version", "1.3", "the TLS topologies' one protocol version: 1.3 or 1.2", func(p *plan.Plan, v string) error {
		ver, err := tlscert.ParseVersion(v)
		p.SetTLS(func(s *tlscert.Settings) { s.Version = ver })
		return err
	})
	planFlag("tls-resume", "off", "the TLS topologies' session resumption: on or off (with -close on, a handshake a request resumes; off, each is a full handshake)", func(p *plan.Plan, v string) (err error) {
		var r bool
		r, err = plan.ParseTLSResume(v)
		p.SetTLS(func(s *tlscert.Settings) { s.Resume = r })
		return err
	})
}

// addWhereFlags declares the flags of where the servers and the load run.
func addWhereFlags(d planFlagSet, allowed cpuset.CPUSet) {
	planFlag, planBool, f := d.flag, d.boolean, d.f
	planBool("speed-probe", "run a speed probe on every CPU (topobench speed: 1 ms of each 100 ms at real-time priority) and record the speed each run's CPUs ran at, with how the rates followed it: a virtual machine's host moves it; needs root", func(p *plan.Plan, v bool) {
		p.SpeedProbe = v
	})
	planFlag("isolate", "netns as root with ip, else none", "netns: servers and load generator in two network namespaces joined by a veth; none: both on the harness's loopback (the 2013 setup)", func(p *plan.Plan, v string) error {
		p.Isolation = v
		return nil
	})
	planFlag("link-delay", "0", "with -isolate netns: one-way delay tc netem adds on each end of the veth, e.g. 100us for a LAN (needs a kernel with sch_netem)", func(p *plan.Plan, v string) (err error) {
		p.LinkDelay, err = time.ParseDuration(v)
		return err
	})
	planFlag("cpus", "auto", "CPU sets: auto (a short calibration of standalone and nginx-return chooses how many CPUs the load generator needs, the servers get the rest), first (load generator on the first CPU, servers on the rest), none (shared), or LOAD/SERVER lists such as 0/1-3", func(p *plan.Plan, v string) (err error) {
		f.cpusSet, f.cpusAuto = true, v == "auto"
		p.PinLoad, p.PinServer, err = plan.ParseCPUs(v, allowed)
		return err
	})
	planFlag("pin-load", "unpinned", "CPU list for the load generator, e.g. 0", func(p *plan.Plan, v string) error {
		p.PinLoad = v
		return nil
	})
	planFlag("pin-server", "unpinned", "CPU list for the servers, e.g. 1", func(p *plan.Plan, v string) error {
		p.PinServer = v
		return nil
	})
}

// parseDurations reads a comma-separated list of durations.
func parseDurations(v string) ([]time.Duration, error) {
	var ds []time.Duration
	for _, x := range plan.ParseList(v) {
		d, err := time.ParseDuration(x)
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration", x)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

// applyTo applies the flags given to p.
func (f *planFlags) applyTo(p *plan.Plan) error {
	for _, a := range f.apply {
		if err := a(p); err != nil {
			return err
		}
	}
	p.DefaultTLS()
	return nil
}

// schedules sets p's schedules from -rate, -wait and -work, where given:
// -work alone picks the cost scenario's works.
func (f *planFlags) schedules(p *plan.Plan) {
	switch {
	case p.Scenario == "cost" && f.works != nil && f.rates == nil && f.waits == nil:
		p.Schedules = plan.CostSchedules(f.works)
	case f.rates != nil || f.waits != nil || f.works != nil:
		p.Schedules = plan.Product(f.rates, f.waits, f.works)
	}
}

package plan

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// Resolved is what a plan's names and lists stand for, looked up and
// parsed once, when the plan is checked (Plan.Check): after that the
// sweep passes these values down and nothing looks a topology up or parses
// a CPU list again. The plan itself stays as env.json records it.
type Resolved struct {
	// Tops are the plan's topologies in its order.
	Tops []topology.Topology
	// LoadCPUs and ServerCPUs are the plan's PinLoad and PinServer; the
	// empty set leaves that side unpinned.
	LoadCPUs, ServerCPUs cpuset.CPUSet
	byName               map[string]topology.Topology
}

// Topology is the plan's topology of that name (a cell's); the zero
// Topology for a name the plan does not have.
func (r Resolved) Topology(name string) topology.Topology { return r.byName[name] }

// Knowing is r whose Topology also knows tops, for cells the plan does not
// measure (a calibration's); Tops stay the plan's.
func (r Resolved) Knowing(tops ...topology.Topology) Resolved {
	byName := maps.Clone(r.byName)
	if byName == nil {
		byName = map[string]topology.Topology{}
	}
	for _, t := range tops {
		byName[t.Name] = t
	}
	r.byName = byName
	return r
}

// TopologiesOf lists, in plan order, the topologies the cells measure.
func (r Resolved) TopologiesOf(cells []results.Cell) []topology.Topology {
	in := map[string]bool{}
	for _, c := range cells {
		in[c.Topology] = true
	}
	var out []topology.Topology
	for _, t := range r.Tops {
		if in[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// Check is the one place the plan's rules are checked, those of where it
// runs (w) among them; it returns what the plan's names stand for, or the
// first rule broken as a *FieldError.
func (p Plan) Check(w Where) (r Resolved, err error) {
	for _, check := range []func() error{p.checkTargetList, p.checkRunning, p.checkLoads, p.checkShape} {
		if err := check(); err != nil {
			return r, err
		}
	}
	if r.Tops, err = topology.LookupAll(p.Topologies); err != nil {
		return r, &FieldError{Field: Topologies, Err: err}
	}
	r.byName = map[string]topology.Topology{}
	for _, t := range r.Tops {
		r.byName[t.Name] = t
	}
	for _, check := range []func([]topology.Topology) error{p.checkTLS, p.checkStime, p.checkStreams, p.checkKeepalives, p.checkServed, p.checkPaired} {
		if err := check(r.Tops); err != nil {
			return r, err
		}
	}
	if err := p.resolveCPUs(&r); err != nil {
		return r, err
	}
	if err := p.checkIsolation(); err != nil {
		return r, err
	}
	return r, p.checkWhere(w, r.Tops)
}

// Validate reports the first rule the plan breaks where it runs.
func (p Plan) Validate(w Where) error {
	_, err := p.Check(w)
	return err
}

// checkTargetList checks the targets and what they are asked to do.
func (p Plan) checkTargetList() error {
	files := map[string]string{}
	for _, t := range p.TargetList() {
		if target.IsOwn(t) {
			if _, err := target.Lookup(t); err != nil {
				return &FieldError{Field: Targets, Err: err}
			}
		} else if !slices.Contains(KnownTargets(), t) {
			return Errorf(Targets, "unknown target %q (known: %s, %s'PATH ARGS' for your own server, or %sIP:PORT for one already running)", t, strings.Join(KnownTargets(), ", "), target.CommandPrefix, target.RunningPrefix)
		}
		// Two commands of one program would share their records' names.
		f := results.TargetFile(t)
		if other, ok := files[f]; ok && other != t {
			return Errorf(Targets, "%q and %q would both be named %s in the results; measure them in two runs", other, t, f)
		}
		files[f] = t
	}
	if err := unique(Targets, p.TargetList()); err != nil {
		return err
	}
	if path := p.RequestPath(); path[0] != '/' || strings.ContainsAny(path, " \t\r\n#") {
		return Errorf(Path, "%q, want /PATH (a query may follow; no spaces or #)", p.Path)
	}
	if slices.ContainsFunc(p.TargetList(), target.IsOwn) && slices.ContainsFunc(p.Schedules, func(sc results.Schedule) bool { return sc.Wait > 0 || sc.Probe }) {
		return Errorf(Wait, "a command or running target does not take cmd/hello's handler wait (?wait=), nor the probe that needs it")
	}
	if slices.ContainsFunc(p.Schedules, func(sc results.Schedule) bool { return sc.Work > 0 }) {
		for _, t := range p.TargetList() {
			if !target.SupportsWork(t) {
				return Errorf(Work, "%s does not take handler work (?work=); cmd/hello does", t)
			}
		}
	}
	return nil
}

// knownLoads lists the load generators for an error's text.
func knownLoads() string {
	var names []string
	for _, g := range results.Generators() {
		names = append(names, string(g))
	}
	return strings.Join(names, ", ")
}

// MaxStreams bounds -streams: more than a server's usual limit of
// concurrent streams (Go's 250, nginx's 128) by far, so a typo.
const MaxStreams = 1024

// checkStreams checks h2load's HTTP/2 streams a connection: they need
// h2load, and TLS topologies only, as HTTP/2 is negotiated by ALPN and
// neither cmd/hello nor nginx serves it in the clear here.
func (p Plan) checkStreams(tops []topology.Topology) error {
	switch {
	case p.Streams == 0:
		return nil
	case p.Streams < 0 || p.Streams > MaxStreams:
		return Errorf(Streams, "%d, want 1 to %d HTTP/2 streams a connection", p.Streams, MaxStreams)
	case !slices.Contains(p.Generators(), results.LoadH2load):
		return Errorf(Streams, "applies to -load h2load (HTTP/2 streams a connection)")
	}
	for _, t := range tops {
		if !t.TLS {
			return Errorf(Streams, "%s is plain HTTP, which h2load loads over HTTP/1.1; HTTP/2 needs TLS topologies only (or drop -streams)", t.Name)
		}
	}
	return nil
}

// checkServed refuses a target that serves none of the plan's topologies.
func (p Plan) checkServed(tops []topology.Topology) error {
	for _, name := range p.TargetList() {
		if name == results.TargetGo {
			continue
		}
		t, err := target.Lookup(name)
		if err != nil {
			return &FieldError{Field: Targets, Err: err}
		}
		if !slices.ContainsFunc(tops, func(top topology.Topology) bool { return top.Backend != topology.NoBackend && t.Serves(top.Backend) }) {
			return Errorf(Targets, "%s serves only %s; -topologies names none of them", name, strings.Join(servedBy(t), ", "))
		}
	}
	return nil
}

// servedBy lists the topologies whose backend t can stand behind.
func servedBy(t target.Target) []string {
	var names []string
	for _, top := range topology.All() {
		if top.Backend != topology.NoBackend && t.Serves(top.Backend) {
			names = append(names, top.Name)
		}
	}
	return names
}

// checkLoads checks the processor values, the connections, the load
// generators and the schedules they send.
func (p Plan) checkLoads() error {
	if err := positive(GOMAXPROCS, p.GOMAXPROCS); err != nil {
		return err
	}
	if g := slices.Max(p.GOMAXPROCS); g > MaxGOMAXPROCS {
		return Errorf(GOMAXPROCS, "%d, want at most %d", g, MaxGOMAXPROCS)
	}
	if err := positive(Connections, p.Connections); err != nil {
		return err
	}
	for _, l := range p.LoadList() {
		if !slices.Contains(results.Generators(), l) {
			return Errorf(Load, "unknown load generator %q (known: %s)", l, knownLoads())
		}
	}
	if err := unique(Load, p.LoadList()); err != nil {
		return err
	}
	for _, sc := range p.Schedules {
		if err := p.checkSchedule(sc); err != nil {
			return err
		}
	}
	if p.MaxConnections < 0 {
		return Errorf(MaxConnections, "%d is negative", p.MaxConnections)
	}
	return nil
}

// checkSchedule checks one schedule's rate, wait, work and bounds.
func (p Plan) checkSchedule(sc results.Schedule) error {
	switch {
	case sc.Rate < 0:
		return Errorf(Rate, "%g is not a positive rate", sc.Rate)
	case sc.Wait < 0:
		return Errorf(Wait, "%s is negative", sc.Wait)
	case sc.Wait > MaxWait:
		return Errorf(Wait, "%s is more than cmd/hello waits (%s)", sc.Wait, MaxWait)
	case sc.Work < 0:
		return Errorf(Work, "%s is negative", sc.Work)
	case sc.Work > hello.MaxWork:
		return Errorf(Work, "%s is more than cmd/hello works (%s)", sc.Work, hello.MaxWork)
	case sc.Requests < 0:
		return Errorf(Requests, "%d is negative", sc.Requests)
	case sc.Fraction < 0 || sc.Fraction > 1:
		return Errorf(Fraction, "a fraction of capacity of %g, want more than 0 and at most 1", sc.Fraction)
	case (sc.OpenLoop() || sc.Probe) && !slices.Contains(p.LoadList(), results.LoadBuiltin):
		return Errorf(Rate, "an open-loop rate or a probe needs -load builtin (wrk is closed loop)")
	}
	return nil
}

// checkShape checks each cell's run: its repetitions, length, warmup,
// threads and timeout.
func (p Plan) checkShape() error {
	switch {
	case p.Reps < 1:
		return Errorf(Reps, "%d, want at least 1", p.Reps)
	case p.Duration < time.Second:
		return Errorf(Duration, "%s, want at least 1s (wrk measures in whole seconds)", p.Duration)
	case p.Duration%time.Second != 0:
		return Errorf(Duration, "%s, want whole seconds (wrk measures in whole seconds)", p.Duration)
	case p.Duration > MaxDuration:
		return Errorf(Duration, "%s, want at most %s a cell (more -reps measure longer)", p.Duration, MaxDuration)
	case p.Warmup < 0:
		return Errorf(Warmup, "%s is negative", p.Warmup)
	case p.Warmup%time.Second != 0:
		return Errorf(Warmup, "%s, want whole seconds", p.Warmup)
	case p.Warmup > MaxDuration:
		return Errorf(Warmup, "%s, want at most %s", p.Warmup, MaxDuration)
	case p.Threads < 1:
		return Errorf(Threads, "%d, want at least 1", p.Threads)
	case p.Timeout < time.Second || p.Timeout%time.Second != 0:
		return Errorf(Timeout, "%s, want whole seconds, at least 1s (wrk reads whole seconds)", p.Timeout)
	}
	if slices.Contains(p.LoadList(), results.LoadWrk) {
		for _, c := range p.Connections {
			if err := p.checkThreads(c); err != nil {
				return err
			}
		}
	}
	if a := p.RepsAuto; a != nil && p.Paired == nil {
		switch {
		case a.Max < p.Reps:
			return Errorf(Reps, "auto:%d is fewer than the %d first rounds", a.Max, p.Reps)
		case !(a.Within > 0 && a.Within < 1):
			return Errorf(Reps, "auto bound ±%g is not a fraction between 0 and 1", a.Within)
		}
	}
	return nil
}

// checkThreads refuses c connections that wrk's threads cannot share.
func (p Plan) checkThreads(c int) error {
	if t := p.ThreadsFor(c); c%t != 0 {
		return Errorf(Connections, "%d is not a multiple of -threads %d (wrk gives each thread connections/threads and would open fewer)", c, t)
	}
	return nil
}

// checkKeepalives checks the plan's upstream keepalive pools.
func (p Plan) checkKeepalives(tops []topology.Topology) error {
	for _, k := range p.UpstreamKeepalive {
		if k != results.KeepaliveAuto && k < 1 {
			return Errorf(Keepalive, "%d, want auto or a positive number of connections", int(k))
		}
	}
	if err := unique(Keepalive, p.UpstreamKeepalive); err != nil {
		return err
	}
	if len(p.UpstreamKeepalive) > 1 && !slices.ContainsFunc(tops, func(t topology.Topology) bool { return t.ViaNginx() && t.Backend != topology.NoBackend }) {
		return Errorf(Keepalive, "%d pools, and no topology of the plan goes through nginx to a server (nginx-http, nginx-fcgi-tcp...)", len(p.UpstreamKeepalive))
	}
	return nil
}

// resolveCPUs reads the pinned CPU lists into r.
func (p Plan) resolveCPUs(r *Resolved) error {
	for _, f := range []struct {
		field Field
		list  string
		set   *cpuset.CPUSet
	}{{PinLoad, p.PinLoad, &r.LoadCPUs}, {PinServer, p.PinServer, &r.ServerCPUs}} {
		if f.list == "" {
			continue
		}
		var err error
		if *f.set, err = cpuset.Parse(f.list); err != nil {
			return &FieldError{Field: f.field, Err: err}
		}
	}
	return nil
}

// checkIsolation checks -isolate and the link's delay.
func (p Plan) checkIsolation() error {
	switch p.Isolation {
	case "", results.IsolateNetns, results.IsolateNone:
	default:
		return Errorf(Isolate, "%q, want netns or none", p.Isolation)
	}
	switch {
	case p.LinkDelay < 0:
		return Errorf(LinkDelay, "%s, want zero or more", p.LinkDelay)
	case p.LinkDelay%time.Microsecond != 0:
		return Errorf(LinkDelay, "%s, want whole microseconds (tc's resolution)", p.LinkDelay)
	}
	return nil
}

// CheckCPUs checks the plan's CPU lists against the CPUs the harness may
// run on (cpuset.Allowed, the machine's): taskset refuses a CPU the
// machine lacks only when the pinned program starts, and then every cell
// fails alike.
func (r Resolved) CheckCPUs(allowed cpuset.CPUSet) error {
	for _, f := range []struct {
		field Field
		set   cpuset.CPUSet
	}{{PinLoad, r.LoadCPUs}, {PinServer, r.ServerCPUs}} {
		if err := f.set.Within(allowed); err != nil {
			return &FieldError{Field: f.field, Err: err}
		}
	}
	return nil
}

func positive(f Field, vs []int) error {
	if len(vs) == 0 {
		return Errorf(f, "no values")
	}
	for _, v := range vs {
		if v < 1 {
			return Errorf(f, "%d is not a positive number", v)
		}
	}
	return unique(f, vs)
}

func unique[T comparable](f Field, vs []T) error {
	seen := map[T]bool{}
	for _, v := range vs {
		if seen[v] {
			return Errorf(f, "%v listed twice", v)
		}
		seen[v] = true
	}
	return nil
}

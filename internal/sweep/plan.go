package sweep

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// Plan is what a sweep measures: the plan recorded in env.json, with the
// rules and the order of the sweep attached.
type Plan struct{ results.Plan }

// Cell is one measurement of the plan.
type Cell = results.Cell

// Block is the cells that share one start of the servers.
type Block = results.Block

// DefaultPlan is the 2013 reference run's load (wrk -t100 -c5000,
// GOMAXPROCS 1 and 8) over every topology as interleaved repetitions
// (2013 ran one run a cell): fewer runs, or shorter ones, left two
// back-to-back sweeps too far apart on some ratios.
// For a shorter look: -reps 6 (the fewest that give a median a 95%
// interval, benchmath) or make compare-quick.
func DefaultPlan() Plan {
	return Plan{results.Plan{
		Targets:     []string{results.TargetGo},
		Topologies:  topology.Names(),
		GOMAXPROCS:  []int{1, 8},
		Connections: []int{5000},
		Loads:       []results.Generator{results.LoadWrk},
		Reps:        12,
		Duration:    15 * time.Second,
		Warmup:      3 * time.Second,
		Threads:     100,
		Timeout:     2 * time.Second,
	}}
}

// Resolved is what a plan's names and lists stand for, looked up and
// parsed once, when the plan is validated (Plan.Resolve): after that the
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

// TopologiesOf lists, in plan order, the topologies the cells measure.
func (r Resolved) TopologiesOf(cells []Cell) []topology.Topology {
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

// Validate reports the first thing wrong with the plan, naming the flag.
func (p Plan) Validate() error {
	_, err := p.Resolve()
	return err
}

// Resolve validates the plan (the error names the flag) and looks it up.
func (p Plan) Resolve() (Resolved, error) {
	r, err := p.resolve()
	if err != nil {
		return Resolved{}, err
	}
	return r, nil
}

func (p Plan) resolve() (r Resolved, err error) {
	for _, check := range []func() error{p.checkTargetList, p.checkLoads, p.checkShape} {
		if err := check(); err != nil {
			return r, err
		}
	}
	if r.Tops, err = topology.LookupAll(p.Topologies); err != nil {
		return r, fmt.Errorf("-topologies: %w", err)
	}
	if err := p.checkKeepalives(r.Tops); err != nil {
		return r, err
	}
	r.byName = map[string]topology.Topology{}
	for _, t := range r.Tops {
		r.byName[t.Name] = t
	}
	if err := p.checkPaired(); err != nil {
		return r, err
	}
	if err := p.resolveWhere(&r); err != nil {
		return r, err
	}
	return r, nil
}

// checkTargetList checks the targets and what they are asked to do.
func (p Plan) checkTargetList() error {
	files := map[string]string{}
	for _, t := range p.TargetList() {
		if target.IsCommand(t) {
			if _, err := target.Lookup(t); err != nil {
				return fmt.Errorf("-targets: %w", err)
			}
		} else if !slices.Contains(Targets(), t) {
			return fmt.Errorf("-targets: unknown target %q (known: %s, or %s'PATH ARGS' for your own server)", t, strings.Join(Targets(), ", "), target.CommandPrefix)
		}
		// Two commands of one program would share their records' names.
		f := results.TargetFile(t)
		if other, ok := files[f]; ok && other != t {
			return fmt.Errorf("-targets: %q and %q would both be named %s in the results; measure them in two runs", other, t, f)
		}
		files[f] = t
	}
	if err := unique("-targets", p.TargetList()); err != nil {
		return err
	}
	if path := p.RequestPath(); path[0] != '/' || strings.ContainsAny(path, " \t\r\n#") {
		return fmt.Errorf("-path: %q, want /PATH (a query may follow; no spaces or #)", p.Path)
	}
	if slices.ContainsFunc(p.TargetList(), target.IsCommand) && slices.ContainsFunc(p.Schedules, func(sc results.Schedule) bool { return sc.Wait > 0 || sc.Probe }) {
		return errors.New("-wait: a command target does not take cmd/hello's handler wait (?wait=), nor the probe that needs it")
	}
	if slices.ContainsFunc(p.Schedules, func(sc results.Schedule) bool { return sc.Work > 0 }) {
		for _, t := range p.TargetList() {
			if !target.SupportsWork(t) {
				return fmt.Errorf("-work: %s does not take handler work (?work=); cmd/hello does", t)
			}
		}
	}
	if err := checkTargets(p.TargetList()); err != nil {
		return err
	}
	return nil
}

// checkLoads checks the processor values, the connections, the load
// generators and the schedules they send.
func (p Plan) checkLoads() error {
	if err := positive("-gomaxprocs", p.GOMAXPROCS); err != nil {
		return err
	}
	if g := slices.Max(p.GOMAXPROCS); g > MaxGOMAXPROCS {
		return fmt.Errorf("-gomaxprocs: %d, want at most %d", g, MaxGOMAXPROCS)
	}
	if err := positive("-connections", p.Connections); err != nil {
		return err
	}
	for _, l := range p.LoadList() {
		if !slices.Contains(results.Generators(), l) {
			return fmt.Errorf("-load: unknown load generator %q (known: wrk, builtin)", l)
		}
	}
	if err := unique("-load", p.LoadList()); err != nil {
		return err
	}
	for _, sc := range p.Schedules {
		switch {
		case sc.Rate < 0:
			return fmt.Errorf("-rate: %g is not a positive rate", sc.Rate)
		case sc.Wait < 0:
			return fmt.Errorf("-wait: %s is negative", sc.Wait)
		case sc.Wait > MaxWait:
			return fmt.Errorf("-wait: %s is more than cmd/hello waits (%s)", sc.Wait, MaxWait)
		case sc.Work < 0:
			return fmt.Errorf("-work: %s is negative", sc.Work)
		case sc.Work > hello.MaxWork:
			return fmt.Errorf("-work: %s is more than cmd/hello works (%s)", sc.Work, hello.MaxWork)
		case sc.Requests < 0:
			return fmt.Errorf("-requests: %d is negative", sc.Requests)
		case sc.Fraction < 0 || sc.Fraction > 1:
			return fmt.Errorf("-scenario: a fraction of capacity of %g, want more than 0 and at most 1", sc.Fraction)
		case (sc.OpenLoop() || sc.Probe) && !slices.Contains(p.LoadList(), results.LoadBuiltin):
			return errors.New("-rate: an open-loop rate or a probe needs -load builtin (wrk is closed loop)")
		}
	}
	if p.MaxConnections < 0 {
		return fmt.Errorf("-max-connections: %d is negative", p.MaxConnections)
	}
	return nil
}

// checkShape checks each cell's run: its repetitions, length, warmup,
// threads and timeout.
func (p Plan) checkShape() error {
	switch {
	case p.Reps < 1:
		return fmt.Errorf("-reps: %d, want at least 1", p.Reps)
	case p.Duration < time.Second:
		return fmt.Errorf("-duration: %s, want at least 1s (wrk measures in whole seconds)", p.Duration)
	case p.Duration%time.Second != 0:
		return fmt.Errorf("-duration: %s, want whole seconds (wrk measures in whole seconds)", p.Duration)
	case p.Duration > MaxDuration:
		return fmt.Errorf("-duration: %s, want at most %s a cell (more -reps measure longer)", p.Duration, MaxDuration)
	case p.Warmup < 0:
		return fmt.Errorf("-warmup: %s is negative", p.Warmup)
	case p.Warmup%time.Second != 0:
		return fmt.Errorf("-warmup: %s, want whole seconds", p.Warmup)
	case p.Warmup > MaxDuration:
		return fmt.Errorf("-warmup: %s, want at most %s", p.Warmup, MaxDuration)
	case p.Threads < 1:
		return fmt.Errorf("-threads: %d, want at least 1", p.Threads)
	case p.Timeout < time.Second || p.Timeout%time.Second != 0:
		return fmt.Errorf("-timeout: %s, want whole seconds, at least 1s (wrk reads whole seconds)", p.Timeout)
	}
	if slices.Contains(p.LoadList(), results.LoadWrk) {
		for _, c := range p.Connections {
			if t := p.ThreadsFor(c); c%t != 0 {
				return fmt.Errorf("-connections: %d is not a multiple of -threads %d (wrk gives each thread connections/threads and would open fewer)", c, t)
			}
		}
	}
	if a := p.RepsAuto; a != nil && p.Paired == nil {
		switch {
		case a.Max < p.Reps:
			return fmt.Errorf("-reps: auto:%d is fewer than the %d first rounds", a.Max, p.Reps)
		case !(a.Within > 0 && a.Within < 1):
			return fmt.Errorf("-reps: auto bound ±%g is not a fraction between 0 and 1", a.Within)
		}
	}
	return nil
}

// resolveWhere reads the pinned CPU lists into r and checks the
// isolation.
func (p Plan) resolveWhere(r *Resolved) error {
	for _, f := range []struct {
		flag, list string
		set        *cpuset.CPUSet
	}{{"-pin-load", p.PinLoad, &r.LoadCPUs}, {"-pin-server", p.PinServer, &r.ServerCPUs}} {
		if f.list == "" {
			continue
		}
		var err error
		if *f.set, err = cpuset.Parse(f.list); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	switch p.Isolation {
	case "", results.IsolateNetns, results.IsolateNone:
	default:
		return fmt.Errorf("-isolate: %q, want netns or none", p.Isolation)
	}
	switch {
	case p.LinkDelay < 0:
		return fmt.Errorf("-link-delay: %s, want zero or more", p.LinkDelay)
	case p.LinkDelay%time.Microsecond != 0:
		return fmt.Errorf("-link-delay: %s, want whole microseconds (tc's resolution)", p.LinkDelay)
	}
	return nil
}

// Bounds on the plan that no machine this runs on needs more of: a value
// past them is a typo, which would otherwise start a sweep of days or a
// server with a hundred thousand processors.
const (
	// MaxDuration bounds -duration and -warmup: an hour a cell (more
	// -reps measure longer, interleaved).
	MaxDuration = time.Hour
	// MaxGOMAXPROCS bounds -gomaxprocs.
	MaxGOMAXPROCS = 1024
)

// ParseCPUs turns -cpus into the load generator's and the servers' CPU
// lists on a machine whose harness may run on the CPUs allowed
// (cpuset.Allowed): "first" gives the load generator the first and the
// servers the rest (both unpinned with fewer than 2 CPUs), so every
// topology gets the same CPU budget; "auto" is the same here, and the
// sweep then replaces it with a calibrated split (Options.CalibrateCPUs,
// calibrate.go); "none" leaves both unpinned;
// "LOAD/SERVER" names both lists, e.g. "0/1-3", each within allowed.
func ParseCPUs(spec string, allowed cpuset.CPUSet) (load, server string, err error) {
	switch spec {
	case "none":
		return "", "", nil
	case "auto", "first":
		cpus := allowed.CPUs()
		if len(cpus) < 2 {
			return "", "", nil
		}
		return strconv.Itoa(cpus[0]), cpuset.Of(cpus[1:]...).String(), nil
	}
	load, server, ok := strings.Cut(spec, "/")
	if !ok {
		return "", "", fmt.Errorf("%q: want auto, first, none or LOAD/SERVER CPU lists such as 0/1-3", spec)
	}
	ls, err := cpuset.Parse(load)
	if err == nil {
		err = ls.Within(allowed)
	}
	if err != nil {
		return "", "", fmt.Errorf("load generator: %w", err)
	}
	ss, err := cpuset.Parse(server)
	if err == nil {
		err = ss.Within(allowed)
	}
	if err != nil {
		return "", "", fmt.Errorf("servers: %w", err)
	}
	for _, c := range ls.CPUs() {
		if ss.Contains(c) {
			return "", "", fmt.Errorf("%q: CPU %d is in both sets; the point is to keep them apart", spec, c)
		}
	}
	return ls.String(), ss.String(), nil
}

// CheckCPUs checks the plan's CPU lists against the CPUs the harness may
// run on (cpuset.Allowed), naming the flag: taskset refuses a CPU the
// machine lacks only when the pinned program starts, and then every cell
// fails alike.
func (r Resolved) CheckCPUs(allowed cpuset.CPUSet) error {
	for _, f := range []struct {
		flag string
		set  cpuset.CPUSet
	}{{"-pin-load", r.LoadCPUs}, {"-pin-server", r.ServerCPUs}} {
		if err := f.set.Within(allowed); err != nil {
			return fmt.Errorf("%s: %w", f.flag, err)
		}
	}
	return nil
}

func positive(flag string, vs []int) error {
	if len(vs) == 0 {
		return fmt.Errorf("%s: no values", flag)
	}
	for _, v := range vs {
		if v < 1 {
			return fmt.Errorf("%s: %d is not a positive number", flag, v)
		}
	}
	return unique(flag, vs)
}

func unique[T comparable](flag string, vs []T) error {
	seen := map[T]bool{}
	for _, v := range vs {
		if seen[v] {
			return fmt.Errorf("%s: %v listed twice", flag, v)
		}
		seen[v] = true
	}
	return nil
}

// ThreadsFor is wrk's -t for c connections: the plan's threads, but never
// more than there are connections.
func (p Plan) ThreadsFor(c int) int { return min(p.Threads, c) }

// duet reports whether the plan runs the duet design (-design duet).
func (p Plan) duet() bool { return p.Paired != nil && p.Paired.Duet }

// MaxWait bounds the handler wait cmd/hello accepts.
const MaxWait = hello.MaxWait

// Remaining drops from blocks the cells already measured (done holds
// their keys) and the blocks left empty.
func Remaining(blocks []Block, done map[string]bool) []Block {
	var out []Block
	for _, b := range blocks {
		b.Cells = slices.DeleteFunc(slices.Clone(b.Cells), func(c Cell) bool { return done[c.Key()] })
		if len(b.Cells) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// Measured is how long the measured load of a cell lasts: the plan's
// duration, or a count of requests at the schedule's rate, or a probe's
// wait with time to spare for the answers.
func (p Plan) Measured(c Cell) time.Duration {
	switch {
	case c.Probe:
		return 2*c.Wait + 5*time.Second
	case c.Requests > 0 && c.Rate > 0:
		return time.Duration(float64(c.Requests) / c.Rate * float64(time.Second))
	case p.Checked(c):
		return p.Paired.Check.Duration
	}
	return p.Duration
}

// CellTime is the wall time one cell takes at least: warmup plus measurement.
func (p Plan) CellTime(c Cell) time.Duration { return p.Warmup + p.Measured(c) }

// ParseInts parses a comma-separated list of integers ("1,8").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no numbers in %q", s)
	}
	return out, nil
}

// ParseList splits a comma-separated list, trimming spaces and dropping
// empty entries.
func ParseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// checkPaired refuses what the paired design cannot measure, naming the
// flag: its windows are closed loop on one pool at a time, each topology
// beside standalone.
func (p Plan) checkPaired() error {
	if p.Paired == nil {
		return nil
	}
	switch {
	case p.Paired.Pairs < 1:
		return fmt.Errorf("-reps: %d pairs, want at least 1", p.Paired.Pairs)
	case !slices.Contains(p.Topologies, "standalone"):
		// Standalone alone is the A/A: the machine's check of the intervals.
		return errors.New("-design paired: -topologies needs standalone, which every other is measured beside (standalone alone measures the A/A)")
	case len(p.LoadList()) != 1:
		return errors.New("-design paired: give one -load; each pair's two windows come from one load session")
	case len(p.Connections) != 1:
		return errors.New("-design paired: give one -connections value")
	case len(p.Schedules) > 0:
		return errors.New("-design paired: windows are closed loop; drop -rate, -wait and -work (or use -reps)")
	case p.Close:
		return errors.New("-design paired: -close opens a connection a request, which a pool kept across windows cannot")
	case p.Paired.Duet && p.LoadList()[0] != results.LoadBuiltin:
		return errors.New("-design duet: needs -load builtin, whose session runs two pools at once")
	}
	if c := p.Paired.Check; c != nil {
		switch {
		case !slices.Contains(results.Generators(), c.Load):
			return fmt.Errorf("-cross-check: unknown load generator %q (known: wrk, builtin)", c.Load)
		case c.Load == p.LoadList()[0]:
			return fmt.Errorf("-cross-check: the pairs' load is %s already; cross-check with another", c.Load)
		case !slices.Contains(p.GOMAXPROCS, c.GOMAXPROCS):
			return fmt.Errorf("-cross-check: GOMAXPROCS=%d is not among -gomaxprocs", c.GOMAXPROCS)
		case c.Duration < time.Second || c.Duration%time.Second != 0:
			return fmt.Errorf("-cross-check: a run of %s, want whole seconds", c.Duration)
		case c.Load == results.LoadWrk && p.Connections[0]%p.ThreadsFor(p.Connections[0]) != 0:
			return fmt.Errorf("-connections: %d is not a multiple of -threads %d (wrk gives each thread connections/threads and would open fewer)", p.Connections[0], p.ThreadsFor(p.Connections[0]))
		}
		for _, t := range c.Topologies {
			if !slices.Contains(p.Topologies, t) {
				return fmt.Errorf("-cross-check: %s is not among -topologies", t)
			}
		}
	}
	return nil
}

// Generators are every load generator the plan runs: its loads and its
// cross-check's.
func (p Plan) Generators() []results.Generator {
	gs := p.LoadList()
	if p.Paired != nil && p.Paired.Check != nil && !slices.Contains(gs, p.Paired.Check.Load) {
		gs = append(slices.Clone(gs), p.Paired.Check.Load)
	}
	return gs
}

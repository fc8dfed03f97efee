package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/report"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stopping"
	"github.com/topobench/topobench/internal/sweep"
)

// compareFlags are compare's flags besides the plan's (planflags.go) and
// the swarm's (swarm.go); their defaults are the preset's.
type compareFlags struct {
	preset, design, window, lead, check, process string
	latency                                      string
	precision, out, resume, format               string
	scale                                        float64
	seed                                         uint64
	budget                                       time.Duration
	helpAll                                      bool
	failIf                                       *[]string // -fail-if's bounds, as given
	plumb                                        plumbing
	removed                                      []string // removed flags given, by name
}

// plumbing are the flags our own processes pass (compose's harness, the
// tests): where the servers run and which ports they take. No help screen
// shows them.
type plumbing struct {
	helloAgent, nginxAgent, sockDir string
	freePorts                       bool
}

var plumbingFlags = []string{"hello-agent", "nginx-agent", "sockdir", "free-ports"}

// removedFlags are compare's former flags, each with what to use instead.
var removedFlags = map[string]string{
	"scenario": "-scenario: now -preset, as in -preset 2009",
	"pairs":    "-pairs: removed; -budget D fits the pairs to the time (-precision its goal), -reps N gives each topology N pairs",
}

// compareCommand is compare's flag set for one preset, with what it sets.
type compareCommand struct {
	fs    *flag.FlagSet
	pr    preset
	c     *compareFlags
	plan  *planFlags
	sw    *swarmFlags
	given map[string]bool // the flags on the command line
	// bounds are -fail-if's, checked on the report after the sweep.
	bounds []analysis.Bound
}

// newCompareCommand declares compare's flags with the defaults of the
// preset named (the default one for ""); allowed are the CPUs -cpus may
// divide.
func newCompareCommand(name string, allowed cpuset.CPUSet, stderr io.Writer) (*compareCommand, error) {
	pr, err := presetNamed(name)
	if err != nil {
		return nil, err
	}
	def, err := pr.plan(1)
	if err != nil {
		return nil, err
	}
	fs := newFlagSet("compare", stderr)
	cc := &compareCommand{fs: fs, pr: pr, c: &compareFlags{}, given: map[string]bool{}}
	c := cc.c
	fs.StringVar(&c.preset, "preset", pr.name, "the sweep to start from, whose defaults the other flags change: "+presetHelp)
	fs.Float64Var(&c.scale, "scale", 1, "with -preset 2016: fraction of each scenario's 100k requests to send (0.1 for a quick run)")
	cc.plan = addPlanFlags(fs, allowed, def, pr.budget > 0)
	fs.StringVar(&c.design, "design", pr.design, "rounds: every cell a run of -duration, in interleaved rounds; paired: each start of the servers opens standalone's pool of connections once and each other topology's in turn, in one load session, and alternates measured windows of -window of standalone and the topology, in an order drawn anew for each pair; each pair gives one ratio; duet: as paired, but each pair's two windows run at the same time, standalone's server in a process and control group of its own and the topology's servers in another of equal CPU weight (docs/designs.md)")
	fs.StringVar(&c.window, "window", pr.window, "with -design paired or duet: a measured window's length, whole seconds; TOPOLOGY=D for one topology's pairs, as in 3s,nginx-fcgi-tcp=6s (a default's TOPOLOGY=D applies where the plan has that topology)")
	fs.StringVar(&c.lead, "lead", plan.DefaultLead.String(), "with -load builtin: each window's load before its measured time, not measured (a pool starting from idle reads a slow path low; 0 measures from the first request); TOPOLOGY=D for one topology's own, as in 1s,standalone=250ms")
	fs.StringVar(&c.check, "cross-check", pr.check, "after the pairs, one run (of "+plan.CrossCheckDuration.String()+", or LOAD:DURATION) of this load generator (wrk) each of "+strings.Join(plan.CrossCheckTopologies(), " and ")+" at the first -gomaxprocs value, whose ratio the report prints beside the pairs'")
	fs.StringVar(&c.latency, "latency-rate", pr.latencyRate(), "with -design paired or duet: at the first -gomaxprocs value, after its first pairs, standalone and each path with Go behind it run alone, open loop (Poisson) at this rate with -connections, in "+strconv.Itoa(plan.LatencyRounds)+" rounds of "+plan.LatencyDuration.String()+" runs (standalone, then each path), for the latency each path adds to standalone's at the same rate: auto (half the slowest path's req/s in the block's pairs), a rate in req/s, or off")
	fs.StringVar(&c.process, "standalone-process", "own", "with -design paired: own runs standalone's server in a process of its own, beside the process that serves the backends, as the two are deployed (the duet always does); shared serves standalone and every backend from one cmd/hello, whose kept connections then share one heap (the default when the servers run elsewhere, as with -swarm)")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of each pair's order of windows (default: drawn from the clock; env.json records it)")
	fs.DurationVar(&c.budget, "budget", pr.budget, "when to stop: finish within this wall time, everything included (e.g. 10m): first rounds or pairs, then more where the ratios to standalone are widest, until each is within -precision or the time is spent; -reps N runs a fixed count instead")
	fs.StringVar(&c.precision, "precision", pct(plan.DefaultWithin), "with -budget: how narrow each ratio to standalone's interval should get, e.g. 5% or 0.05")
	fs.StringVar(&c.out, "out", "", "results directory (default results/<timestamp>)")
	fs.StringVar(&c.resume, "resume", "", "finish the interrupted sweep in this results directory")
	fs.StringVar(&c.format, "format", report.DefaultFormats, "comma-separated report formats to write: "+formatNames()+", or all")
	c.failIf = addFailIf(fs)
	fs.BoolVar(&c.helpAll, "help-all", false, "print every flag of compare, grouped")
	cc.sw = addSwarmFlags(fs)
	fs.StringVar(&c.plumb.helloAgent, "hello-agent", "", "URL of a procd running cmd/hello elsewhere (containers); the harness restarts it there")
	fs.StringVar(&c.plumb.nginxAgent, "nginx-agent", "", "URL of a procd running nginx elsewhere; needs -hello-agent")
	fs.StringVar(&c.plumb.sockDir, "sockdir", "/tmp", "with -hello-agent: directory of cmd/hello's unix sockets")
	fs.BoolVar(&c.plumb.freePorts, "free-ports", false, "listen on loopback ports the kernel reports free instead of the reference ones (8080, 9001, nginx on 8081 and up)")
	for name := range removedFlags {
		fs.Func(name, "removed", func(string) error { c.removed = append(c.removed, name); return nil })
	}
	// compare prints its own help, after the parse, for the preset given.
	fs.Usage = func() {}
	return cc, nil
}

// compareUsage is compare -h's opening; the flags follow.
const compareUsage = "usage: topobench compare [flags]\n\nRuns every topology under load for each GOMAXPROCS value, after checking\nthe machine and response parity, as the preset's design says (by default\nthe duet on a 12-minute budget); writes the load generator's raw output,\none JSON record per run, env.json, summary.{md,csv,json}, charts and\nbench.txt into the results directory (docs/designs.md, docs/output.md).\n"

// printHelp writes compare -h (the first screen) or -help-all (every
// flag) with the defaults of the preset.
func (cc *compareCommand) printHelp(w io.Writer, all bool) {
	fmt.Fprint(w, compareUsage)
	hidden := append(slices.Clone(plumbingFlags), slices.Collect(maps.Keys(removedFlags))...)
	if all {
		printFlagGroups(w, cc.fs, compareHelp, hidden)
		return
	}
	// The first screen's "other" would be the rest, which -help-all shows.
	cc.fs.VisitAll(func(f *flag.Flag) { hidden = append(hidden, f.Name) })
	printFlagGroups(w, cc.fs, compareFirst, hidden)
	fmt.Fprintln(w, "\n-help-all lists the rest: what to measure and how, where things run, the swarm's flags.")
}

// parse parses args; a preset other than the default gets a flag set of
// its own defaults first, so that -h shows them and each flag not given
// keeps the preset's value.
func parseCompare(args []string, allowed cpuset.CPUSet, stderr io.Writer) (*compareCommand, error) {
	cc, err := newCompareCommand(presetArg(args), allowed, stderr)
	if err != nil {
		return nil, usageError("%v", err)
	}
	err = parseFlags(cc.fs, args)
	if errors.Is(err, flag.ErrHelp) || err == nil && cc.c.helpAll {
		cc.printHelp(stderr, cc.c.helpAll)
		return nil, flag.ErrHelp
	}
	if err != nil {
		cc.printHelp(stderr, false)
		return nil, err
	}
	cc.fs.Visit(func(f *flag.Flag) { cc.given[f.Name] = true })
	if len(cc.c.removed) > 0 {
		return nil, usageError("%s", removedFlags[cc.c.removed[0]])
	}
	// Before anything runs: a bad bound is found at once, not after the sweep.
	if cc.bounds, err = parseBounds(*cc.c.failIf); err != nil {
		return nil, err
	}
	return cc, nil
}

// presetArg is the last -preset on the command line, "" for none.
func presetArg(args []string) string {
	name := ""
	for i, a := range args {
		if a == "--" {
			break
		}
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case flag != "preset" || !strings.HasPrefix(a, "-"):
		case hasValue:
			name = value
		case i+1 < len(args):
			name = args[i+1]
		}
	}
	return name
}

// runCompare translates flags into a sweep; internal/sweep does the rest.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// The CPUs this harness may run on: -cpus auto divides them, and every
	// CPU list must be among them.
	allowed, err := cpuset.Allowed()
	if err != nil {
		return err
	}
	cc, err := parseCompare(args, allowed, stderr)
	if err != nil {
		return err
	}
	c := cc.c
	render, err := renderer(c.format)
	if err != nil {
		return usageError("%v", err)
	}
	if f := cc.sw.stray(cc.fs); f != "" {
		return usageError("%s: needs -swarm", f)
	}
	if *cc.sw.on {
		if err := cc.sw.parse(); err != nil {
			return err
		}
	}
	o := sweep.Options{
		Render:     render,
		Dir:        c.out,
		FreePorts:  c.plumb.freePorts,
		HelloAgent: c.plumb.helloAgent,
		NginxAgent: c.plumb.nginxAgent,
		SockDir:    c.plumb.sockDir,
		// Not os.Args[0]: under `go run` that is a temporary build path,
		// and the report's reader wants the command to run again.
		Command:  append([]string{"topobench", "compare"}, args...),
		Progress: stdout,
		Log:      stderr,
	}
	if c.resume != "" {
		if err := cc.resumeOnly(); err != nil {
			return err
		}
		o.Dir, o.Resume = c.resume, true
		if cc.given["budget"] {
			// A new budget for the rest only when asked: the preset's
			// default is not the resumed sweep's.
			o.Budget = c.budget
		}
	} else if o, err = cc.planned(o, allowed); err != nil {
		return err
	}
	if *cc.sw.on {
		// One line when this engine is no swarm manager or the image
		// cannot be built; the sweep refuses missing roles and an image
		// it cannot place before it starts anything.
		if o.Cluster, err = cc.sw.open(ctx, stderr); err != nil {
			return err
		}
	}
	out, err := sweep.Run(ctx, o)
	if errors.Is(err, plan.ErrPlan) {
		return cc.planError(err)
	}
	if err != nil {
		return err
	}
	return checkBounds(out.Dir, cc.bounds, stderr)
}

// where is where the flags run the sweep, for the plan's rules.
func (cc *compareCommand) where() plan.Where {
	return plan.Where{HelloAgent: cc.c.plumb.helloAgent != "", NginxAgent: cc.c.plumb.nginxAgent != "",
		Cluster: *cc.sw.on, FreePorts: cc.c.plumb.freePorts}
}

// planError is a bad plan's one line, naming the flag that sets the field
// at fault (flagOf).
func (cc *compareCommand) planError(err error) error {
	var fe *plan.FieldError
	if errors.As(err, &fe) {
		if f := cc.flagOf(fe.Field); f != fe.Field {
			named := &plan.FieldError{Field: f, Err: fe.Err}
			return usageError("%s", strings.Replace(err.Error(), fe.Error(), named.Error(), 1))
		}
	}
	return usageError("%v", err)
}

// flagOf is the flag that set field f, where f's own name is no flag that
// did: the presets set request counts and fractions, and -cpus both CPU
// lists.
func (cc *compareCommand) flagOf(f plan.Field) plan.Field {
	switch {
	case f == plan.Requests || f == plan.Fraction:
		return plan.Preset
	case (f == plan.PinLoad || f == plan.PinServer) && cc.given["cpus"] && !cc.given[string(f)]:
		return plan.CPUs
	}
	return f
}

// resumeOnly refuses, beside -resume, the flags that say what to measure.
func (cc *compareCommand) resumeOnly() error {
	var set []string
	for name := range cc.given {
		// Where the sweep runs, not what it measures: a sweep on a
		// cluster is resumed with its -swarm flags; -budget gives the
		// rest a new budget.
		if !slices.Contains(append([]string{"resume", "format", "budget", "fail-if"}, plumbingFlags...), name) && !strings.HasPrefix(name, "swarm") {
			set = append(set, "-"+name)
		}
	}
	if len(set) > 0 {
		slices.Sort(set)
		return usageError("-resume takes the plan from %s; drop %s", filepath.Join(cc.c.resume, results.EnvFile), strings.Join(set, " "))
	}
	return nil
}

// planned sets o's plan from the preset and the flags.
func (cc *compareCommand) planned(o sweep.Options, allowed cpuset.CPUSet) (sweep.Options, error) {
	c, given, pf := cc.c, cc.given, cc.plan
	p, err := cc.pr.plan(c.scale)
	if err != nil {
		return o, cc.planError(err)
	}
	if given["scale"] && p.Scenario != "2016" {
		return o, usageError("-scale: applies to -preset 2016 only")
	}
	pinned := given["pin-load"] || given["pin-server"]
	elsewhere := c.plumb.helloAgent != "" || *cc.sw.on
	// -cpus auto is the default unless the CPUs are given otherwise,
	// or the servers run elsewhere.
	if !pinned && !elsewhere {
		p.PinLoad, p.PinServer, _ = plan.ParseCPUs("auto", allowed)
	}
	if err := pf.applyTo(&p); err != nil {
		return o, cc.planError(err)
	}
	if pf.cpusSet && pinned {
		return o, usageError("-cpus: give either -cpus or -pin-load/-pin-server")
	}
	if p, err = cc.pairedDesign(p, elsewhere); err != nil {
		return o, cc.planError(err)
	}
	// What the plan asks for is checked before whether it fits the budget.
	q := p
	pf.schedules(&q)
	if err := q.Validate(cc.where()); err != nil {
		return o, cc.planError(err)
	}
	if p, err = cc.fitBudget(p); err != nil {
		return o, cc.planError(err)
	}
	// -cpus auto (set or by default) calibrates the split; after the
	// flags, which set cpusAuto as they apply.
	o.CalibrateCPUs = pf.cpusAuto && !pinned && !elsewhere
	pf.schedules(&p)
	// sweep.Run validates the plan, and checks its CPU lists against
	// this machine, before it starts anything (errors.Is ErrPlan).
	o.Plan = p
	return o, nil
}

// fitBudget applies the stopping rule to the plan: -reps N is a fixed
// count; else the budget (-budget, or the preset's) plans the sweep to fit
// (stopping.FitBudget), -precision its goal.
func (cc *compareCommand) fitBudget(p plan.Plan) (plan.Plan, error) {
	given := cc.given
	prec, err := parsePrecision(cc.c.precision)
	if err != nil {
		return p, fmt.Errorf("-precision: %w", err)
	}
	switch {
	case given["budget"] && given["reps"]:
		return p, errors.New("-budget and -reps: give one (-reps N runs a fixed count, -budget fits the runs to the time)")
	case given["reps"] || !given["budget"] && cc.pr.budget == 0:
		if given["precision"] {
			return p, errors.New("-precision: applies to -budget, the goal it stops at")
		}
		return p, nil
	}
	o := stopping.BudgetOptions{Budget: cc.c.budget, Precision: prec}
	if p.Paired != nil {
		fit, err := stopping.FitPaired(p.Plan, o)
		return plan.Plan{Plan: fit}, err
	}
	if given["duration"] {
		o.Duration = p.Duration
	}
	if given["warmup"] {
		o.Warmup, o.WarmupSet = p.Warmup, true
	}
	fit, err := stopping.FitBudget(p.Plan, o)
	return plan.Plan{Plan: fit}, err
}

// joinList is a default list as its flag takes it: "1,8".
func joinList[T any](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// pct is a fraction as -precision takes it: "5%".
func pct(f float64) string { return strconv.FormatFloat(f*100, 'g', -1, 64) + "%" }

// parsePrecision reads "5%" or "0.05".
func parsePrecision(v string) (float64, error) {
	pct, isPct := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(pct, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a fraction (0.05) or a percentage (5%%)", v)
	}
	if isPct {
		f /= 100
	}
	if !(f > 0 && f < 1) {
		return 0, fmt.Errorf("%s: want more than 0 and less than 100%%", v)
	}
	return f, nil
}

// pairedDesign applies -design, and with paired -window, -lead, -seed
// and -cross-check, to the plan; -reps N is then each topology's pairs.
// With servers elsewhere (elsewhere), standalone shares their process
// unless -standalone-process says otherwise.
func (cc *compareCommand) pairedDesign(p plan.Plan, elsewhere bool) (plan.Plan, error) {
	c, given := cc.c, cc.given
	switch c.design {
	case "rounds":
		for _, f := range []string{"window", "lead", "seed", "cross-check", "standalone-process", "latency-rate"} {
			if given[f] {
				return p, fmt.Errorf("-%s: applies to -design paired", f)
			}
		}
		return p, nil
	case "paired", "duet":
	default:
		return p, fmt.Errorf("-design: %q, want rounds, paired or duet", c.design)
	}
	if given["duration"] {
		return p, errors.New("-duration: under -design paired a window's length is -window")
	}
	window, ownWindow, err := plan.ParseWindows(cc.ownValue("window", plan.DefaultWindow, p.Topologies), p.Topologies)
	if err != nil {
		return p, err
	}
	lead, own, err := plan.ParseLeads(cc.ownValue("lead", plan.DefaultLead, p.Topologies), p.Topologies)
	if err != nil {
		return p, err
	}
	process := c.process
	switch {
	case process != "own" && process != "shared":
		return p, fmt.Errorf("-standalone-process: %q, want own or shared", process)
	case process == "shared" && c.design == "duet":
		return p, errors.New("-standalone-process: shared cannot run a duet, whose two sides are two processes in two control groups")
	case elsewhere && !given["standalone-process"]:
		process = "shared"
	}
	seed := c.seed
	if !given["seed"] {
		seed = uint64(time.Now().UnixNano())
	}
	// The lead is a kept pool's: the default's goes with another load,
	// and plan.Check refuses one given.
	if loads := p.LoadList(); (len(loads) != 1 || loads[0] != results.LoadBuiltin) && !given["lead"] {
		lead, own = 0, nil
	}
	if !given["warmup"] {
		// Once a pool, after its connections are open; a duet's with
		// standalone's beside it, for as long as the pool's slow start.
		p.Warmup = time.Second
		if c.design == "duet" {
			p.Warmup = 3 * time.Second
		}
	}
	pairs := plan.DefaultPairs
	if given["reps"] {
		pairs = p.Reps
	}
	p.Duration, p.Reps = window, 1
	p.Paired = &results.Paired{Pairs: pairs, Seed: seed, Lead: lead, Leads: own, Windows: ownWindow, Duet: c.design == "duet", Own: process == "own"}
	if p.Paired.Latency, err = plan.ParseLatencyRate(c.latency); err != nil {
		return p, err
	}
	if loads := p.LoadList(); (len(loads) != 1 || loads[0] != results.LoadBuiltin) && !given["latency-rate"] {
		p.Paired.Latency = nil // the preset's goes with the engine, which runs open loop
	}
	check, err := cc.crossCheck(p)
	p.Paired.Check = check
	return p, err
}

// ownValue is a TOPOLOGY=D list flag's value: the user's as given; a
// default's keeps its TOPOLOGY=D entries of the plan's topologies only,
// and a rounds preset's empty one is def.
func (cc *compareCommand) ownValue(name string, def time.Duration, tops []string) string {
	v := cc.fs.Lookup(name).Value.String()
	if cc.given[name] {
		return v
	}
	if v == "" {
		return def.String()
	}
	var keep []string
	for _, e := range plan.ParseList(v) {
		if top, _, own := strings.Cut(e, "="); !own || slices.Contains(tops, top) {
			keep = append(keep, e)
		}
	}
	return strings.Join(keep, ",")
}

// crossCheck is -cross-check's run; the preset's is dropped where the
// plan's own load is that generator already.
func (cc *compareCommand) crossCheck(p plan.Plan) (*results.Check, error) {
	check := cc.c.check
	if check == "" || !cc.given["cross-check"] && slices.Contains(p.LoadList(), results.Generator(check)) {
		return nil, nil
	}
	load, d, timed := strings.Cut(check, ":")
	dur := plan.CrossCheckDuration
	if timed {
		var err error
		if dur, err = time.ParseDuration(d); err != nil {
			return nil, fmt.Errorf("-cross-check: %q, want LOAD or LOAD:DURATION such as wrk:15s", check)
		}
	}
	return &results.Check{Load: results.Generator(load), Topologies: plan.CrossCheckTopologies(), GOMAXPROCS: p.GOMAXPROCS[0], Duration: dur}, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/report"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stopping"
	"github.com/topobench/topobench/internal/sweep"
)

// runCompare translates flags into a sweep; internal/sweep does the rest.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	scenario := fs.String("scenario", "2013", "preset plan: 2013 (nginx + Go, the default), 2009 (concurrency 30,100,1000,5000; req/s and p99), 2016 (open-loop target-rate scenarios and the concurrency probe), 2007 (-c1000 with Connection: close, standalone, go and the 2007 Java and Erlang servers), cost (handler work 0,50us,200us,1ms: what each path costs a service that does work, closed loop and open loop at half the measured capacity); flags given with it override it")
	scale := fs.Float64("scale", 1, "with -scenario 2016: fraction of each scenario's 100k requests to send (0.1 for a quick run)")
	// The CPUs this harness may run on: -cpus auto divides them, and every
	// CPU list must be among them.
	allowed, err := cpuset.Allowed()
	if err != nil {
		return err
	}
	plan := addPlanFlags(fs, allowed)
	design := fs.String("design", "rounds", "rounds: every cell a run of -duration, in interleaved rounds (-reps, or -budget's rounds); paired: each start of the servers opens standalone's pool of connections once and each other topology's in turn, in one load session, and alternates measured windows of -window of standalone and the topology, in an order drawn anew for each pair; each pair gives one ratio (-pairs, or -budget); duet: as paired, but each pair's two windows run at the same time, standalone's server in a process and control group of its own and the topology's servers in another of equal CPU weight (docs/designs.md)")
	window := fs.String("window", sweep.DefaultWindow.String(), "a measured window's length, whole seconds; TOPOLOGY=D for one topology's pairs, as in 3s,nginx-fcgi-tcp=6s")
	lead := fs.String("lead", sweep.DefaultLead.String(), "with -load builtin: each window's load before its measured time, not measured (a pool starting from idle reads a slow path low; 0 measures from the first request); TOPOLOGY=D for one topology's own, as in 1s,standalone=250ms")
	pairs := fs.Int("pairs", sweep.DefaultPairs, "without -budget: pairs of windows each topology gets beside standalone")
	check := fs.String("cross-check", "", "after the pairs, one run (of "+sweep.CrossCheckDuration.String()+", or LOAD:DURATION) of this load generator (wrk) each of "+strings.Join(sweep.CrossCheckTopologies(), " and ")+" at the first -gomaxprocs value, whose ratio the report prints beside the pairs'")
	process := fs.String("standalone-process", "own", "with -design paired: own runs standalone's server in a process of its own, beside the process that serves the backends, as the two are deployed (the duet always does); shared serves standalone and every backend from one cmd/hello, whose kept connections then share one heap (the default with -hello-agent or -swarm)")
	seed := fs.Uint64("seed", 0, "seed of each pair's order of windows (default: drawn from the clock; env.json records it)")
	budget := fs.Duration("budget", 0, "finish within this wall time, everything included (e.g. 10m): the first rounds, then more runs where the ratios to standalone are widest, until each is within -precision or the time is spent; instead of -reps")
	precision := fs.String("precision", pct(sweep.DefaultWithin), "with -budget or -reps auto: how narrow each ratio to standalone's interval should get, e.g. 5% or 0.05")
	out := fs.String("out", "", "results directory (default results/<timestamp>)")
	helloAgent := fs.String("hello-agent", "", "URL of a procd running cmd/hello elsewhere (containers); the harness restarts it there")
	nginxAgent := fs.String("nginx-agent", "", "URL of a procd running nginx elsewhere; needs -hello-agent")
	sockDir := fs.String("sockdir", "/tmp", "with -hello-agent: directory of cmd/hello's unix sockets")
	resume := fs.String("resume", "", "finish the interrupted sweep in this results directory")
	format := fs.String("format", report.DefaultFormats, "comma-separated report formats to write: "+formatNames()+", or all")
	sw := addSwarmFlags(fs)
	freePorts := fs.Bool("free-ports", false, "listen on loopback ports the kernel reports free instead of the reference ones (8080, 9001, nginx on 8081 and up)")
	fs.Usage = func() {
		fmt.Fprint(stderr, "usage: topobench compare [flags]\n\nRuns every topology under load for each GOMAXPROCS value, repeated and\ninterleaved, after checking the machine and response parity; writes the\nload generator's raw output, one JSON record per run, env.json,\nsummary.{md,csv,json}, charts and bench.txt into the results directory\n(docs/designs.md, docs/output.md).\n")
		printFlagGroups(stderr, fs, compareHelp)
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	render, err := renderer(*format)
	if err != nil {
		return usageError("%v", err)
	}
	if f := sw.stray(fs); f != "" {
		return usageError("%s: needs -swarm", f)
	}

	o := sweep.Options{
		Render:     render,
		Dir:        *out,
		FreePorts:  *freePorts,
		HelloAgent: *helloAgent,
		NginxAgent: *nginxAgent,
		SockDir:    *sockDir,
		// Not os.Args[0]: under `go run` that is a temporary build path,
		// and the report's reader wants the command to run again.
		Command:  append([]string{"topobench", "compare"}, args...),
		Progress: stdout,
		Log:      stderr,
	}
	if *resume != "" {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			// Where the sweep runs, not what it measures: a sweep on a
			// cluster is resumed with its -swarm flags; -budget gives the
			// rest a new budget.
			if !slices.Contains([]string{"resume", "hello-agent", "nginx-agent", "sockdir", "free-ports", "format", "budget"}, f.Name) && !strings.HasPrefix(f.Name, "swarm") {
				set = append(set, "-"+f.Name)
			}
		})
		if len(set) > 0 {
			return usageError("-resume takes the plan from %s; drop %s", filepath.Join(*resume, results.EnvFile), strings.Join(set, " "))
		}
		o.Dir, o.Resume, o.Budget = *resume, true, *budget
	} else {
		p, err := sweep.Scenario(*scenario, *scale, runtime.NumCPU())
		if err != nil {
			return usageError("%v", err)
		}
		var bad error
		pinned := false
		fs.Visit(func(f *flag.Flag) {
			if bad == nil && f.Name == "scale" && p.Scenario != "2016" {
				bad = usageError("-scale: applies to -scenario 2016 only")
			}
			pinned = pinned || f.Name == "pin-load" || f.Name == "pin-server"
		})
		if bad != nil {
			return bad
		}
		// -cpus auto is the default unless the CPUs are given otherwise,
		// or the servers run elsewhere.
		if !pinned && *helloAgent == "" && !*sw.on {
			p.PinLoad, p.PinServer, _ = sweep.ParseCPUs("auto", allowed)
		}
		if err := plan.applyTo(&p); err != nil {
			return usageError("%v", err)
		}
		if plan.cpusSet && pinned {
			return usageError("-cpus: give either -cpus or -pin-load/-pin-server")
		}
		if p, err = pairedDesign(fs, p, *design, *window, *lead, *pairs, *seed, *check, *process, *helloAgent != "" || *sw.on); err != nil {
			return usageError("%v", err)
		}
		if p, err = fitBudget(fs, p, *budget, *precision); err != nil {
			return usageError("%v", err)
		}
		// -cpus auto (set or by default) calibrates the split; after the
		// flags, which set cpusAuto as they apply.
		o.CalibrateCPUs = plan.cpusAuto && !pinned && *helloAgent == "" && !*sw.on
		plan.schedules(&p)
		// sweep.Run validates the plan, and checks its CPU lists against
		// this machine, before it starts anything (errors.Is ErrPlan).
		o.Plan = p
	}
	if *sw.on {
		// One line when this engine is no swarm manager or the image
		// cannot be built; the sweep refuses missing roles and an image
		// it cannot place before it starts anything.
		if o.Cluster, err = sw.open(ctx, stderr); err != nil {
			return err
		}
	}
	_, err = sweep.Run(ctx, o)
	if errors.Is(err, sweep.ErrPlan) {
		return usageError("%v", err)
	}
	return err
}

// fitBudget applies -budget and -precision to the plan: a budget plans
// the sweep to fit (stopping.FitBudget); -precision sets the bound of -reps
// auto or of the budget.
func fitBudget(fs *flag.FlagSet, p sweep.Plan, budget time.Duration, precision string) (sweep.Plan, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	prec, err := parsePrecision(precision)
	if err != nil {
		return p, fmt.Errorf("-precision: %w", err)
	}
	if !given["budget"] {
		switch {
		case given["precision"] && p.RepsAuto == nil:
			return p, errors.New("-precision: applies to -budget or -reps auto")
		case p.RepsAuto != nil:
			p.RepsAuto.Within = prec
		}
		return p, nil
	}
	if given["reps"] {
		return p, errors.New("-budget and -reps: give one (-reps N runs a fixed count of rounds, -budget fits the runs to the time)")
	}
	if p.Paired != nil {
		if given["pairs"] {
			return p, errors.New("-budget and -pairs: give one (-pairs N runs a fixed count of pairs, -budget fits the pairs to the time)")
		}
		fit, err := stopping.FitPaired(p.Plan, stopping.BudgetOptions{Budget: budget, Precision: prec})
		return sweep.Plan{Plan: fit}, err
	}
	o := stopping.BudgetOptions{Budget: budget, Precision: prec}
	if given["duration"] {
		o.Duration = p.Duration
	}
	if given["warmup"] {
		o.Warmup, o.WarmupSet = p.Warmup, true
	}
	fit, err := stopping.FitBudget(p.Plan, o)
	return sweep.Plan{Plan: fit}, err
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

// pairedDesign applies -design, and with paired -window, -pairs and
// -seed, to the plan.
// With servers elsewhere (elsewhere), standalone shares their process
// unless -standalone-process says otherwise.
func pairedDesign(fs *flag.FlagSet, p sweep.Plan, design string, windows string, leads string, pairs int, seed uint64, check, process string, elsewhere bool) (sweep.Plan, error) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch design {
	case "rounds":
		for _, f := range []string{"window", "lead", "pairs", "seed", "cross-check", "standalone-process"} {
			if given[f] {
				return p, fmt.Errorf("-%s: applies to -design paired", f)
			}
		}
		return p, nil
	case "paired", "duet":
	default:
		return p, fmt.Errorf("-design: %q, want rounds, paired or duet", design)
	}
	switch {
	case given["reps"]:
		return p, errors.New("-reps: applies to -design rounds; -design paired gives each topology -pairs pairs of windows")
	case given["duration"]:
		return p, errors.New("-duration: under -design paired a window's length is -window")
	}
	window, ownWindow, err := sweep.ParseWindows(windows, p.Topologies)
	if err != nil {
		return p, err
	}
	lead, own, err := sweep.ParseLeads(leads, p.Topologies)
	if err != nil {
		return p, err
	}
	switch {
	case process != "own" && process != "shared":
		return p, fmt.Errorf("-standalone-process: %q, want own or shared", process)
	case process == "shared" && design == "duet":
		return p, errors.New("-standalone-process: shared cannot run a duet, whose two sides are two processes in two control groups")
	case elsewhere && !given["standalone-process"]:
		process = "shared"
	}
	if !given["seed"] {
		seed = uint64(time.Now().UnixNano())
	}
	// The lead is a kept pool's: a generator that opens its connections
	// every window (wrk) starts each from nothing anyway.
	if loads := p.LoadList(); len(loads) != 1 || loads[0] != results.LoadBuiltin {
		if given["lead"] {
			return p, errors.New("-lead: applies to -load builtin, whose pools keep their connections across windows")
		}
		lead, own = 0, nil
	}
	if !given["warmup"] {
		// Once a pool, after its connections are open; a duet's with
		// standalone's beside it, for as long as the pool's slow start.
		p.Warmup = time.Second
		if design == "duet" {
			p.Warmup = 3 * time.Second
		}
	}
	p.Duration, p.Reps = window, 1
	p.Paired = &results.Paired{Pairs: pairs, Seed: seed, Lead: lead, Leads: own, Windows: ownWindow, Duet: design == "duet", Own: process == "own"}
	if check != "" {
		load, d, timed := strings.Cut(check, ":")
		dur := sweep.CrossCheckDuration
		if timed {
			var err error
			if dur, err = time.ParseDuration(d); err != nil {
				return p, fmt.Errorf("-cross-check: %q, want LOAD or LOAD:DURATION such as wrk:15s", check)
			}
		}
		p.Paired.Check = &results.Check{Load: results.Generator(load), Topologies: sweep.CrossCheckTopologies(), GOMAXPROCS: p.GOMAXPROCS[0], Duration: dur}
	}
	return p, nil
}

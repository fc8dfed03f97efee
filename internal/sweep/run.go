package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/internal/wrk"
)

// Options are one sweep, as the compare command's flags give them.
type Options struct {
	// Plan is what to measure; ignored when resuming.
	Plan Plan
	// Dir is the results directory; empty means results/<start time>.
	Dir string
	// Resume finishes the interrupted sweep in Dir: the plan comes from
	// its env.json and the cells measured already are skipped.
	Resume bool
	// FreePorts makes the servers listen on loopback ports the kernel
	// reports free instead of the reference ones.
	FreePorts bool
	// HelloAgent and NginxAgent, when set, are the URLs of procd
	// supervisors (cmd/procd) that run cmd/hello and nginx in other
	// containers, with cmd/hello's unix sockets in SockDir.
	HelloAgent, NginxAgent, SockDir string
	// Command is recorded in env.json: the command line to run again.
	Command []string
	// Progress receives the plan, one line per cell and the report's
	// path; Log receives warnings and what the servers print on failure.
	Progress, Log io.Writer
	// HelloBin, NginxBin and WrkBin override where the programs are.
	HelloBin, NginxBin, WrkBin string
	// Cluster, when set, runs the servers and the load on the machines of
	// a cluster instead of here (compare -swarm).
	Cluster *Cluster
	// Budget, when resuming a -budget sweep, is a new budget for the rest
	// of it; zero gives it what is left of its own.
	Budget time.Duration
	// CalibrateCPUs chooses the plan's CPU lists from a short calibration
	// before the first cell (-cpus auto, calibrate.go), replacing the
	// plan's PinLoad and PinServer.
	CalibrateCPUs bool
	// LoadCgroup, when set, is the control group the load generator runs
	// in (cgroup.New), e.g. one capped with a CPU quota: its quota then
	// counts as the generator's CPUs for the load-bound rule (loadcap.go).
	LoadCgroup *cgroup.Group
	// Render writes the report from the records in the results
	// directory and says which file to read first. The sweep calls it at
	// its end, interrupted or not, so whatever finished is reported; nil
	// writes no report.
	Render func(dir string) (path string, err error)
}

// Outcome is what a sweep did.
type Outcome struct {
	Dir                       string
	Measured, Skipped, Failed int
	Total                     int
	Interrupted               bool
	// OutOfTime says a -budget sweep stopped in the middle of a round
	// because it went past its budget.
	OutOfTime bool
}

// Kept is how many cells are on disk.
func (o Outcome) Kept() int { return o.Measured + o.Failed + o.Skipped }

// ErrPlan marks an error in what was asked for (a bad flag or plan), as
// opposed to a failure while measuring: errors.Is(err, ErrPlan).
var ErrPlan = errors.New("bad plan")

// planError is an error in the plan; its text is the cause's alone.
type planError struct{ error }

func (e planError) Is(target error) bool { return target == ErrPlan }
func (e planError) Unwrap() error        { return e.error }

func planErr(format string, args ...any) error { return planError{fmt.Errorf(format, args...)} }

// sweep is one run being measured.
type sweep struct {
	Options
	// plan is Options.Plan, or the resumed run's; res is what its names
	// and CPU lists stand for, resolved once.
	plan   Plan
	res    Resolved
	env    results.Env
	layout topology.Layout
	done   map[string]bool
	out    Outcome
	// runs are the sweep's records: those of the sweep resumed, loaded
	// once, and every run written since (record).
	runs []results.Run
	// generators put the load on a cell, by name; sessions are the
	// current block's sessions of them, begun as a cell needs one and
	// ended when the block's servers stop.
	generators map[results.Generator]generator
	sessions   map[results.Generator]session
	// pair is the run's network namespaces under -isolate netns, and
	// nsSysctls the network settings they were given.
	pair      *netns.Pair
	nsSysctls map[string]string
	// programs are the targets other than Go, built for this run.
	programs map[string]*target.Program
	// warnings are the run's set-up warnings (warn), for env.json.
	warnings []string
	// start starts a block's servers: stack.Start, a fake in tests.
	start func(context.Context, stack.Config) (servers, error)
	// cl is the cluster's part of a run with Options.Cluster.
	cl *clusterRun
	// refused are the current block's topologies parity refused, with why.
	refused map[string]error
	// clock is what the sweep has spent, for a -budget sweep's plan.
	clock budgetClock
	// acct is where the servers' accounting groups go, nil where the
	// kernel cannot; group is the current block's (servergroup.go).
	acct  *cgroup.Hierarchy
	group *cgroup.Group
}

// servers are a block's running servers as the sweep uses them: a
// *stack.Stack.
type servers interface {
	fmt.Stringer
	// Parity checks every topology's answer; refused says why each
	// failing one must not be measured.
	Parity(ctx context.Context, timeout time.Duration) (rs []parity.Result, refused map[string]error)
	// Alive reports a server that exited, with its stderr tail.
	Alive() error
	Stop() error
	// ServerPid and NginxPid are processes of this harness to wait for
	// idle; 0 for none.
	ServerPid() int
	NginxPid() int
	cpuSource
}

func startStack(ctx context.Context, cfg stack.Config) (servers, error) {
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Run measures every cell of the plan not measured already, writing each
// run as it finishes, then the report of everything in the directory
// (Options.Render). It
// returns early, with what finished on disk and reported, when ctx ends.
// The error says how to finish an incomplete sweep.
func Run(ctx context.Context, o Options) (Outcome, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	s := &sweep{Options: o, done: map[string]bool{}, start: startStack}
	s.clock.began = time.Now()
	// The namespaces go on every return: error, Ctrl-C or the end.
	defer s.closeNetns()
	defer s.closeCluster()
	if err := s.prepare(ctx); err != nil {
		return s.out, err
	}
	runErr := s.calibrate(ctx)
	if runErr == nil {
		runErr = s.measure(ctx)
	}

	s.env.Interrupted = s.out.Interrupted || runErr != nil
	s.env.Spent = s.clock.spent().Round(time.Millisecond)
	if !s.env.Interrupted {
		s.env.End = time.Now().UTC()
	}
	if err := s.writeEnv(); err != nil {
		return s.out, errors.Join(runErr, err)
	}
	// Whatever finished is reported, even after an error or Ctrl-C.
	if s.Render != nil {
		path, err := s.Render(s.Dir)
		if err != nil {
			return s.out, errors.Join(runErr, fmt.Errorf("writing report: %w", err))
		}
		fmt.Fprintf(s.Progress, "report: %s\n", path)
	}
	resume := fmt.Sprintf("%d of %d cells kept in %s; finish with: topobench compare -resume %s", s.out.Kept(), s.out.Total, s.Dir, s.Dir)
	if s.Cluster != nil {
		resume += " -swarm and the same -swarm-* flags"
	}
	switch {
	case runErr != nil:
		if errors.Is(runErr, syscall.EADDRINUSE) && !s.FreePorts {
			runErr = fmt.Errorf("%w (-free-ports picks ports nothing else holds)", runErr)
		}
		return s.out, fmt.Errorf("%w\n%s", runErr, resume)
	case s.out.Interrupted:
		return s.out, fmt.Errorf("interrupted: %s", resume)
	case s.out.Failed > 0:
		return s.out, fmt.Errorf("%d of %d cells failed; see %s", s.out.Failed, s.out.Total, filepath.Join(s.Dir, "summary.md"))
	}
	return s.out, nil
}

// prepare does everything before the first server starts, and refuses a
// run that cannot work before it creates anything.
func (s *sweep) prepare(ctx context.Context) error {
	s.plan = s.Plan
	if s.Resume {
		env, runs, err := results.Load(s.Dir)
		if err != nil {
			return planErr("-resume: %w", err)
		}
		s.env, s.plan = env, Plan{env.Plan}
		s.clock.before = env.Spent
		if s.Budget > 0 {
			if !s.budgeted() {
				return planErr("-budget: the sweep in %s was planned without one (-reps); resume it without -budget", s.Dir)
			}
			// A new budget for the rest: what was spent counts against it.
			s.plan.RepsAuto.Budget = s.Budget + env.Spent
		}
		s.resumeFrom(runs)
		s.env.Interrupted, s.env.End = false, time.Time{}
		if err := s.checkResumeCluster(); err != nil {
			return err
		}
	}
	var err error
	if s.res, err = s.plan.Resolve(); err != nil {
		return planError{err}
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return err
	}
	if err := s.res.CheckCPUs(allowed); err != nil {
		return planError{err}
	}
	if !s.Resume {
		if err := checkOut(s.Dir); err != nil {
			return planError{err}
		}
	}
	tops := s.res.Tops
	if s.HelloAgent != "" {
		switch {
		case s.plan.PinServer != "":
			return planErr("-pin-server: the servers run elsewhere (-hello-agent); pin them there")
		case s.FreePorts:
			return planErr("-free-ports: with -hello-agent the servers listen on the reference ports")
		case s.NginxAgent == "" && slices.ContainsFunc(tops, topology.Topology.ViaNginx):
			return planErr("-nginx-agent: topologies through nginx need it with -hello-agent")
		}
	} else if s.NginxAgent != "" {
		return planErr("-nginx-agent needs -hello-agent")
	}

	if s.Cluster != nil {
		if err := s.checkClusterPlan(); err != nil {
			return err
		}
	}
	if err := s.checkKeepaliveHere(); err != nil {
		return err
	}
	if err := s.chooseIsolation(); err != nil {
		return err
	}

	// Before the first child and before the preflight reads what a child
	// gets.
	if _, _, err := preflight.RaiseOpenFiles(); err != nil {
		s.warn("%v", err)
	}
	pf, err := preflight.Check(ctx, preflight.Options{Connections: slices.Max(s.plan.Connections), Tools: s.tools(tops),
		Namespaces: s.plan.Isolation == results.IsolateNetns})
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if err := pf.Fatal(); err != nil {
		_ = pf.Write(s.Log)
		return fmt.Errorf("preflight: %w (see topobench preflight)", err)
	}
	if err := s.findTools(ctx, tops); err != nil {
		return err
	}
	s.prepareAccounting()
	cpus, where := allowed.Len(), "here"
	if set := s.res.ServerCPUs; !set.IsEmpty() {
		cpus, where = set.Len(), "the servers have (CPU list "+set.String()+")"
	}
	for _, g := range s.plan.GOMAXPROCS {
		if g > cpus {
			fmt.Fprintf(s.Log, "warning: GOMAXPROCS=%d exceeds the %s %s; expect scheduler contention, not parallelism\n", g, numfmt.Plural(cpus, "CPU"), where)
		}
	}
	// The namespaces come before the results directory, so a kernel that
	// refuses -link-delay leaves nothing behind.
	if s.plan.Isolation == results.IsolateNetns {
		wanted, err := preflight.Wanted(preflight.Options{})
		if err != nil {
			return err
		}
		s.nsSysctls = namespaceSysctls(results.ReadSysctls(pf.SysctlNames()), wanted, nginxconf.Backlog(slices.Max(s.plan.Connections)))
		if err := s.createNetns(ctx, s.nsSysctls); err != nil {
			return err
		}
	}

	if s.Cluster != nil {
		if err := s.prepareCluster(ctx); err != nil {
			return err
		}
	}

	if !s.Resume {
		if s.Dir == "" {
			s.Dir = filepath.Join("results", time.Now().Format("20060102-150405"))
		}
		if err := results.Create(s.Dir); err != nil {
			return err
		}
		s.env = results.Env{Command: s.Command, Start: time.Now().UTC(), Plan: s.plan.Plan, Cluster: s.env.Cluster}
		s.recordEnv(ctx, pf)
	}
	s.out.Dir = s.Dir
	if err := s.writeEnv(); err != nil {
		return err
	}
	fmt.Fprintf(s.Progress, "topobench: results in %s\n", s.Dir)

	if s.layout, err = s.addresses(); err != nil {
		return err
	}
	if s.pair != nil {
		s.layout.Host = s.pair.ServerAddr.String()
	}
	if s.cl != nil {
		s.layout = s.cl.layout()
	}
	if s.HelloBin == "" && s.HelloAgent == "" && s.cl == nil && stack.NeedsHello(tops) && slices.Contains(s.plan.TargetList(), results.TargetGo) {
		fmt.Fprintln(s.Log, "building cmd/hello")
		if s.HelloBin, err = hellorun.Build(ctx, filepath.Join(s.Dir, "bin")); err != nil {
			return fmt.Errorf("building cmd/hello: %w", err)
		}
	}
	if err := s.buildTargets(ctx, tops); err != nil {
		return err
	}
	return s.newGenerators()
}

// tools are the programs this run needs here: wrk when the plan loads
// with it, nginx when a topology goes through it and it does not run in a
// container of its own.
func (s *sweep) tools(tops []topology.Topology) []preflight.Tool {
	tools := []preflight.Tool{}
	if s.HelloAgent == "" && s.Cluster == nil && slices.ContainsFunc(tops, topology.Topology.ViaNginx) {
		tools = append(tools, preflight.Nginx)
	}
	if slices.Contains(s.plan.Generators(), results.LoadWrk) {
		tools = append(tools, preflight.Wrk)
	}
	return tools
}

// findTools finds the tools the plan needs (see tools).
func (s *sweep) findTools(ctx context.Context, tops []topology.Topology) error {
	var err error
	need := s.tools(tops)
	if s.WrkBin == "" && slices.Contains(need, preflight.Wrk) {
		if s.WrkBin, err = exec.LookPath("wrk"); err != nil {
			return errors.New("wrk not found in PATH: install it (make tools, or apt-get install wrk)")
		}
	}
	if s.NginxBin == "" && slices.Contains(need, preflight.Nginx) {
		for _, t := range tops {
			if t.ViaNginx() {
				if s.NginxBin, err = nginx.Find(); err != nil {
					return fmt.Errorf("topology %s needs nginx: %w", t.Name, err)
				}
				break
			}
		}
	}
	return nil
}

// recordEnv fills in the machine, the versions and the settings in effect.
func (s *sweep) recordEnv(ctx context.Context, pf preflight.Report) {
	results.FillHost(&s.env)
	s.env.Sysctls = results.ReadSysctls(pf.SysctlNames())
	s.env.NetnsSysctls = s.nsSysctls
	if s.WrkBin != "" {
		if v, err := wrk.Version(ctx, s.WrkBin); err == nil {
			s.env.WrkVersion = v
		}
	}
	if s.NginxBin != "" {
		if v, err := nginx.GetVersion(ctx, s.NginxBin); err == nil {
			s.env.NginxVersion = v.String()
		}
	}
	if s.NginxAgent != "" {
		if st, err := (supervise.Client{URL: s.NginxAgent}).Status(ctx); err == nil {
			if v, err := nginx.ParseVersion(st.Version); err == nil {
				s.env.NginxVersion = v.String()
			}
		}
	}
}

// addresses chooses where the servers listen: the reference addresses
// with sockets under Dir, the agents' socket directory, or free ports.
func (s *sweep) addresses() (topology.Layout, error) {
	sock, err := filepath.Abs(filepath.Join(s.Dir, "sock"))
	if err != nil {
		return topology.Layout{}, err
	}
	l := topology.DefaultLayout(sock)
	switch {
	case s.HelloAgent != "":
		l = topology.DefaultLayout(s.SockDir)
	case s.FreePorts:
		if l, err = topology.FreeLayout(sock); err != nil {
			return topology.Layout{}, err
		}
	}
	if s.HelloAgent != "" {
		return l, nil
	}
	// sun_path holds 108 bytes; a deep results directory would not fit.
	for _, p := range []string{l.FCGIUnix, l.FastUnix, l.HTTPUnix} {
		if len(p) >= 100 {
			return topology.Layout{}, fmt.Errorf("unix socket path %s is too long (limit ~100 bytes); use a shorter -out", p)
		}
	}
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return topology.Layout{}, fmt.Errorf("creating socket directory: %w", err)
	}
	return l, nil
}

// measure runs every remaining block: servers started, parity checked,
// cells measured, servers stopped.
func (s *sweep) measure(ctx context.Context) error {
	if s.plan.Paired != nil {
		return s.measurePaired(ctx)
	}
	p := s.plan
	blocks := p.Blocks()
	for _, b := range blocks {
		s.out.Total += len(b.Cells)
	}
	todo := Remaining(blocks, s.done)
	n := 0
	for _, b := range todo {
		n += len(b.Cells)
	}
	s.out.Skipped = s.out.Total - n
	var est time.Duration
	for _, b := range todo {
		for _, c := range b.Cells {
			est += p.CellTime(c)
		}
	}
	if s.budgeted() {
		a := p.RepsAuto
		fmt.Fprintf(s.Progress, "budget %s (%s left): %d cells (%s) first, %s a run, then more runs where the ratios to standalone are wider than ±%s, up to %d a cell; intervals at %.4g%% a look\n",
			roundDur(a.Budget), roundDur(max(s.budgetLeft(), 0)), s.out.Total, p.describe(), roundDur(p.Duration), numfmt.Pct(a.Within), a.Max, 100*a.Level())
	} else {
		fmt.Fprintf(s.Progress, "%d cells (%s), %d to run: about %s\n", s.out.Total, p.describe(), n, roundDur(est))
	}

	start := time.Now()
	for _, b := range todo {
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil
		}
		if err := s.block(ctx, b, start); err != nil {
			return err
		}
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil
		}
	}
	return s.moreRounds(ctx, blocks, start)
}

// describe is the plan's shape for the progress line.
func (p Plan) describe() string {
	parts := []string{fmt.Sprintf("%d topologies", len(p.Topologies)), fmt.Sprintf("GOMAXPROCS %v", p.GOMAXPROCS)}
	if len(p.TargetList()) > 1 {
		parts = append([]string{fmt.Sprintf("targets %v", p.TargetList())}, parts...)
	}
	if len(p.Connections) > 1 {
		parts = append(parts, fmt.Sprintf("connections %v", p.Connections))
	}
	if len(p.LoadList()) > 1 {
		parts = append(parts, fmt.Sprintf("loads %v", p.LoadList()))
	}
	if len(p.Schedules) > 0 {
		parts = append(parts, fmt.Sprintf("%d schedules", len(p.Schedules)))
	}
	return strings.Join(append(parts, fmt.Sprintf("%d reps", p.Reps)), " x ")
}

// block measures the cells of one start of the servers.
func (s *sweep) block(ctx context.Context, b Block, start time.Time) error {
	st, err := s.startBlock(ctx, b)
	if st == nil {
		return err
	}
	defer s.stopBlock(st)
	return s.runCells(ctx, st, b.Cells, start, map[string]bool{})
}

// startBlock starts the servers of block b and checks parity; nil servers
// and no error when ctx ended meanwhile.
func (s *sweep) startBlock(ctx context.Context, b Block) (servers, error) {
	began := time.Now()
	defer func() { s.clock.block.add(time.Since(began)) }()
	tops := s.res.TopologiesOf(b.Cells)
	if s.plan.RepsAuto != nil && s.plan.RepsAuto.Budget > 0 {
		// A budget's later rounds hold a few cells; the servers serve
		// every topology of the block so that any can follow.
		tops = s.res.TopologiesOf(s.plan.Cells())
	}
	st, err := s.start(ctx, stack.Config{
		Dir: s.Dir, Layout: s.layout, Topologies: tops, GOMAXPROCS: b.GOMAXPROCS,
		HelloBin: s.HelloBin, NginxBin: s.NginxBin, CPUs: s.res.ServerCPUs,
		HelloAgent: s.HelloAgent, NginxAgent: s.NginxAgent,
		NetNS: s.serverNS(), ClientNetNS: s.clientNS(),
		Target: b.Target, Program: s.programs[b.Target], PoolThreads: target.DefaultPoolThreads,
		Path:        s.plan.Path,
		Connections: s.plan.mostConnections(), UpstreamKeepalive: s.plan.keepaliveSize(b.Keepalive),
		Account: s.newServersGroup(),
	})
	if err != nil {
		s.removeServersGroup()
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil, nil
		}
		return nil, err
	}
	if err := s.recordNginx(st, b.Keepalive); err != nil {
		s.stopBlock(st)
		return nil, err
	}
	if wc, ok := st.(interface{ WorkCalibration() float64 }); ok && s.env.WorkCalibration == 0 {
		if s.env.WorkCalibration = wc.WorkCalibration(); s.env.WorkCalibration > 0 {
			if err := s.writeEnv(); err != nil {
				s.stopBlock(st)
				return nil, err
			}
		}
	}
	_, refused := st.Parity(ctx, 5*time.Second)
	for _, t := range tops {
		if err := refused[t.Name]; err != nil {
			fmt.Fprintf(s.Log, "refusing to measure %s: %v\n", t.Name, err)
		}
	}
	s.refused = refused
	fmt.Fprintf(s.Progress, "%sGOMAXPROCS=%d: %s; parity: %s\n", targetPrefix(b.Target), b.GOMAXPROCS, st, parityLineFor(b.Target, s.plan.RequestPath(), tops, refused))
	return st, nil
}

func (s *sweep) stopBlock(st servers) {
	began := time.Now()
	s.endSessions()
	if err := st.Stop(); err != nil {
		s.warn("%v", err)
	}
	s.removeServersGroup()
	s.clock.block.add(time.Since(began))
}

// runCells measures cells on running servers. warmed holds the cells
// (without their rep) warmed on these servers already: a -budget sweep
// warms each once per start of the servers, other sweeps every run.
func (s *sweep) runCells(ctx context.Context, st servers, cells []Cell, start time.Time, warmed map[string]bool) error {
	for _, c := range cells {
		if ctx.Err() != nil {
			return nil
		}
		if s.outOfBudget() {
			return nil
		}
		if err := s.usePool(ctx, st, c.Topology); err != nil {
			return err
		}
		s.progress(c, start)
		once := c
		once.Rep = 0
		warm := s.plan.Warmup > 0 && !(s.budgeted() && warmed[once.Key()])
		began := time.Now()
		run, raw := s.cell(ctx, st, c, s.refused[c.Topology], warm)
		warmed[once.Key()] = warmed[once.Key()] || (warm && run.Warmup > 0)
		if run.Warmup > 0 {
			s.clock.warm.add(run.Warmup)
		}
		s.clock.cell.add(time.Since(began) - run.Warmup - s.plan.Measured(c))
		if ctx.Err() != nil && run.Error != "" {
			// The cell was cut short: not a measurement, not kept.
			fmt.Fprintln(s.Progress, "interrupted")
			return nil
		}
		if err := s.record(run, raw); err != nil {
			return err
		}
		if run.Failed() {
			s.out.Failed++
			fmt.Fprintf(s.Progress, "FAILED: %s\n", failure(run.Error))
		} else {
			s.out.Measured++
			fmt.Fprintln(s.Progress, cellLine(run)+cpuNote(run)+netNote(run)+s.ratioNote(c))
		}
		if err := st.Alive(); err != nil {
			return fmt.Errorf("during %s: %w", c, err)
		}
	}
	return nil
}

// progress starts a cell's line: n/N, elapsed and an estimate of the time
// left from what cells really took once some have run (restarts, parity
// checks and wrk's exit add to the nominal time).
func (s *sweep) progress(c Cell, start time.Time) {
	n := s.out.Kept() + 1
	elapsed := time.Since(start)
	per := s.plan.CellTime(c)
	if ran := s.out.Measured + s.out.Failed; ran > 0 {
		per = elapsed / time.Duration(ran)
	}
	left := time.Duration(s.out.Total-n+1) * per
	if s.budgeted() {
		// The count of runs is not known ahead: the budget is.
		fmt.Fprintf(s.Progress, "[%d] %s  (elapsed %s, budget left %s) ", n, c, roundDur(s.clock.spent()), roundDur(max(s.budgetLeft(), 0)))
		return
	}
	fmt.Fprintf(s.Progress, "[%*d/%d] %s  (elapsed %s, left ~%s) ",
		width(s.out.Total), n, s.out.Total, c, roundDur(elapsed), roundDur(left))
}

func parityLine(tops []topology.Topology, refused map[string]error) string {
	if len(refused) == 0 {
		return fmt.Sprintf("%d topologies answer identically (141-byte header block, same body)", len(tops))
	}
	var names []string
	for _, t := range tops {
		if refused[t.Name] != nil {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("REFUSED %s (see the log above); measuring the other %d", strings.Join(names, ", "), len(tops)-len(names))
}

// cell runs the warmup (discarded) and the measured load of one cell.
func (s *sweep) cell(ctx context.Context, st servers, c Cell, refused error, warm bool) (results.Run, []byte) {
	p := s.plan
	run := results.Run{
		Cell:       c,
		URL:        withQuery(withPath(s.layout.URL(s.res.Topology(c.Topology)), p.Path), c.Schedule),
		LoadCPUs:   p.PinLoad,
		ServerCPUs: p.PinServer,
		Start:      time.Now().UTC(),
	}
	if refused != nil {
		run.Error = "parity check: " + refused.Error()
		return run, nil
	}
	run.Settle = s.settle(ctx, st)
	sess, err := s.session(ctx, c.LoadName(), false)
	if err != nil {
		run.Error = err.Error()
		return run, nil
	}
	// send is the cell as the generator sends it: a fraction of the
	// capacity becomes a rate, the record keeps the fraction.
	send := c
	if c.Fraction > 0 {
		rate, err := s.fractionRate(c)
		if err != nil {
			run.Error = err.Error()
			return run, nil
		}
		send.Rate = rate
	}
	name := poolName(c)
	if err := sess.open(ctx, name, send, run.URL); err != nil {
		run.Error = "opening the load's connections: " + err.Error()
		return run, nil
	}
	defer func() {
		if err := sess.close(ctx, name); err != nil && ctx.Err() == nil {
			s.warn("%v", err)
		}
	}()
	if warm {
		began := time.Now()
		_, err := sess.window(ctx, name, p.Warmup, nil)
		run.Warmup = time.Since(began)
		if err != nil {
			run.Error = "warmup: " + err.Error()
			return run, nil
		}
	}
	before, netBefore := takeSample(ctx, procfs, st), s.readNet(st)
	run.Start = time.Now().UTC()
	raw, err := sess.window(ctx, name, p.Measured(c), &run)
	run.Cell = c
	run.Wall = time.Since(run.Start)
	s.account(&run, before, takeSample(ctx, procfs, st))
	run.Net = netRecord(netBefore, s.readNet(st), s.countsUpstream(s.res.Topology(c.Topology)), s.pair != nil)
	switch {
	case err != nil:
		run.Error = err.Error()
	case run.Figures != nil && run.Figures.Requests == 0 && !c.Probe:
		// A rate of zero is no measurement (a generator that spent its
		// window starting up); as a figure it would sink every ratio.
		run.Error = "no request was answered in the measured time"
	}
	return run, raw
}

// fractionRate is the rate a cell at a fraction of capacity sends: that
// fraction of the least median req/s that the block's topologies (but the
// nginx-only ceilings) reached closed loop at the same handler work, from
// the records, so every topology is loaded at the same rate.
func (s *sweep) fractionRate(c Cell) (float64, error) {
	byTop := map[string][]float64{}
	for _, r := range s.runs {
		same := r.TargetName() == c.TargetName() && r.GOMAXPROCS == c.GOMAXPROCS && r.Work == c.Work
		if !same || r.Failed() || r.OpenLoop() || r.Probe {
			continue
		}
		if t, err := topology.Lookup(r.Topology); err != nil || t.Reference {
			continue
		}
		byTop[r.Topology] = append(byTop[r.Topology], r.Figures.ReqPerSec)
	}
	least := math.Inf(1)
	for _, rates := range byTop {
		least = min(least, stats.Summarize(rates).Center)
	}
	if math.IsInf(least, 1) || least <= 0 {
		return 0, fmt.Errorf("open loop at %g of capacity: no closed-loop run at GOMAXPROCS=%d, work %s measured the capacity", c.Fraction, c.GOMAXPROCS, c.Work)
	}
	return math.Round(c.Fraction * least), nil
}

// withQuery asks the server to work and wait before answering (cmd/hello's
// ?work= and ?wait=), as the schedule says; durations in ASCII ("200us").
func withQuery(url string, sc results.Schedule) string {
	var q []string
	for _, p := range []struct {
		key string
		d   time.Duration
	}{{"work", sc.Work}, {"wait", sc.Wait}} {
		if p.d > 0 {
			q = append(q, p.key+"="+strings.ReplaceAll(p.d.String(), "µ", "u"))
		}
	}
	if len(q) == 0 {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&" // the plan's -path has a query of its own
	}
	return url + sep + strings.Join(q, "&")
}

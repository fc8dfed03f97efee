package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/tlscert"
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
	// HelloBin, NginxBin and WrkBin override where the programs are;
	// LoadBin is the binary with the built-in engine's load command, this
	// one when empty.
	HelloBin, NginxBin, WrkBin, LoadBin string
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
	// counts as the generator's CPUs for the load-bound rule (internal/rig).
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
var ErrPlan = plan.ErrPlan

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
	// ratios says the progress notes each cell's ratio to standalone so
	// far: the design stops by them, or measures them pair by pair.
	ratios bool
	// runs are the sweep's records: those of the sweep resumed, loaded
	// once, and every run written since (record).
	runs []results.Run
	// generators put the load on a cell, by name; sessions are the
	// current block's sessions of them, begun as a cell needs one and
	// ended when the block's servers stop.
	generators map[results.Generator]loadgen.Generator
	sessions   map[results.Generator]loadgen.Session
	// programs are the targets other than Go, built for this run.
	programs map[string]*target.Program
	// tls is the sweep's certificate and TLS settings, when the plan has
	// a topology over TLS (prepareTLS).
	tls *tlscert.Setup
	// warnings are the run's set-up warnings (warn), for env.json.
	warnings []string
	// refused are the current block's topologies parity refused, with why.
	refused map[string]error
	// clock is what the sweep has spent, for a -budget sweep's plan.
	clock budgetClock
	// rig is what the run brings up around the measurement: the
	// namespaces, the servers' groups, the probes, the cluster, and the
	// start of a block's servers (stack.Start, a fake in tests).
	rig *rig.Rig
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
	s := &sweep{Options: o, done: map[string]bool{}}
	s.rig = rig.New(rig.Config{Dir: o.Dir, Progress: o.Progress, Log: o.Log, Warn: s.warn, LoadCgroup: o.LoadCgroup})
	s.clock.began = time.Now()
	// The namespaces go on every return: error, Ctrl-C or the end.
	defer s.rig.CloseNetns()
	defer s.closeCluster()
	defer s.rig.StopSpeedProbes()
	if err := s.prepare(ctx); err != nil {
		return s.out, err
	}
	defer s.holdCPULatency()()
	var runErr error
	if s.plan.SpeedProbe {
		runErr = s.rig.StartSpeedProbes(ctx, s.LoadBin)
	}
	if runErr == nil {
		runErr = s.calibrate(ctx)
	}
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
// run that cannot work before it creates anything: the plan checked, the
// machine checked, the namespaces, the results directory, then where the
// servers listen and the programs they run.
func (s *sweep) prepare(ctx context.Context) error {
	s.plan = s.Plan
	s.plan.DefaultTLS()
	if s.Resume {
		if err := s.resumeDir(); err != nil {
			return err
		}
	}
	allowed, err := s.checkPlan()
	if err != nil {
		return err
	}
	pf, err := s.preflight(ctx)
	if err != nil {
		return err
	}
	s.warnGOMAXPROCS(allowed)
	// The namespaces come before the results directory, so a kernel that
	// refuses -link-delay leaves nothing behind.
	if err := s.prepareNetns(ctx, pf); err != nil {
		return err
	}
	if s.Cluster != nil {
		if err := s.prepareCluster(ctx); err != nil {
			return err
		}
	}
	if err := s.prepareDir(ctx, pf); err != nil {
		return err
	}
	return s.prepareServers(ctx)
}

// resumeDir takes the plan, the time spent and the records of the sweep
// in Dir to resume, with a new budget when one is given.
func (s *sweep) resumeDir() error {
	env, runs, err := results.Load(s.Dir)
	if err != nil {
		return &plan.FieldError{Field: plan.Resume, Err: err}
	}
	s.env, s.plan = env, Plan{Plan: env.Plan}
	s.warnings = env.Warnings // the record keeps the first part's
	s.clock.before = env.Spent
	if s.Budget > 0 {
		if !s.budgeted() {
			return plan.Errorf(plan.Budget, "the sweep in %s was planned without one (-reps); resume it without -budget", s.Dir)
		}
		// A new budget for the rest: what was spent counts against it.
		s.plan.RepsAuto.Budget = s.Budget + env.Spent
	}
	s.resumeFrom(runs)
	s.env.Interrupted, s.env.End = false, time.Time{}
	return nil
}

// where is where the sweep runs, for the plan's rules.
func (s *sweep) where() plan.Where {
	w := plan.Where{HelloAgent: s.HelloAgent != "", NginxAgent: s.NginxAgent != "", Cluster: s.Cluster != nil,
		FreePorts: s.FreePorts, Resume: s.Resume, Dir: s.Dir}
	if s.Resume && s.env.Cluster != nil {
		w.ResumedOn = s.env.Cluster.Backend
	}
	return w
}

// checkPlan checks the plan where it runs (plan.Check), then what the
// machine decides: the CPUs allowed, the targets' toolchains, a results
// directory in use, the isolation; it returns the CPUs allowed here.
func (s *sweep) checkPlan() (cpuset.CPUSet, error) {
	var err error
	if s.res, err = s.plan.Check(s.where()); err != nil {
		return cpuset.CPUSet{}, err
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return allowed, err
	}
	if err := s.res.CheckCPUs(allowed); err != nil {
		return allowed, err
	}
	if err := checkTargets(s.plan.TargetList()); err != nil {
		return allowed, err
	}
	if !s.Resume {
		if err := checkOut(s.Dir); err != nil {
			return allowed, err
		}
	}
	if s.Cluster != nil {
		s.settleClusterIsolation()
	}
	return allowed, s.chooseIsolation()
}

// preflight checks the machine for the plan and finds its tools.
func (s *sweep) preflight(ctx context.Context) (preflight.Report, error) {
	// Before the first child and before the preflight reads what a child
	// gets.
	if _, _, err := preflight.RaiseOpenFiles(); err != nil {
		s.warn("%v", err)
	}
	tops := s.res.Tops
	pf, err := preflight.Check(ctx, preflight.Options{Connections: slices.Max(s.plan.Connections), Tools: s.tools(tops),
		Namespaces: s.plan.Isolation == results.IsolateNetns})
	if err != nil {
		return pf, fmt.Errorf("preflight: %w", err)
	}
	if err := pf.Fatal(); err != nil {
		_ = pf.Write(s.Log)
		return pf, fmt.Errorf("preflight: %w (see topobench preflight)", err)
	}
	if err := s.findTools(ctx, tops); err != nil {
		return pf, err
	}
	s.prepareAccounting()
	if err := s.prepareWeights(); err != nil {
		return pf, err
	}
	return pf, nil
}

// warnGOMAXPROCS warns of a processor value above the servers' CPUs.
// In a duet it says what the other side's load adds: Go with more Ps
// than CPUs, sharing them with a busy neighbour, leaves some connections
// unanswered for seconds, which the load counts as timeouts.
func (s *sweep) warnGOMAXPROCS(allowed cpuset.CPUSet) {
	cpus, where := allowed.Len(), "here"
	if set := s.res.ServerCPUs; !set.IsEmpty() {
		cpus, where = set.Len(), "the servers have (CPU list "+set.String()+")"
	}
	for _, g := range s.plan.GOMAXPROCS {
		if g <= cpus {
			continue
		}
		msg := fmt.Sprintf("GOMAXPROCS=%d exceeds the %s %s; expect scheduler contention, not parallelism", g, numfmt.Plural(cpus, "CPU"), where)
		if s.plan.Duet() {
			msg += "; in a duet each side's Go shares them with the other side's load, and some of its requests wait seconds for an answer: expect timeouts on that side (-design paired gives each window all of them)"
		}
		s.warn("%s", msg)
	}
}

// prepareNetns creates the network namespaces of -isolate netns.
func (s *sweep) prepareNetns(ctx context.Context, pf preflight.Report) error {
	if s.plan.Isolation != results.IsolateNetns {
		return nil
	}
	wanted, err := preflight.Wanted(preflight.Options{})
	if err != nil {
		return err
	}
	sysctls := rig.NamespaceSysctls(results.ReadSysctls(pf.SysctlNames()), wanted, nginxconf.Backlog(slices.Max(s.plan.Connections)))
	return s.rig.CreateNetns(ctx, s.plan.LinkDelay, sysctls)
}

// prepareDir creates the results directory of a new sweep, and writes
// env.json.
func (s *sweep) prepareDir(ctx context.Context, pf preflight.Report) error {
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
	s.out.Dir, s.rig.Dir = s.Dir, s.Dir
	if err := s.writeEnv(); err != nil {
		return err
	}
	fmt.Fprintf(s.Progress, "topobench: results in %s\n", s.Dir)
	return nil
}

// prepareServers chooses where the servers listen, builds the programs
// they run and readies the load generators.
func (s *sweep) prepareServers(ctx context.Context) error {
	var err error
	if s.layout, err = s.addresses(); err != nil {
		return err
	}
	if a := s.rig.LoadTarget(); a.IsValid() {
		s.layout.Host = a.String()
	}
	if s.rig.OnCluster() {
		s.layout = s.rig.ClusterLayout()
	}
	tops := s.res.Tops
	if s.HelloBin == "" && s.HelloAgent == "" && !s.rig.OnCluster() && stack.NeedsHello(tops) && slices.Contains(s.plan.TargetList(), results.TargetGo) {
		fmt.Fprintln(s.Log, "building cmd/hello")
		if s.HelloBin, err = hellorun.Build(ctx, filepath.Join(s.Dir, "bin")); err != nil {
			return fmt.Errorf("building cmd/hello: %w", err)
		}
	}
	if err := s.buildTargets(ctx, tops); err != nil {
		return err
	}
	if err := s.prepareTLS(); err != nil {
		return err
	}
	return s.newGenerators()
}

// prepareTLS makes the sweep's certificate in its directory, once, when
// the plan has a topology over TLS; a resumed sweep goes on with the one
// it made.
func (s *sweep) prepareTLS() error {
	if s.plan.TLS == nil {
		return nil
	}
	set := *s.plan.TLS
	// Absolute: nginx reads them from its own prefix.
	dir, err := filepath.Abs(s.Dir)
	if err != nil {
		return fmt.Errorf("making the sweep's tls certificate: %w", err)
	}
	pair := tlscert.Pair{Cert: filepath.Join(dir, tlscert.CertFile), Key: filepath.Join(dir, tlscert.KeyFile)}
	if _, err := os.Stat(pair.Cert); err != nil || !s.Resume {
		var also []netip.Addr
		if a := s.rig.LoadTarget(); a.IsValid() {
			also = append(also, a) // the servers' end of the run's veth
		}
		if pair, err = tlscert.Generate(dir, set.Key, also...); err != nil {
			return fmt.Errorf("making the sweep's tls certificate: %w", err)
		}
	}
	s.tls = &tlscert.Setup{Pair: pair, Settings: set}
	return nil
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
	if slices.Contains(s.plan.Generators(), results.LoadH2load) {
		if _, err := exec.LookPath("h2load"); err != nil {
			return errors.New("h2load not found in PATH: install it (apt-get install nghttp2-client)")
		}
	}
	if slices.Contains(s.plan.Generators(), results.LoadStime) {
		if _, err := exec.LookPath("openssl"); err != nil {
			return errors.New("openssl (for s_time) not found in PATH: install it (apt-get install openssl)")
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
	s.env.NetnsSysctls = s.rig.NetnsSysctls()
	// The Machine table names wrk's version even when the plan loads with
	// the built-in engine only: the installed one, as found in PATH.
	bin := s.WrkBin
	if bin == "" {
		bin, _ = exec.LookPath("wrk")
	}
	if bin != "" {
		if v, err := wrk.Version(ctx, bin); err == nil {
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

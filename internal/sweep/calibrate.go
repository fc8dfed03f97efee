package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// -cpus auto: the split of the CPUs between the load generator and the
// servers comes from a short calibration before the sweep.
//
// The calibration starts the servers at the plan's most processors, puts
// the CPUs half and half, and runs the plan's first load generator closed
// loop at the plan's most connections on standalone and, when the plan
// goes through nginx, on nginx-return (the cheapest path for the servers,
// so the hardest for the load generator to feed): a warmup of at most
// calibrateWarmup, then at most calibrateRun measured, the CPU time of
// every process read as for a cell. From the CPU µs per request of each
// side, the model (ChooseSplit) predicts the load generator's share of L
// CPUs when the servers saturate the rest. Nothing of the calibration is
// kept as a cell; env.json keeps its figures and the split (CPUSplit).

// Bounds of one calibration run (a plan with shorter runs uses its own),
// and of the calibration's runs together, once the servers answer (their
// start has deadlines of its own): past it the load generator gets the
// first CPU, as with -cpus first, and a warning says so.
const (
	calibrateWarmup = time.Second
	calibrateRun    = 2 * time.Second
	calibrateMax    = 30 * time.Second
)

// ChooseSplit divides cpus (at least 2) between the load generator and
// the servers from the calibration's figures, and fills in each figure's
// Predicted share at the split chosen.
//
// With L load CPUs the servers have S = len(cpus) − L; a path whose
// servers can use P of them (Parallel, 0 for all) saturates at
// min(S, P) ÷ ServerUS requests a µs, which costs the load generator
// LoadUS each: a share of LoadUS × min(S, P) ÷ (ServerUS × L) of its CPUs.
// A figure without ServerUS (not measured) is left out.
// The split is the fewest load CPUs (the most for the servers) that keep
// every path under results.LoadBoundShare; failing that, the fewest that
// keep the paths that are not ceilings under it (the ceiling will be
// load-bound, and the note says so); failing that too, the most load CPUs
// (the servers keep one), and the note says no split keeps the load side
// out of the way. The load CPUs are the first of cpus.
func ChooseSplit(cpus []int, figs []results.SplitFigure) (load, server cpuset.CPUSet, headroom bool, note string) {
	n := len(cpus)
	share := func(f results.SplitFigure, l int) float64 {
		if f.ServerUS <= 0 || f.LoadUS <= 0 {
			return 0
		}
		s := float64(n - l)
		if f.Parallel > 0 {
			s = min(s, float64(f.Parallel))
		}
		return f.LoadUS * s / (f.ServerUS * float64(l))
	}
	fits := func(l int, all bool) bool {
		for _, f := range figs {
			if (all || !f.Reference) && share(f, l) >= results.LoadBoundShare {
				return false
			}
		}
		return true
	}
	l := 0
	for _, all := range []bool{true, false} {
		for try := 1; try < n && l == 0; try++ {
			if fits(try, all) {
				l = try
			}
		}
		if l > 0 {
			headroom = all
			if !all {
				var names []string
				for _, f := range figs {
					if f.Reference && share(f, l) >= results.LoadBoundShare {
						names = append(names, f.Topology)
					}
				}
				note = fmt.Sprintf("no split keeps the load generator under %.0f%% at %s's saturation (a ceiling: expect it load-bound; to measure it, use more load machines: compare -swarm)",
					100*results.LoadBoundShare, strings.Join(names, ", "))
			}
			break
		}
	}
	if l == 0 {
		l = n - 1
		note = fmt.Sprintf("no split keeps the load side out of the way: the load generator would use %.0f%% or more of its CPUs at the servers' saturation whatever the split; the cells will be load-bound. Use more load machines: compare -swarm",
			100*results.LoadBoundShare)
	}
	for i := range figs {
		figs[i].Predicted = math.Round(1000*share(figs[i], l)) / 1000
	}
	return cpuset.Of(cpus[:l]...), cpuset.Of(cpus[l:]...), headroom, note
}

// calibrate chooses the CPU split for -cpus auto (Options.CalibrateCPUs)
// before the first cell, records it in env.json and says it in the
// progress. Nothing to do when resuming (the plan has its lists), on a
// cluster, or with the servers elsewhere. Cut short by ctx, it leaves the
// plan's lists as they were and returns nil: the sweep then stops as
// interrupted.
func (s *sweep) calibrate(ctx context.Context) error {
	if !s.CalibrateCPUs || s.Resume || s.rig.OnCluster() || s.HelloAgent != "" {
		return nil
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return err
	}
	cpus := allowed.CPUs()
	rec := &results.CPUSplit{CPUs: len(cpus)}
	if len(cpus) < 2 {
		rec.Note = "fewer than 2 CPUs: the load generator and the servers share them"
		fmt.Fprintf(s.Progress, "cpus auto: %s\n", rec.Note)
		return s.applySplit(rec, cpuset.CPUSet{}, cpuset.CPUSet{})
	}

	began := time.Now()
	cal, rec, tops, err := s.calibrationSweep(cpus, rec)
	if err != nil || tops == nil {
		return err
	}
	p := &cal.plan
	tgt := p.TargetList()[0]
	var names []string
	for _, t := range tops {
		names = append(names, t.Name)
	}
	fmt.Fprintf(s.Progress, "cpus auto: calibrating the split of CPUs %s: %s on %s, servers on %s, %s -c%d, GOMAXPROCS=%d, %s each\n",
		allowed, strings.Join(names, " and "), p.PinLoad, p.PinServer, rec.Generator, rec.Connections, rec.GOMAXPROCS, p.Warmup+p.Duration)
	late := func() error {
		rec = &results.CPUSplit{CPUs: len(cpus), Took: time.Since(began),
			Note: fmt.Sprintf("the calibration did not finish within %s (a busy machine?): the load generator gets the first CPU, as with -cpus first", calibrateMax)}
		s.warn("cpus auto: %s", rec.Note)
		return s.applySplit(rec, s.res.LoadCPUs, s.res.ServerCPUs)
	}
	st, err := s.startCalibration(ctx, cal, tops, rec.GOMAXPROCS, tgt)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("cpus auto: starting the servers for the calibration: %w (-cpus first puts the load generator on the first CPU without calibrating)", err)
	}
	cctx, cancel := context.WithTimeout(ctx, calibrateMax)
	defer cancel()
	figs, err := cal.calibrationRuns(cctx, st, tgt, tops, rec)
	// Its load session goes with its servers: a block after it begins
	// its own (the paired design's keeps its connections; this one's
	// would open them anew every window).
	cal.endSessions()
	s.warnings = cal.warnings
	if serr := st.Stop(); serr != nil && cctx.Err() == nil {
		s.warn("%v", serr)
	}
	if ctx.Err() != nil {
		return nil
	}
	if cctx.Err() != nil {
		return late()
	}
	if err != nil {
		return fmt.Errorf("cpus auto: %w (-cpus first puts the load generator on the first CPU without calibrating)", err)
	}
	rec.Figures = figs
	rec.Took = time.Since(began)
	if !slices.ContainsFunc(figs, func(f results.SplitFigure) bool { return f.ServerUS > 0 }) {
		rec.Note = "the servers' CPU time was not measured, so nothing says how many CPUs the load generator needs: it gets the first CPU, as with -cpus first"
		s.warn("cpus auto: %s", rec.Note)
		return s.applySplit(rec, s.res.LoadCPUs, s.res.ServerCPUs)
	}
	return s.chooseSplit(cpus, rec)
}

// startCalibration starts the calibration's servers. Their start has its
// own deadlines (a command target's CommandStartTimeout): under the
// calibration's, which is as long, a server that never answers would
// read as a slow calibration and be waited for a second time.
func (s *sweep) startCalibration(ctx context.Context, cal *sweep, tops []topology.Topology, gomaxprocs int, tgt string) (servers, error) {
	p := &cal.plan
	return s.rig.Start(ctx, stack.Config{
		Dir: s.Dir, Layout: s.layout, Topologies: tops, GOMAXPROCS: gomaxprocs,
		HelloBin: s.HelloBin, NginxBin: s.NginxBin, CPUs: cal.res.ServerCPUs,
		NetNS: s.rig.ServerNS(), ClientNetNS: s.rig.ClientNS(),
		Target: tgt, Program: s.programs[tgt], PoolThreads: target.DefaultPoolThreads,
		Path:        p.Path,
		Connections: p.NginxConnections(), UpstreamKeepalive: p.KeepaliveSize(p.KeepaliveList()[0]),
		TLS: s.tls,
	})
}

// calibrationSweep is the calibration, a sweep of its own: short runs on
// half the CPUs each, its own topologies (the plan's baseline when it runs
// the server, nginx-return when it runs nginx over plaintext), generators and sessions;
// s keeps its plan until the split is chosen (applySplit). No topologies
// when there is nothing to calibrate: the split is applied then.
func (s *sweep) calibrationSweep(cpus []int, rec *results.CPUSplit) (*sweep, *results.CPUSplit, []topology.Topology, error) {
	cal := *s
	cal.sessions = nil
	p := &cal.plan
	p.Duration = min(p.Duration, calibrateRun)
	p.Warmup = min(p.Warmup, calibrateWarmup)
	half := len(cpus) / 2
	cal.res.LoadCPUs, cal.res.ServerCPUs = cpuset.Of(cpus[:half]...), cpuset.Of(cpus[half:]...)
	p.PinLoad, p.PinServer = cal.res.LoadCPUs.String(), cal.res.ServerCPUs.String()
	rec.CalibrationLoad, rec.CalibrationServer = p.PinLoad, p.PinServer
	rec.Generator = p.LoadList()[0]
	rec.Connections = slices.Max(p.Connections)
	rec.GOMAXPROCS = slices.Max(p.GOMAXPROCS)
	rec.Duration = p.Duration
	var names []string
	base := s.plan.Baseline()
	if stack.NeedsHello(s.res.Tops) {
		names = append(names, base)
	}
	// nginx-return speaks no TLS: over TLS, Go's own is the cheapest path.
	if s.NginxBin != "" && base == topology.Standalone {
		names = append(names, "nginx-return")
	}
	if len(names) == 0 {
		rec = &results.CPUSplit{CPUs: len(cpus), Note: "nothing to calibrate (no server and no nginx here): the load generator on the first CPU"}
		fmt.Fprintf(s.Progress, "cpus auto: %s\n", rec.Note)
		return nil, rec, nil, s.applySplit(rec, s.res.LoadCPUs, s.res.ServerCPUs)
	}
	tops, err := topology.LookupAll(names)
	if err != nil {
		return nil, rec, nil, err
	}
	// The cells look their topology up by name: a copy that has these.
	cal.res = cal.res.Knowing(tops...)
	if err := cal.newGenerators(); err != nil {
		return nil, rec, nil, err
	}
	return &cal, rec, tops, nil
}

// chooseSplit chooses the split from the calibration's figures in rec,
// says it, and applies it.
func (s *sweep) chooseSplit(cpus []int, rec *results.CPUSplit) error {
	load, server, headroom, note := ChooseSplit(cpus, rec.Figures)
	rec.Headroom, rec.Note = headroom, note
	for _, f := range rec.Figures {
		// Not "req/s": that names a measured cell's line.
		fmt.Fprintf(s.Progress, "cpus auto: %s: CPU per request: load %.1fus, servers %.1fus (%.0f requests a second, the load generator at %.0f%% of its CPUs)\n",
			f.Topology, f.LoadUS, f.ServerUS, f.ReqPerSec, 100*f.LoadShare)
	}
	var pred []string
	for _, f := range rec.Figures {
		pred = append(pred, fmt.Sprintf("%s %.0f%%", f.Topology, 100*f.Predicted))
	}
	fmt.Fprintf(s.Progress, "cpus auto: load generator on %s, servers on %s (%d/%d); predicted load share at the servers' saturation: %s (calibrated in %s)\n",
		load, server, load.Len(), server.Len(), strings.Join(pred, ", "), progress.Round(rec.Took))
	if note != "" {
		// A set-up warning: the report lists it.
		s.warn("cpus auto: %s", note)
	}
	return s.applySplit(rec, load, server)
}

// calibrationRuns measures each topology once and returns its figures.
func (s *sweep) calibrationRuns(ctx context.Context, st servers, tgt string, tops []topology.Topology, rec *results.CPUSplit) ([]results.SplitFigure, error) {
	_, refused := st.Parity(ctx, 5*time.Second)
	var figs []results.SplitFigure
	for _, t := range tops {
		// The server must answer as the plan expects; nginx-return only
		// measures what a request costs each side, whatever the server's
		// body (your own service's differs from its Hello World).
		if err := refused[t.Name]; err != nil && !t.Reference {
			return nil, fmt.Errorf("calibration on %s: parity: %w", t.Name, err)
		}
		c := Cell{Target: tgt, Topology: t.Name, GOMAXPROCS: rec.GOMAXPROCS, Connections: rec.Connections, Load: rec.Generator, Rep: 1}
		run, _ := s.cell(ctx, st, c, nil, s.plan.Warmup > 0)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if run.Error != "" {
			return nil, fmt.Errorf("calibration on %s: %s", t.Name, progress.Failure(run.Error))
		}
		f, err := splitFigure(t, run, rec.GOMAXPROCS)
		if err != nil {
			return nil, err
		}
		figs = append(figs, f)
	}
	return figs, nil
}

// splitFigure is what one calibration run says about a path.
func splitFigure(t topology.Topology, run results.Run, gomaxprocs int) (results.SplitFigure, error) {
	f := results.SplitFigure{Topology: t.Name, Reference: t.Reference, LoadShare: run.LoadShare}
	if run.Figures == nil || run.Figures.Requests <= 0 || run.CPU == nil {
		return f, fmt.Errorf("calibration on %s: no requests or no CPU time measured", t.Name)
	}
	n := run.Figures.Requests
	f.ReqPerSec = math.Round(run.Figures.ReqPerSec)
	f.LoadUS = round1(results.PerRequest(run.CPU.Load, n))
	for _, u := range []*results.Usage{run.CPU.Server, run.CPU.Nginx} {
		if u != nil {
			f.ServerUS += results.PerRequest(*u, n)
		}
	}
	// Zero when the servers' CPU time was not measured (a command
	// target): the model then leaves the path out.
	f.ServerUS = round1(f.ServerUS)
	if !t.ViaNginx() {
		// A server alone runs at most its processor value at once.
		f.Parallel = gomaxprocs
	}
	return f, nil
}

func round1(v float64) float64 { return math.Round(10*v) / 10 }

// applySplit makes the split the plan's CPU lists, for the sweep and in
// env.json.
func (s *sweep) applySplit(rec *results.CPUSplit, load, server cpuset.CPUSet) error {
	rec.Load, rec.Server = load.String(), server.String()
	s.res.LoadCPUs, s.res.ServerCPUs = load, server
	s.plan.PinLoad, s.plan.PinServer = rec.Load, rec.Server
	s.env.Plan.PinLoad, s.env.Plan.PinServer = rec.Load, rec.Server
	s.env.CPUSplit = rec
	if err := s.newGenerators(); err != nil {
		return err
	}
	return s.writeEnv()
}

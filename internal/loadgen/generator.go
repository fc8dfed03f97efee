// Package loadgen runs the load generators as a sweep drives them: wrk,
// h2load, OpenSSL's s_time and topobench's own engine (internal/load),
// each as a child process
// that can be pinned, placed in the client's network namespace and a
// control group. A Generator begins one Session per start of a block's
// servers; a session opens a pool a topology, measures its windows into
// the run's record (figures, the load's CPU time, the servers' from the
// counter files the engine reads at a window's edges) and closes it. A
// Runner is a generator whose every window is a child of its own (wrk,
// the engine's one-run form, a cluster's jobs); PerRun makes it one.
// The engine's kept session also runs pools together (TogetherSession),
// for the duet.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/h2load"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// A Generator puts the load of cells on a block's servers through a
// Session: the sweep begins one per start of the servers and ends it when
// they stop, and nothing else in the sweep knows which generator runs.
// Each generator runs as a child process, so it can be pinned, placed in a
// network namespace and have its CPU time read like the servers'.
type Generator interface {
	// Begin starts a session for one start of the servers. keep asks for
	// pools that hold their connections across windows (the paired
	// design); a generator that cannot keep them opens them anew for
	// every window (wrk), and its session says so (Session.Keeps).
	Begin(ctx context.Context, keep bool) (Session, error)
}

// A Session holds the load's pools, one a target (a topology's URL); one
// pool is loaded at a time.
type Session interface {
	// Open readies pool to put cell c's load on url: a session that keeps
	// its connections dials them now, paced, before anything is measured.
	Open(ctx context.Context, pool string, c results.Cell, url string) error
	// Window loads pool for d (or the cell's count of requests), then
	// stops sending and waits for the answers still due. With run nil the
	// window is not recorded (a warmup); otherwise the command, the
	// figures and the generator's CPU time of the window go into run, the
	// drain's wait in run.Drain, and raw is the generator's own output.
	Window(ctx context.Context, pool string, d time.Duration, run *results.Run) (raw []byte, err error)
	// Close ends a pool's connections.
	Close(ctx context.Context, pool string) error
	// Keeps reports whether the pools keep their connections across
	// windows.
	Keeps() bool
	// End ends the session: its child exits, its pools close.
	End() error
}

// A TogetherSession is a Session that runs pools at the same time (the
// duet): the built-in engine's kept session.
type TogetherSession interface {
	// Together measures one window of each pool at once; see
	// engineSession.Together.
	Together(ctx context.Context, pools []string, ws load.WindowSpec, runs [][]*results.Run, counters []Counters) ([]byte, error)
}

// A Runner is a generator that starts a child for every window (wrk, the
// engine's one-run form, a cluster's jobs): its session is a name for a
// URL, and each window is one run.
type Runner interface {
	// Warm runs unrecorded load on url for d.
	Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error
	// Measure runs the cell's measured load for d against run.URL and
	// records the command and the result in run; raw is the generator's
	// output.
	Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) (raw []byte, err error)
}

// PerRun is r as a Generator: every window a run of its own.
func PerRun(r Runner) Generator { return perRun{r} }

type perRun struct{ r Runner }

func (g perRun) Begin(context.Context, bool) (Session, error) {
	return &runSession{r: g.r, pools: map[string]pool{}}, nil
}

// pool is what a runner's session knows of a pool: its cell and URL.
type pool struct {
	c   results.Cell
	url string
}

// runSession is a runner's session: a pool is a URL, and every window a
// run of its own that opens its connections anew.
type runSession struct {
	r     Runner
	pools map[string]pool
}

func (s *runSession) Open(_ context.Context, name string, c results.Cell, url string) error {
	s.pools[name] = pool{c: c, url: url}
	return nil
}

func (s *runSession) Window(ctx context.Context, name string, d time.Duration, run *results.Run) ([]byte, error) {
	p, ok := s.pools[name]
	if !ok {
		return nil, fmt.Errorf("load session: no pool %q open", name)
	}
	if run == nil {
		return nil, s.r.Warm(ctx, p.c, p.url, d)
	}
	return s.r.Measure(ctx, p.c, d, run)
}

func (s *runSession) Close(_ context.Context, name string) error {
	delete(s.pools, name)
	return nil
}

func (s *runSession) Keeps() bool { return false }
func (s *runSession) End() error  { return nil }

// An Option sets where a generator's child runs.
type Option func(*where)

// where is what the options set.
type where struct {
	// netns is the client namespace under -isolate netns, and allow the
	// veth address the load may go to there.
	netns string
	allow netip.Addr
	// cgroup is the control group the child runs in; nil for none.
	cgroup *cgroup.Group
	// cpus are wrk's CPUs (the plan's PinLoad resolved); the engine
	// takes the plan's PinLoad as given.
	cpus cpuset.CPUSet
	// bin is the harness binary with the load command (the engine's).
	bin string
	// counters are the engine's session's counter files of a pool.
	counters func(pool string) Counters
	// tls is the engine's TLS client for https:// targets.
	tls load.TLS
}

// InNetns runs the child in network namespace ns, where the load may go
// to allow alone (the server end of the run's veth).
func InNetns(ns string, allow netip.Addr) Option {
	return func(w *where) { w.netns, w.allow = ns, allow }
}

// InCgroup runs the child in control group g (nil: none).
func InCgroup(g *cgroup.Group) Option { return func(w *where) { w.cgroup = g } }

// PinnedTo pins wrk to cpus.
func PinnedTo(cpus cpuset.CPUSet) Option { return func(w *where) { w.cpus = cpus } }

// WithBin runs the engine from bin, a binary with the load command; the
// harness's own when not given.
func WithBin(bin string) Option { return func(w *where) { w.bin = bin } }

// Counting makes the engine's session read the counter files f gives for
// a pool at each measured window's start and end (the CPU time of its
// servers' group and its parts).
func Counting(f func(pool string) Counters) Option { return func(w *where) { w.counters = f } }

// WithTLS is how the engine speaks to an https:// target: the run's
// certificate to trust and its tlscert.Settings. A cell's https:// URL
// without it is refused before any child starts.
func WithTLS(t load.TLS) Option { return func(w *where) { w.tls = t } }

func apply(opts []Option) where {
	var w where
	for _, o := range opts {
		o(&w)
	}
	return w
}

// NewWrk is wrk for plan p, running script (wrk.WriteScript) from bin; a
// hung run's state goes into the results directory dir.
func NewWrk(p results.Plan, bin, script, dir string, opts ...Option) Generator {
	w := apply(opts)
	return perRun{&wrkGen{plan: p, cpus: w.cpus, bin: bin, script: script, dir: dir, netns: w.netns, allow: w.allow, cgroup: w.cgroup}}
}

// wrkGen is wrk, closed loop, with the Lua reporter for exact percentiles.
type wrkGen struct {
	plan   results.Plan
	cpus   cpuset.CPUSet // the plan's PinLoad
	bin    string
	script string
	dir    string // the results directory, for a hung run's state
	// netns is the client namespace under -isolate netns, and allow the
	// veth address the load may go to there.
	netns string
	allow netip.Addr
	// cgroup is the control group wrk runs in; nil for none.
	cgroup *cgroup.Group
}

func (g *wrkGen) options(c results.Cell, url string, d time.Duration) wrk.Options {
	return wrk.Options{
		Bin:         g.bin,
		URL:         url,
		Threads:     plan.Plan{Plan: g.plan}.ThreadsFor(c.Connections),
		Connections: c.Connections,
		Duration:    d,
		Timeout:     g.plan.Timeout,
		Latency:     true,
		Close:       g.plan.Close,
		Script:      g.script,
		CPUs:        g.cpus.String(),
		NetNS:       g.netns,
		Allow:       g.allow,
		Cgroup:      joiner(g.cgroup),
	}
}

func (g *wrkGen) Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error {
	o := g.options(c, url, d)
	_, _, err := wrk.Run(ctx, o)
	return err
}

func (g *wrkGen) Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	if c.Requests > 0 {
		return nil, fmt.Errorf("wrk runs for a duration, not a count of %d requests", c.Requests)
	}
	o := g.options(c, run.URL, d)
	run.Command = o.Command()
	throttled := meterThrottling(g.cgroup)
	defer throttled(run)
	res, raw, cpu, err := wrk.RunCPU(ctx, o)
	if errors.Is(err, wrk.ErrHung) && ctx.Err() == nil {
		// A wrk that overran its deadline is starved or stuck, not a
		// verdict on the server: keep its state, run the cell once more
		// and say so in the record.
		run.Retried = err.Error()
		if werr := results.WriteExtra(g.dir, run.Cell, "hung.txt", raw); werr != nil {
			return raw, werr
		}
		res, raw, cpu, err = wrk.RunCPU(ctx, o)
	}
	// wrk's own rusage: its CPU time, wherever it ran.
	run.CPU = &results.CPU{Load: usage(cpu)}
	if err != nil {
		return raw, err
	}
	f := res.Figures()
	run.Figures = &f
	return raw, nil
}

// NewH2load is h2load for plan p: HTTP/2 with the plan's Streams a
// connection over TLS, or HTTP/1.1 (--h1) when it names none; bin is the
// h2load binary ("h2load" from PATH when empty).
func NewH2load(p results.Plan, bin string, opts ...Option) Generator {
	w := apply(opts)
	return perRun{&h2loadGen{plan: p, bin: bin, where: w}}
}

// h2loadGen is h2load, closed loop, a run a window.
type h2loadGen struct {
	plan  results.Plan
	bin   string
	where where
}

func (g *h2loadGen) options(c results.Cell, url string, d time.Duration) h2load.Options {
	streams, h1 := g.plan.Streams, g.plan.Streams == 0
	if h1 {
		streams = 1
	}
	return h2load.Options{
		Bin:         g.bin,
		URL:         url,
		Threads:     plan.Plan{Plan: g.plan}.ThreadsFor(c.Connections),
		Connections: c.Connections,
		Streams:     streams,
		H1:          h1,
		Duration:    d,
		Timeout:     g.plan.Timeout,
		CPUs:        g.where.cpus.String(),
		NetNS:       g.where.netns,
		Allow:       g.where.allow,
		Cgroup:      joiner(g.where.cgroup),
	}
}

func (g *h2loadGen) Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error {
	_, _, _, err := h2load.Run(ctx, g.options(c, url, d))
	return err
}

func (g *h2loadGen) Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	o := g.options(c, run.URL, d)
	return closedRun("h2load", c, o.Command(), g.where.cgroup, run, func() (results.Figures, []byte, procstat.Times, error) {
		res, raw, cpu, err := h2load.Run(ctx, o)
		f := res.Figures()
		f.Streams = o.Streams
		return f, raw, cpu, err
	})
}

// closedRun records in run one closed-loop run of a generator that runs
// for a duration (h2load, s_time): its command, the figures measure
// returns, the children's CPU time and the load group's throttling.
func closedRun(name string, c results.Cell, command []string, cg *cgroup.Group, run *results.Run, measure func() (results.Figures, []byte, procstat.Times, error)) ([]byte, error) {
	if c.Requests > 0 || c.OpenLoop() || c.Probe {
		return nil, fmt.Errorf("%s runs closed loop for a duration, not %s", name, c.Label())
	}
	run.Command = command
	throttled := meterThrottling(cg)
	defer throttled(run)
	f, raw, cpu, err := measure()
	run.CPU = &results.CPU{Load: usage(cpu)}
	if err != nil {
		return raw, err
	}
	run.Figures = &f
	return raw, nil
}

package sweep

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// A generator puts the load of cells on a block's servers through a
// session: the sweep begins one per start of the servers and ends it when
// they stop, and nothing else in the sweep knows which generator runs.
// Each generator runs as a child process, so it can be pinned, placed in a
// network namespace and have its CPU time read like the servers'.
type generator interface {
	// begin starts a session for one start of the servers. keep asks for
	// pools that hold their connections across windows (the paired
	// design); a generator that cannot keep them opens them anew for
	// every window (wrk), and its session says so (session.keeps).
	begin(ctx context.Context, keep bool) (session, error)
}

// A session holds the load's pools, one a target (a topology's URL); one
// pool is loaded at a time.
type session interface {
	// open readies pool to put cell c's load on url: a session that keeps
	// its connections dials them now, paced, before anything is measured.
	open(ctx context.Context, pool string, c Cell, url string) error
	// window loads pool for d (or the cell's count of requests), then
	// stops sending and waits for the answers still due. With run nil the
	// window is not recorded (a warmup); otherwise the command, the
	// figures and the generator's CPU time of the window go into run, the
	// drain's wait in run.Drain, and raw is the generator's own output.
	window(ctx context.Context, pool string, d time.Duration, run *results.Run) (raw []byte, err error)
	// close ends a pool's connections.
	close(ctx context.Context, pool string) error
	// keeps reports whether the pools keep their connections across
	// windows.
	keeps() bool
	// end ends the session: its child exits, its pools close.
	end() error
}

// session is the current block's session of the generator named, begun
// when a cell first needs it; keep as generator.begin.
func (s *sweep) session(ctx context.Context, name results.Generator, keep bool) (session, error) {
	if sess, ok := s.sessions[name]; ok {
		return sess, nil
	}
	g, ok := s.generators[name]
	if !ok {
		return nil, fmt.Errorf("-load: %s is not prepared", name)
	}
	sess, err := g.begin(ctx, keep)
	if err != nil {
		return nil, fmt.Errorf("starting the %s load session: %w", name, err)
	}
	if s.sessions == nil {
		s.sessions = map[results.Generator]session{}
	}
	s.sessions[name] = sess
	return sess, nil
}

// endSessions ends the block's sessions, before its servers stop.
func (s *sweep) endSessions() {
	for name, sess := range s.sessions {
		if err := sess.end(); err != nil {
			s.warn("ending the %s load session: %v", name, err)
		}
		delete(s.sessions, name)
	}
}

// poolName names a cell's pool: its key without the repetition, so that
// every repetition of a cell loads the same pool.
func poolName(c Cell) string {
	c.Rep = 0
	return c.Key()
}

// A runner is a generator that starts a child for every window (wrk, the
// engine's one-run form, a cluster's jobs): its session is a name for a
// URL, and each window is one run.
type runner interface {
	// warm runs unrecorded load on url for d.
	warm(ctx context.Context, c Cell, url string, d time.Duration) error
	// measure runs the cell's measured load for d against run.URL and
	// records the command and the result in run; raw is the generator's
	// output.
	measure(ctx context.Context, c Cell, d time.Duration, run *results.Run) (raw []byte, err error)
}

// perRun is a runner as a generator.
type perRun struct{ r runner }

func (g perRun) begin(context.Context, bool) (session, error) {
	return &runSession{r: g.r, pools: map[string]pool{}}, nil
}

// pool is what a runner's session knows of a pool: its cell and URL.
type pool struct {
	c   Cell
	url string
}

// runSession is a runner's session: a pool is a URL, and every window a
// run of its own that opens its connections anew.
type runSession struct {
	r     runner
	pools map[string]pool
}

func (s *runSession) open(_ context.Context, name string, c Cell, url string) error {
	s.pools[name] = pool{c: c, url: url}
	return nil
}

func (s *runSession) window(ctx context.Context, name string, d time.Duration, run *results.Run) ([]byte, error) {
	p, ok := s.pools[name]
	if !ok {
		return nil, fmt.Errorf("load session: no pool %q open", name)
	}
	if run == nil {
		return nil, s.r.warm(ctx, p.c, p.url, d)
	}
	return s.r.measure(ctx, p.c, d, run)
}

func (s *runSession) close(_ context.Context, name string) error {
	delete(s.pools, name)
	return nil
}

func (s *runSession) keeps() bool { return false }
func (s *runSession) end() error  { return nil }

// newGenerators prepares every generator the plan names.
func (s *sweep) newGenerators() error {
	s.generators = map[results.Generator]generator{}
	if s.cl != nil {
		// plan.Check allowed the built-in engine only.
		s.generators[results.LoadBuiltin] = perRun{&clusterGen{r: s.cl, plan: s.plan, dir: s.Dir}}
		return nil
	}
	for _, l := range s.plan.Generators() {
		switch l {
		case results.LoadWrk:
			script, err := wrk.WriteScript(s.Dir)
			if err != nil {
				return err
			}
			s.generators[l] = perRun{&wrkGen{plan: s.plan, cpus: s.res.LoadCPUs, bin: s.WrkBin, script: script, dir: s.Dir, netns: s.clientNS(), allow: s.loadTarget(), cgroup: s.LoadCgroup}}
		case results.LoadBuiltin:
			g, err := newBuiltin(s.plan, s.Dir, s.clientNS(), s.loadTarget())
			if err != nil {
				return err
			}
			if s.LoadBin != "" {
				g.bin = s.LoadBin
			}
			g.cgroup = s.LoadCgroup
			g.client = newEngineClient
			g.counters = s.serverCounters
			s.generators[l] = g
		default:
			return plan.Errorf(plan.Load, "%s cannot run here yet", l)
		}
	}
	return nil
}

// wrkGen is wrk, closed loop, with the Lua reporter for exact percentiles.
type wrkGen struct {
	plan   Plan
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

func (g *wrkGen) options(c Cell, url string, d time.Duration) wrk.Options {
	return wrk.Options{
		Bin:         g.bin,
		URL:         url,
		Threads:     g.plan.ThreadsFor(c.Connections),
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

func (g *wrkGen) warm(ctx context.Context, c Cell, url string, d time.Duration) error {
	o := g.options(c, url, d)
	_, _, err := wrk.Run(ctx, o)
	return err
}

func (g *wrkGen) measure(ctx context.Context, c Cell, d time.Duration, run *results.Run) ([]byte, error) {
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

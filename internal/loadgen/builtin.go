package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
)

// builtinGen is topobench's own engine (internal/load), run as a child
// process, "topobench load -spec runs/<cell>.spec", so that its CPU time
// is its own and it can be pinned (and placed in a network namespace)
// like wrk. The spec (load.Spec as JSON) stays beside the run's record.
type builtinGen struct {
	plan results.Plan
	// bin is the harness binary that has the load command.
	bin string
	dir string // the results directory
	// netns is the client namespace under -isolate netns, and allow the
	// veth address the load may go to there.
	netns string
	allow netip.Addr
	// cgroup is the control group the engine runs in; nil for none.
	cgroup *cgroup.Group
	// client speaks to a load session child over its stdin and stdout
	// (load.NewSessionClient); nil where the engine has no session.
	client func(w io.Writer, r io.Reader) engineClient
	// counters are the files a session window reads at the measured
	// window's start and end of a pool (the CPU time of its servers'
	// group and its parts); nil reads none.
	counters func(pool string) Counters
	// tls is the engine's TLS client for an https:// target (WithTLS).
	tls load.TLS
}

// Begin starts a block's session: with keep, one session child holds the
// pools; otherwise every window is a run of its own child.
func (g *builtinGen) Begin(ctx context.Context, keep bool) (Session, error) {
	if keep {
		return g.beginKept(ctx)
	}
	return perRun{g}.Begin(ctx, false)
}

// NewBuiltin is topobench's own engine for plan p, writing beside the
// records in the results directory dir; it runs from the harness's own
// binary unless WithBin says otherwise.
func NewBuiltin(p results.Plan, dir string, opts ...Option) (Generator, error) {
	w := apply(opts)
	if w.bin == "" {
		bin, err := os.Executable()
		if err != nil {
			return nil, plan.Errorf(plan.Load, "builtin: finding the harness binary for the built-in engine: %w", err)
		}
		w.bin = bin
	}
	return &builtinGen{plan: p, bin: w.bin, dir: dir, netns: w.netns, allow: w.allow, cgroup: w.cgroup,
		client: newEngineClient, counters: w.counters, tls: w.tls}, nil
}

// requestTimeout is the engine's -timeout for a cell: the plan's timeout
// on top of the handler wait, so a request answered after its wait is
// not a timeout; at most the engine's 60 s.
func (g *builtinGen) requestTimeout(c results.Cell) time.Duration {
	return min(g.plan.Timeout+c.Wait, hdr.HighestMicros*time.Microsecond)
}

// spec is the engine's run for a cell, d long unless the cell counts its
// requests; warm makes it the unrecorded warmup. The engine prints its
// summary as JSON, which the sweep reads.
func (g *builtinGen) spec(c results.Cell, url string, d time.Duration, warm bool) (load.Spec, error) {
	// The handler wait goes as Wait, which the probe needs to know.
	target, err := load.ParseURL(withoutSchedule(url))
	if err != nil {
		return load.Spec{}, fmt.Errorf("the engine's target: %w", err)
	}
	if c.Work > 0 {
		// Handler work goes in the target; the wait, which a probe needs
		// to know, as Wait.
		target = target.WithQuery("work", strings.ReplaceAll(c.Work.String(), "µ", "u"))
	}
	s := load.DefaultSpec()
	s.Target, s.Allow, s.JSON, s.Quiet = target, g.allow, true, true
	s.Connections = c.Connections
	// A connection a request, as wrk's -H "Connection: close".
	s.Close = g.plan.Close
	if s.TLS, err = g.tlsFor(target); err != nil {
		return load.Spec{}, err
	}
	bound := func() {
		if c.Requests > 0 && !warm {
			s.Requests = int64(c.Requests)
		} else {
			s.Duration = d
		}
	}
	s.Wait = c.Wait
	switch {
	case c.Probe && warm:
		// A warmup of thousands of 10 s requests would take as long as the
		// probe: warm the path closed loop, without the wait.
		s.Wait, s.Duration = 0, d
	case c.Probe:
		s.Probe = c.Requests
	case c.Rate > 0:
		s.Rate, s.Arrivals = c.Rate, load.Poisson
		if m := g.plan.MaxConnections; m > 0 {
			s.MaxConnections = max(m, c.Connections)
		}
		if g.plan.LatencyRun(c) {
			// nginx is sized for the plan's connections: a late request
			// waits for one of them rather than open more.
			s.MaxConnections = c.Connections
		}
		bound()
	default:
		bound()
	}
	if s.Probe == 0 {
		s.Timeout = g.requestTimeout(results.Cell{Schedule: results.Schedule{Wait: s.Wait}})
	}
	switch {
	case s.Probe != 0 || s.Rate != 0:
	case g.plan.EngineLoops:
		// Event loops in wrk's shape: as many as wrk's -t for the cell.
		s.Threads = plan.Plan{Plan: g.plan}.ThreadsFor(c.Connections)
	default:
		s.Goroutines = true
	}
	if err := s.Validate(); err != nil {
		return s, fmt.Errorf("the engine's spec: %w", err)
	}
	return s, nil
}

// tlsFor is the engine's TLS client for target: the one WithTLS gave
// for an https:// target, none for a plain one.
func (g *builtinGen) tlsFor(target load.Target) (load.TLS, error) {
	if !target.TLS {
		return load.TLS{}, nil
	}
	if g.tls.IsZero() {
		return load.TLS{}, fmt.Errorf("the engine's target %s speaks TLS, and the engine was given no TLS client (loadgen.WithTLS)", target)
	}
	return g.tls, nil
}

// args are the load command's arguments: the spec's file and, if set, a
// scratch directory for the histogram files (the recorded spec leaves it
// out, so that rerunning it writes nothing into the results).
func args(specPath, out string) []string {
	a := []string{"load", "-spec", specPath}
	if out != "" {
		a = append(a, "-out", out)
	}
	return a
}

// specFile is s as a spec file: indented JSON.
func specFile(s load.Spec) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	return append(b, '\n'), err
}

// bound is how long the child may take before it is stopped as hung: the
// load's time (d, or the cell's count of requests or probe), the last
// answers' timeout, and start-up slack.
func (g *builtinGen) bound(c results.Cell, d time.Duration, warm bool) time.Duration {
	if !warm {
		p := g.plan
		p.Duration = d
		d = plan.Plan{Plan: p}.Measured(c)
	}
	return d + g.requestTimeout(c) + 30*time.Second
}

func (g *builtinGen) Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error {
	s, err := g.spec(c, url, d, true)
	if err != nil {
		return err
	}
	// The warmup is not recorded: its spec goes once it has run.
	b, err := specFile(s)
	if err != nil {
		return err
	}
	path := filepath.Join(g.dir, results.RunsDir, "."+c.Key()+".warm.spec")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing the engine's spec: %w", err)
	}
	defer os.Remove(path)
	_, _, _, err = g.run(ctx, args(path, ""), g.bound(c, d, true))
	return err
}

// SpecSuffix names the file beside a run's record that holds the
// engine's spec: runs/<cell>.spec, JSON, for "topobench load -spec".
const SpecSuffix = "spec"

// measuredSpec is the spec of a recorded run of its own child: as wrk,
// it opens its connections without priming them, since the harness reads
// the servers' CPU time and the child's across the whole child, as it
// reads them around wrk (a kept session's pools are primed when they
// open, outside every window).
func (g *builtinGen) measuredSpec(c results.Cell, url string, d time.Duration) (load.Spec, error) {
	s, err := g.spec(c, url, d, false)
	s.NoPrime = s.Probe == 0
	return s, err
}

func (g *builtinGen) Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	s, err := g.measuredSpec(c, run.URL, d)
	if err != nil {
		return nil, err
	}
	// The spec stays beside the record: "topobench load -spec" reruns it.
	b, err := specFile(s)
	if err != nil {
		return nil, err
	}
	if err := results.WriteExtra(g.dir, c, SpecSuffix, b); err != nil {
		return nil, err
	}
	path := filepath.Join(g.dir, results.RunsDir, c.Key()+"."+SpecSuffix)
	// The histogram files go to a directory of their own first: the
	// command also writes summary.json, which the record already holds.
	tmp := filepath.Join(g.dir, results.RunsDir, "."+c.Key()+".load")
	defer os.RemoveAll(tmp)
	throttled := meterThrottling(g.cgroup)
	sum, raw, argv, cpu, err := g.runSummary(ctx, args(path, tmp), g.bound(c, d, false))
	throttled(run)
	run.Command = argv
	// The engine's own rusage: its CPU time, wherever it ran.
	run.CPU = &results.CPU{Load: usage(cpu)}
	if sum != nil {
		f := sum.Figures()
		run.Figures = &f
	}
	if err != nil {
		return raw, err
	}
	for _, ext := range []string{hdr.EncodedExt, hdr.PercentilesExt} {
		b, err := os.ReadFile(filepath.Join(tmp, "latency"+ext))
		if err != nil {
			return raw, fmt.Errorf("reading the engine's histogram: %w", err)
		}
		if err := results.WriteExtra(g.dir, c, strings.TrimPrefix(ext, "."), b); err != nil {
			return raw, err
		}
	}
	return raw, nil
}

// runSummary runs the load command and decodes the summary it prints.
func (g *builtinGen) runSummary(ctx context.Context, args []string, bound time.Duration) (*load.Summary, []byte, []string, procstat.Times, error) {
	raw, argv, cpu, err := g.run(ctx, args, bound)
	var sum *load.Summary
	if len(bytes.TrimSpace(raw)) > 0 {
		var s load.Summary
		if jerr := json.Unmarshal(raw, &s); jerr != nil {
			return nil, raw, argv, cpu, errors.Join(err, fmt.Errorf("reading the engine's summary: %w", jerr))
		}
		sum = &s
	}
	if err == nil && sum == nil {
		err = errors.New("the engine printed no summary")
	}
	return sum, raw, argv, cpu, err
}

// options are how the engine's child runs, a run's or a session's: pinned
// to the plan's load CPUs, in the client namespace and the load's control
// group; SIGINT makes it print what it measured, or end its session.
func (g *builtinGen) options() proc.Options {
	return proc.Options{Stop: syscall.SIGINT, Grace: 10 * time.Second, CPUs: g.plan.PinLoad, NetNS: g.netns, Cgroup: joiner(g.cgroup)}
}

// run starts "harness load ARGS", pinned to the plan's load CPUs, and waits
// for it; ctx's end stops it with SIGINT, which makes it print what it
// measured.
func (g *builtinGen) run(ctx context.Context, args []string, bound time.Duration) (raw []byte, argv []string, cpu procstat.Times, err error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var out bytes.Buffer
	opt := g.options()
	opt.Stdout = &out
	p, err := proc.Start(ctx, g.bin, args, opt)
	if err != nil {
		return nil, proc.Command(g.bin, args, opt), cpu, fmt.Errorf("starting the load engine: %w", err)
	}
	werr := p.Wait()
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() == load.ExitNoneSucceeded {
		// A run that measured only errors: its summary counts them, as
		// wrk's would.
		werr = nil
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("the load engine ran past %s and was stopped: %w", bound, errors.Join(werr, ctx.Err()))
	case werr != nil:
		err = fmt.Errorf("load engine: %w", werr)
	}
	return out.Bytes(), p.Args, p.CPU(), err
}

package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
)

// builtinGen is topobench's own engine (internal/load), run as a child
// process, "topobench load -json", so that its CPU time is its own and it
// can be pinned (and placed in a network namespace) like wrk.
type builtinGen struct {
	plan Plan
	// bin is the harness binary that has the load command.
	bin string
	dir string // the results directory
	// netns is the client namespace under -isolate netns, and allow the
	// veth address the load may go to there.
	netns string
	allow netip.Addr
}

// newBuiltin finds the harness's own binary, which carries the engine.
func newBuiltin(p Plan, dir, netns string, allow netip.Addr) (*builtinGen, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-load builtin: finding the harness binary: %w", err)
	}
	return &builtinGen{plan: p, bin: bin, dir: dir, netns: netns, allow: allow}, nil
}

// requestTimeout is the engine's -timeout for a cell: the plan's timeout
// on top of the handler wait, so a request answered after its wait is
// not a timeout; at most the engine's 60 s.
func (g *builtinGen) requestTimeout(c Cell) time.Duration {
	return min(g.plan.Timeout+c.Wait, load.HighestMicros*time.Microsecond)
}

// args are the load command's arguments for a cell; warm runs the
// unrecorded warmup instead of the measurement.
func (g *builtinGen) args(c Cell, url string, warm bool) []string {
	// The handler wait goes as -wait, which the probe needs to know.
	base, _, _ := strings.Cut(url, "?")
	a := []string{"load", "-json", "-quiet"}
	if g.allow.IsValid() {
		a = append(a, "-allow", g.allow.String())
	}
	wait := c.Wait
	switch {
	case c.Probe && warm:
		// A warmup of thousands of 10 s requests would take as long as the
		// probe: warm the path closed loop, without the wait.
		wait = 0
		a = append(a, "-connections", strconv.Itoa(c.Connections), "-duration", g.plan.Warmup.String())
	case c.Probe:
		a = append(a, "-probe", strconv.Itoa(c.Requests))
	case c.Rate > 0:
		a = append(a, "-rate", strconv.FormatFloat(c.Rate, 'f', -1, 64), "-arrivals", string(load.Poisson),
			"-connections", strconv.Itoa(c.Connections))
		if m := g.plan.MaxConnections; m > 0 {
			a = append(a, "-max-connections", strconv.Itoa(max(m, c.Connections)))
		}
		if c.Requests > 0 && !warm {
			a = append(a, "-requests", strconv.Itoa(c.Requests))
		} else {
			a = append(a, "-duration", g.durationFor(warm).String())
		}
	default:
		a = append(a, "-connections", strconv.Itoa(c.Connections))
		if c.Requests > 0 && !warm {
			a = append(a, "-requests", strconv.Itoa(c.Requests))
		} else {
			a = append(a, "-duration", g.durationFor(warm).String())
		}
	}
	if wait > 0 {
		a = append(a, "-wait", wait.String())
	}
	if !c.Probe || warm {
		a = append(a, "-timeout", g.requestTimeout(Cell{Schedule: results.Schedule{Wait: wait}}).String())
	}
	return append(a, base)
}

func (g *builtinGen) durationFor(warm bool) time.Duration {
	if warm {
		return g.plan.Warmup
	}
	return g.plan.Duration
}

// bound is how long the child may take before it is stopped as hung: the
// measured time, the last answers' timeout, and start-up slack.
func (g *builtinGen) bound(c Cell, warm bool) time.Duration {
	d := g.plan.Measured(c)
	if warm {
		d = g.plan.Warmup
	}
	return d + g.requestTimeout(c) + 30*time.Second
}

func (g *builtinGen) warm(ctx context.Context, c Cell, url string) error {
	_, _, _, err := g.run(ctx, g.args(c, url, true), g.bound(c, true))
	return err
}

func (g *builtinGen) measure(ctx context.Context, c Cell, run *results.Run) ([]byte, error) {
	args := g.args(c, run.URL, false)
	// The histogram files go to a directory of their own first: the
	// command also writes summary.json, which the record already holds.
	tmp := filepath.Join(g.dir, results.RunsDir, "."+c.Key()+".load")
	args = append(args[:len(args)-1:len(args)-1], "-out", tmp, args[len(args)-1])
	defer os.RemoveAll(tmp)
	sum, raw, argv, cpu, err := g.runSummary(ctx, args, g.bound(c, false))
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
	for _, ext := range []string{load.EncodedExt, load.PercentilesExt} {
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

// run starts "harness load ARGS", pinned to the plan's load CPUs, and waits
// for it; ctx's end stops it with SIGINT, which makes it print what it
// measured.
func (g *builtinGen) run(ctx context.Context, args []string, bound time.Duration) (raw []byte, argv []string, cpu procstat.Times, err error) {
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	var out bytes.Buffer
	opt := proc.Options{Stop: syscall.SIGINT, Grace: 10 * time.Second, Stdout: &out, CPUs: g.plan.PinLoad, NetNS: g.netns}
	p, err := proc.Start(ctx, g.bin, args, opt)
	if err != nil {
		return nil, proc.Command(g.bin, args, opt), cpu, fmt.Errorf("starting the load engine: %w", err)
	}
	werr := p.Wait()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		err = fmt.Errorf("the load engine ran past %s and was stopped: %w", bound, errors.Join(werr, ctx.Err()))
	case werr != nil:
		err = fmt.Errorf("load engine: %w", werr)
	}
	return out.Bytes(), p.Args, p.CPU(), err
}

package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/results"
)

// The built-in engine's session: one "topobench load -session" child per
// block, started pinned and in the client namespace as the engine's
// one-run child is, holding a pool of connections a topology. It reads
// one command a line (open, window, close, quit) and answers one JSON
// line each; engineClient speaks that protocol (load.SessionClient).

// engineClient drives a load session child.
type engineClient interface {
	// Open dials the pool's connections, paced, before anything is
	// measured.
	Open(ctx context.Context, name string, s load.Spec) error
	// Window loads the pool closed loop for lead (not measured), then
	// for d, then stops sending and drains its answers (not measured),
	// reading the counter files at the measured time's start and end.
	Window(ctx context.Context, name string, lead, d time.Duration, counters []string) (engineWindow, error)
	Close(ctx context.Context, name string) error
	// Quit asks the child to exit.
	Quit() error
}

// togetherClient is an engineClient that can run pools at the same time.
type togetherClient interface {
	// Together measures one window of each pool at once (load's
	// together); the windows come in the order of pools, raw is the
	// session's answer.
	Together(ctx context.Context, pools []string, ws load.WindowSpec) ([]engineWindow, []byte, error)
}

// engineWindow is what the session answers for a window, as the sweep
// records it.
type engineWindow struct {
	Figures results.Figures
	// CPU is the load process's CPU time over the window, CallCPU over
	// the whole command (lead and drain too), in seconds.
	CPU     results.Usage
	CallCPU float64
	// Window is the measured time.
	Window time.Duration
	// Counters are the counter files' texts at the window's two ends.
	Counters []load.CounterReading
	// Reconnects are the connections the server closed that the engine
	// replaced, outside the window's measured time.
	Reconnects int64
	// Drain is the wait for the answers still due after the window, and
	// Drained the answers it got; Lead and LeadAnswers the same of the
	// load before the measured time.
	Drain       time.Duration
	Drained     int64
	Lead        time.Duration
	LeadAnswers int64
	// Histogram is the window's exact HDR histogram, encoded (hdr).
	Histogram []byte
	// Raw is the session's answer as it printed it.
	Raw []byte
	// Slices are the window's slices, when it was cut; Start is the
	// measured time's start.
	Slices []load.Slice
	Start  time.Time
}

// engineSession is a block's session child.
type engineSession struct {
	g      *builtinGen
	p      *proc.Proc
	client engineClient
	// in and out are the harness's ends of the child's input and output.
	in, out io.Closer
	pools   map[string]pool
	argv    []string
}

// beginKept starts the session child.
func (g *builtinGen) beginKept(ctx context.Context) (Session, error) {
	if g.client == nil {
		return nil, errors.New("the built-in engine's load session (topobench load -session) is not in this build; use -load wrk")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	args := []string{"load", "-session"}
	opt := g.options()
	opt.Stdin, opt.Stdout = inR, outW
	// The session outlives the cell that began it: the block's end, not
	// ctx, stops it (end), and ctx's end stops it through the client.
	p, err := proc.Start(context.WithoutCancel(ctx), g.bin, args, opt)
	// The child holds its ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting the load engine's session: %w", err)
	}
	return &engineSession{g: g, p: p, client: g.client(inW, outR), in: inW, out: outR, pools: map[string]pool{}, argv: p.Args}, nil
}

func (s *engineSession) Open(ctx context.Context, name string, c results.Cell, url string) error {
	sp, err := s.g.spec(c, url, s.g.plan.Duration, false)
	if err != nil {
		return err
	}
	if c.OpenLoop() || c.Probe || c.Requests > 0 {
		return fmt.Errorf("a load session runs closed-loop windows, not %s", c.Label())
	}
	if err := s.client.Open(ctx, name, sp); err != nil {
		return s.failed("open "+name, err)
	}
	s.pools[name] = pool{c: c, url: url}
	return nil
}

func (s *engineSession) Window(ctx context.Context, name string, d time.Duration, run *results.Run) ([]byte, error) {
	if _, ok := s.pools[name]; !ok {
		return nil, fmt.Errorf("load session: no pool %q open", name)
	}
	throttled := meterThrottling(s.g.cgroup)
	// A measured window of the paired design starts after its lead; a
	// warmup is all lead.
	var lead time.Duration
	if pd := s.g.plan.Paired; pd != nil && run != nil {
		lead = pd.LeadOf(s.pools[name].c.Topology)
	}
	var counters Counters
	if s.g.counters != nil && run != nil {
		counters = s.g.counters(name)
	}
	w, err := s.client.Window(ctx, name, lead, d, counters.Files())
	if run == nil {
		return nil, s.failed("window "+name, err)
	}
	throttled(run)
	run.Command = append(append([]string{}, s.argv...), "window", name, d.String())
	if lead > 0 {
		run.Command = append(run.Command, "lead", lead.String())
	}
	if err != nil {
		return w.Raw, s.failed("window "+name, err)
	}
	return w.Raw, s.record(run, w, counters)
}

// record puts a window's figures, the load's and the servers' CPU time
// (from the counter files, where set) into run, and writes its
// histogram beside the run's record.
func (s *engineSession) record(run *results.Run, w engineWindow, counters Counters) error {
	f := w.Figures
	run.Figures = &f
	run.CPU = &results.CPU{Load: w.CPU, LoadCall: w.CallCPU}
	if err := counters.fill(w.Counters, run.CPU, w.Window); err != nil {
		return fmt.Errorf("the servers' CPU time over the window: %w", err)
	}
	run.Drain = w.Drain
	run.Reconnects = w.Reconnects
	run.Drained = w.Drained
	run.Lead, run.LeadAnswers = w.Lead, w.LeadAnswers
	if len(w.Histogram) > 0 {
		if err := results.WriteExtra(s.g.dir, run.Cell, strings.TrimPrefix(hdr.EncodedExt, "."), w.Histogram); err != nil {
			return err
		}
	}
	return nil
}

// Together measures every pool at the same time (the duet), each after
// ws.Lead, for ws.Duration cut into ws.Slices (none for 0 or 1). runs[k]
// are slice k's runs, one a pool in the order of pools (runs[0] alone
// without slices), filled here; counters[i] are pool i's servers'
// counter files, each read for every pool, each pool's CPU taken from
// its own. raw is the session's answer. With runs nil the
// together is a warmup, recorded nowhere.
//
// A slice's run has its answers, errors, rate, the load's CPU and its
// servers' over the slice; its latency is in no record (the window's
// histogram covers every slice). The lead and the reconnects before it
// go to the first slice's run, the drain to the last's; each run's
// LoadCall is the whole command's, the span the harness samples.
func (s *engineSession) Together(ctx context.Context, pools []string, ws load.WindowSpec, runs [][]*results.Run, counters []Counters) ([]byte, error) {
	tc, ok := s.client.(togetherClient)
	if !ok {
		return nil, errors.New("this load session runs one pool at a time")
	}
	for _, p := range pools {
		if _, ok := s.pools[p]; !ok {
			return nil, fmt.Errorf("load session: no pool %q open", p)
		}
	}
	throttled := meterThrottling(s.g.cgroup)
	ws.Counters = nil
	for _, c := range counters {
		for _, f := range c.Files() {
			if !slices.Contains(ws.Counters, f) {
				ws.Counters = append(ws.Counters, f)
			}
		}
	}
	wins, raw, err := tc.Together(ctx, pools, ws)
	cmd := append(append([]string{}, s.argv...), "together", strings.Join(pools, ","), ws.Duration.String())
	if ws.Lead > 0 {
		cmd = append(cmd, "lead", ws.Lead.String())
	}
	if ws.Slices > 1 {
		cmd = append(cmd, "slices", strconv.Itoa(ws.Slices))
	}
	for _, rs := range runs {
		for _, run := range rs {
			throttled(run)
			run.Command = cmd
		}
	}
	if err != nil {
		return raw, s.failed("together "+strings.Join(pools, ","), err)
	}
	if runs == nil {
		return raw, nil // a warmup: nothing recorded
	}
	if ws.Slices <= 1 {
		for i, run := range runs[0] {
			run.Start = wins[i].Start.UTC()
			if err := s.record(run, wins[i], counters[i]); err != nil {
				return raw, err
			}
		}
		return raw, nil
	}
	return raw, s.recordSlices(pools, wins, runs, counters)
}

// recordSlices puts each window's slices into their runs (Together):
// runs[k][i] is slice k of pool i.
func (s *engineSession) recordSlices(pools []string, wins []engineWindow, runs [][]*results.Run, counters []Counters) error {
	for i, w := range wins {
		if len(w.Slices) != len(runs) {
			return fmt.Errorf("load session: together %s: %d slices of %s, want %d", strings.Join(pools, ","), len(w.Slices), pools[i], len(runs))
		}
		for k, sl := range w.Slices {
			run := runs[k][i]
			run.Start = sl.Start.UTC()
			f := sl.Figures()
			run.Figures = &f
			run.CPU = &results.CPU{Load: results.Usage{User: time.Duration(sl.CPUUserNs).Seconds(), System: time.Duration(sl.CPUSysNs).Seconds()}, LoadCall: w.CallCPU}
			if err := counters[i].fill(sl.Counters, run.CPU, time.Duration(sl.DurationNs)); err != nil {
				return fmt.Errorf("the servers' CPU time over slice %d: %w", sl.Index, err)
			}
			if k == 0 {
				run.Lead, run.LeadAnswers, run.Reconnects = w.Lead, w.LeadAnswers, w.Reconnects
			}
			if k == len(w.Slices)-1 {
				run.Drain, run.Drained = w.Drain, w.Drained
				if err := s.latencyOf(run, w); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// latencyOf gives a together's last slice the latency of the whole
// window, every slice's answers, and writes its histogram beside the
// record: the engine keeps one histogram a window, so a duet's latency is
// its together's, one record a side.
func (s *engineSession) latencyOf(run *results.Run, w engineWindow) error {
	f, lat := run.Figures, w.Figures
	if !lat.Latency {
		return nil
	}
	f.Latency, f.Histogram = true, lat.Histogram
	f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999, f.Max = lat.Mean, lat.P50, lat.P90, lat.P99, lat.P999, lat.P9999, lat.Max
	if len(w.Histogram) == 0 {
		return nil
	}
	return results.WriteExtra(s.g.dir, run.Cell, strings.TrimPrefix(hdr.EncodedExt, "."), w.Histogram)
}

// failed adds the child's stderr tail to a failed command.
func (s *engineSession) failed(what string, err error) error {
	if err == nil {
		return nil
	}
	if tail := strings.TrimSpace(s.p.Tail()); tail != "" {
		return fmt.Errorf("load session %s: %w; the engine said: %s", what, err, tail)
	}
	return fmt.Errorf("load session %s: %w", what, err)
}

func (s *engineSession) Close(ctx context.Context, name string) error {
	if _, ok := s.pools[name]; !ok {
		return nil
	}
	delete(s.pools, name)
	return s.failed("close "+name, s.client.Close(ctx, name))
}

func (s *engineSession) Keeps() bool { return true }

// end asks the child to quit, closes its input (EOF quits it too) and
// waits for it; a child that does not exit is stopped by proc's grace.
func (s *engineSession) End() error {
	qerr := s.client.Quit()
	s.in.Close()
	done := make(chan error, 1)
	go func() { done <- s.p.Wait() }()
	defer s.out.Close()
	select {
	case err := <-done:
		return errors.Join(qerr, err)
	case <-time.After(15 * time.Second):
		_ = s.p.Stop(syscall.SIGKILL, time.Second)
		return fmt.Errorf("the load session did not quit within 15 s: %w", <-done)
	}
}

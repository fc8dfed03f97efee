package rig

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/speed"
)

// speedReady is how long the probes have to print their first spin.
const speedReady = 3 * time.Second

// speedProbes are the sweep's speed probes (-speed-probe): one `topobench
// speed` child on every CPU the sweep may use, pinned there, from before
// the first run to the end, so that every run's record has the speed its
// servers' and its load's CPUs ran at (account). Probing every CPU allowed
// covers whichever split -cpus auto chooses.
type speedProbes struct {
	probes []speedProbe
	reads  sync.WaitGroup
	cancel context.CancelFunc
}

// speedProbe is one CPU's probe: its child, the pipe of its output and
// the samples read from it.
type speedProbe struct {
	cpu    int
	series *speed.Series
	proc   *proc.Proc
	pipe   *io.PipeWriter
}

// StartSpeedProbes starts the probes, `bin speed` (the harness's own
// binary when bin is empty), and waits for each one's first line: a probe
// refused real-time priority exits at once, and the sweep with it, naming
// the CPU and why.
func (r *Rig) StartSpeedProbes(ctx context.Context, bin string) error {
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return plan.Errorf(plan.SpeedProbe, "finding the harness binary: %w", err)
		}
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return plan.Errorf(plan.SpeedProbe, "%w", err)
	}
	// The probes end when the sweep stops them (StopSpeedProbes), not
	// with ctx: a run cut by Ctrl-C still reads its speed.
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &speedProbes{cancel: cancel}
	r.probes = p
	for _, cpu := range allowed.CPUs() {
		ser := &speed.Series{}
		pr, pw := io.Pipe()
		pc, err := proc.Start(pctx, bin, []string{"speed"}, proc.Options{CPUs: strconv.Itoa(cpu), Stdout: pw, Grace: 2 * time.Second})
		if err != nil {
			pw.Close()
			return plan.Errorf(plan.SpeedProbe, "CPU %d: %w", cpu, err)
		}
		p.probes = append(p.probes, speedProbe{cpu: cpu, series: ser, proc: pc, pipe: pw})
		p.reads.Add(1)
		go func() {
			defer p.reads.Done()
			if _, err := ser.ReadFrom(pr); err != nil {
				fmt.Fprintf(r.Log, "warning: speed probe on CPU %d: %v\n", cpu, err)
			}
			// Whatever the probe still writes goes nowhere.
			_, _ = io.Copy(io.Discard, pr)
		}()
	}
	deadline := time.Now().Add(speedReady)
	for _, pr := range p.probes {
		for {
			if _, n := pr.series.Mean(time.Time{}, time.Now().Add(time.Hour)); n > 0 {
				break
			}
			if pr.proc.Exited() {
				return plan.Errorf(plan.SpeedProbe, "the probe on CPU %d exited: %w", pr.cpu, pr.proc.Wait())
			}
			if time.Now().After(deadline) {
				return plan.Errorf(plan.SpeedProbe, "the probe on CPU %d printed nothing in %s", pr.cpu, speedReady)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	fmt.Fprintf(r.Progress, "speed probes: %d CPUs (%s), each spinning %s every %s\n", len(p.probes), allowed, speed.DefaultSpin, speed.DefaultPeriod)
	return nil
}

// StopSpeedProbes stops the probes and waits for them and their readers.
func (r *Rig) StopSpeedProbes() {
	if r == nil || r.probes == nil {
		return
	}
	p := r.probes
	p.cancel()
	var errs []error
	for _, pr := range p.probes {
		// A probe asked to stop ends cleanly; anything else is news.
		if err := pr.proc.Wait(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
		pr.pipe.Close()
	}
	p.reads.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(r.Log, "warning: speed probes: %v\n", err)
	}
}

// speedOf is the mean speed of the servers' and the load's CPUs between
// from and to (every CPU probed where a side is not pinned); nil when no
// probe spun in the span.
func (r *Rig) speedOf(servers, load cpuset.CPUSet, from, to time.Time) *results.Speed {
	if r == nil {
		return nil
	}
	return r.probes.speedOf(servers, load, from, to)
}

func (p *speedProbes) speedOf(servers, load cpuset.CPUSet, from, to time.Time) *results.Speed {
	if p == nil {
		return nil
	}
	pick := func(set cpuset.CPUSet) []*speed.Series {
		var out []*speed.Series
		for _, pr := range p.probes {
			if set.IsEmpty() || set.Contains(pr.cpu) {
				out = append(out, pr.series)
			}
		}
		return out
	}
	sv, n := speed.MeanOf(pick(servers), from, to)
	ld, m := speed.MeanOf(pick(load), from, to)
	if n == 0 || m == 0 {
		return nil
	}
	return &results.Speed{Servers: round4(sv), Load: round4(ld), Samples: n + m}
}

func round4(v float64) float64 { return math.Round(1e4*v) / 1e4 }

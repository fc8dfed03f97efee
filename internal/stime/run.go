package stime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
)

// Run runs Procs s_time processes side by side and sums their reports;
// raw is everything they printed to stdout, one report after another,
// also when err is not nil. A run still going Duration + 2×Overrun after
// its start is stopped, with an error matching ErrHung. Cancelling ctx
// stops s_time and returns an error wrapping the context's. It also
// returns the CPU time the processes used, from their rusage.
func Run(ctx context.Context, o Options) (res Result, raw []byte, cpu procstat.Times, err error) {
	if err := o.Validate(); err != nil {
		return Result{}, nil, cpu, err
	}
	if _, err := exec.LookPath(o.bin()); err != nil {
		return Result{}, nil, cpu, fmt.Errorf("s_time: %w", err)
	}
	overrun := o.Overrun
	if overrun == 0 {
		overrun = DefaultOverrun
	}
	limit := o.Duration + 2*overrun
	bounded, cancel := context.WithTimeoutCause(ctx, limit, ErrHung)
	defer cancel()
	outs := make([]bytes.Buffer, o.Procs)
	marks := make([]Marks, o.Procs)
	waitErr, tail := start(bounded, o, outs, marks, &cpu)
	for i := range outs {
		raw = append(raw, outs[i].Bytes()...)
	}
	switch {
	case ctx.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("s_time against %s interrupted: %w", o.URL, context.Cause(ctx))
	case bounded.Err() != nil && waitErr != nil:
		return Result{}, raw, cpu, fmt.Errorf("s_time against %s stopped after %s: %w", o.URL, limit, context.Cause(bounded))
	case waitErr != nil:
		return Result{}, raw, cpu, fmt.Errorf("running s_time against %s: %w", o.URL, waitErr)
	}
	res, err = Parse(bytes.NewReader(raw))
	if err != nil {
		if tail != "" {
			err = fmt.Errorf("%w; its stderr: %s", err, tail)
		}
		return res, raw, cpu, fmt.Errorf("s_time against %s: %w", o.URL, err)
	}
	return res.Timed(marks), raw, cpu, nil
}

// start runs the processes, each printing into its buffer and marks, and
// waits for them all; the first to fail stops the rest. It returns the
// first failure and the first stderr any printed (s_time exits 0 after
// a failed connection, saying why there), and adds every process's CPU
// time to cpu.
func start(ctx context.Context, o Options, outs []bytes.Buffer, marks []Marks, cpu *procstat.Times) (first error, tail string) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ps := make([]*proc.Proc, 0, o.Procs)
	for i := range outs {
		p, err := proc.Start(ctx, o.bin(), o.Args(), o.procOptions(io.MultiWriter(&outs[i], &marks[i])))
		if err != nil {
			first = err
			cancel()
			break
		}
		ps = append(ps, p)
	}
	errs := make(chan error, len(ps))
	for _, p := range ps {
		go func() {
			err := p.Wait()
			errs <- err // before the rest are stopped, so it comes first
			if err != nil {
				cancel()
			}
		}()
	}
	for range ps {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	for _, p := range ps {
		c := p.CPU()
		cpu.User += c.User
		cpu.System += c.System
		if tail == "" {
			tail = strings.TrimSpace(p.Tail())
		}
	}
	return first, tail
}

// Marks is a Writer for one s_time process's stdout that times the
// marks it prints, a character as each connection ends.
type Marks struct {
	line        int
	n           int64
	first, last time.Time
}

func (m *Marks) Write(p []byte) (int, error) {
	now := time.Now()
	for _, b := range p {
		switch {
		case b == '\n':
			m.line++
		case m.line == 1 && (b == '*' || b == 'r'):
			if m.n == 0 {
				m.first = now
			}
			m.n++
			m.last = now
		}
	}
	return len(p), nil
}

// Span is the time from the first connection's end to the last's, and
// the connections that ended in it (all but the first).
func (m *Marks) Span() (time.Duration, int64) {
	if m.n < 2 {
		return 0, 0
	}
	return m.last.Sub(m.first), m.n - 1
}

// Timed is r with Elapsed and ConnPerSec from the marks of its
// processes: the connections each ended after its first, over the time
// they took, summed; Elapsed is the longest span. A process with fewer
// than two marks leaves r as Parse read it.
func (r Result) Timed(marks []Marks) Result {
	var rate float64
	var longest time.Duration
	for i := range marks {
		span, n := marks[i].Span()
		if span <= 0 {
			return r
		}
		rate += float64(n) / span.Seconds()
		longest = max(longest, span)
	}
	if len(marks) == 0 {
		return r
	}
	r.Elapsed, r.ConnPerSec = longest, rate
	return r
}

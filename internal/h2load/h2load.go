// Package h2load runs nghttp2's h2load load generator and reads what it
// prints.
//
// h2load drives HTTP/2 over TLS (the protocol chosen by ALPN, Streams
// concurrent streams a connection) or, with H1, HTTP/1.1 over TLS or plain
// HTTP, one request at a time a connection, closed loop for a duration.
// Run starts it as a child process (optionally pinned, or in a network
// namespace, as internal/proc wraps it), bounds it in time, stops it
// gracefully when the context ends and returns the parsed Result with the
// raw output; Parse is the pure reader of that output.
package h2load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loopurl"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
)

// Options are one h2load run.
type Options struct {
	// Bin is the h2load binary; "h2load" from PATH when empty.
	Bin string
	// URL is what h2load requests; it must point at loopback (or Allow).
	URL string
	// Threads (-t) share Connections (-c, h2load's clients); h2load
	// spreads them evenly, so any count of at least Threads will do.
	Threads     int
	Connections int
	// Streams (-m) are the requests in flight a connection: HTTP/2
	// streams, or with H1 pipelined requests, which this package does not
	// send (Streams must then be 1).
	Streams int
	// H1 forces HTTP/1.1 (--h1), over TLS or plain HTTP; without it
	// h2load negotiates HTTP/2 by ALPN, so the URL must be https://.
	H1 bool
	// Duration (-D) in whole seconds.
	Duration time.Duration
	// Timeout (-N, in whole seconds) closes a connection idle that long,
	// its requests counted as timed out; zero leaves h2load's default.
	Timeout time.Duration
	// CPUs pins h2load to a CPU list; NetNS runs it in that network
	// namespace; Cgroup is the control group it runs in (proc.Options).
	CPUs, NetNS string
	Cgroup      proc.Joiner
	// Allow is the one address besides loopback the load may go to.
	Allow netip.Addr
	// Stdout, if set, receives h2load's output as it is printed.
	Stdout io.Writer
	// Overrun is how long h2load may run past Duration + Timeout before
	// Run stops it as hung (DefaultOverrun if zero).
	Overrun time.Duration
}

// DefaultOverrun bounds h2load's start and its stop around Duration +
// Timeout when Options.Overrun is zero.
const DefaultOverrun = 15 * time.Second

// ErrHung is a run stopped because it overran its bound.
var ErrHung = errors.New("h2load overran its bound")

// Validate reports the first bad option, naming h2load's flag.
func (o Options) Validate() error {
	switch {
	case o.Threads < 1:
		return fmt.Errorf("h2load -t (threads) is %d; need at least 1", o.Threads)
	case o.Connections < o.Threads:
		return fmt.Errorf("h2load -c (connections) %d is fewer than -t (threads) %d; each thread needs a connection", o.Connections, o.Threads)
	case o.Streams < 1:
		return fmt.Errorf("h2load -m (streams) is %d; need at least 1", o.Streams)
	case o.H1 && o.Streams != 1:
		return fmt.Errorf("h2load -m (streams) %d with --h1 would pipeline HTTP/1.1 requests; HTTP/1.1 takes 1", o.Streams)
	case o.Duration < time.Second || o.Duration%time.Second != 0:
		return fmt.Errorf("h2load -D (duration) %s: need whole seconds, at least 1s", o.Duration)
	case o.Timeout < 0 || o.Timeout%time.Second != 0:
		return fmt.Errorf("h2load -N (timeout) %s: need whole seconds (0 for h2load's default)", o.Timeout)
	case o.Overrun < 0:
		return fmt.Errorf("h2load overrun %s: need zero (for %s) or more", o.Overrun, DefaultOverrun)
	}
	u, err := loopurl.Check("h2load", o.URL, o.Allow)
	if err != nil {
		return err
	}
	if !o.H1 && u.Scheme != "https" {
		return fmt.Errorf("h2load URL %q: HTTP/2 goes over TLS (ALPN) here; plain http:// takes --h1", o.URL)
	}
	if o.CPUs != "" {
		if _, err := cpuset.Parse(o.CPUs); err != nil {
			return fmt.Errorf("h2load: %w", err)
		}
	}
	return nil
}

// Args are h2load's arguments, without the binary.
func (o Options) Args() []string {
	args := []string{
		"-t" + strconv.Itoa(o.Threads),
		"-c" + strconv.Itoa(o.Connections),
		"-m" + strconv.Itoa(o.Streams),
		"-D" + strconv.Itoa(int(o.Duration/time.Second)) + "s",
	}
	if o.Timeout > 0 {
		args = append(args, "-N"+strconv.Itoa(int(o.Timeout/time.Second))+"s")
	}
	if o.H1 {
		args = append(args, "--h1")
	}
	return append(args, o.URL)
}

// Command is the full command line Run executes: the namespace and CPU
// wrappers when asked for (proc.Command), the binary, then Args.
func (o Options) Command() []string { return proc.Command(o.bin(), o.Args(), o.procOptions(nil)) }

func (o Options) bin() string {
	if o.Bin == "" {
		return "h2load"
	}
	return o.Bin
}

func (o Options) procOptions(stdout io.Writer) proc.Options {
	return proc.Options{Stop: syscall.SIGTERM, Grace: 2 * time.Second, CPUs: o.CPUs, NetNS: o.NetNS, Cgroup: o.Cgroup, Stdout: stdout}
}

// Run runs h2load and parses its report; raw is everything it printed to
// stdout, also when err is not nil. A run still going Duration + Timeout +
// 2×Overrun after its start is stopped, with an error matching ErrHung.
// Cancelling ctx stops h2load and returns an error wrapping the context's.
// It also returns the CPU time h2load used, from its rusage.
func Run(ctx context.Context, o Options) (res Result, raw []byte, cpu procstat.Times, err error) {
	if err := o.Validate(); err != nil {
		return Result{}, nil, cpu, err
	}
	if _, err := exec.LookPath(o.bin()); err != nil {
		return Result{}, nil, cpu, fmt.Errorf("h2load: %w", err)
	}
	overrun := o.Overrun
	if overrun == 0 {
		overrun = DefaultOverrun
	}
	limit := o.Duration + o.Timeout + 2*overrun
	bounded, cancel := context.WithTimeoutCause(ctx, limit, ErrHung)
	defer cancel()
	var out bytes.Buffer
	var w io.Writer = &out
	if o.Stdout != nil {
		w = io.MultiWriter(&out, o.Stdout)
	}
	p, err := proc.Start(bounded, o.bin(), o.Args(), o.procOptions(w))
	if err != nil {
		return Result{}, nil, cpu, err
	}
	waitErr := p.Wait()
	raw, cpu = out.Bytes(), p.CPU()
	switch {
	case ctx.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("h2load against %s interrupted: %w", o.URL, context.Cause(ctx))
	case bounded.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("h2load against %s stopped after %s: %w", o.URL, limit, context.Cause(bounded))
	case waitErr != nil:
		return Result{}, raw, cpu, fmt.Errorf("running h2load against %s: %w", o.URL, waitErr)
	}
	res, err = Parse(bytes.NewReader(raw))
	if err != nil {
		return res, raw, cpu, fmt.Errorf("h2load against %s: %w", o.URL, err)
	}
	return res, raw, cpu, nil
}

package wrk

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loopurl"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
)

// Options are one wrk run.
type Options struct {
	// Bin is the wrk binary; "wrk" from PATH when empty.
	Bin string
	// URL is what wrk requests; it must point at loopback.
	URL string
	// Threads (-t) and Connections (-c): wrk gives each thread
	// Connections/Threads connections, so Connections must be a multiple
	// of Threads.
	Threads     int
	Connections int
	// Duration (-d) and Timeout (--timeout) in whole seconds, as wrk reads
	// them; Timeout 0 keeps wrk's default of 2s.
	Duration time.Duration
	Timeout  time.Duration
	// Latency adds --latency (the Latency Distribution block).
	Latency bool
	// Close sends "Connection: close" with every request (-H): one
	// request per connection, as ab without -k; wrk reconnects after each
	// answer.
	Close bool
	// Script is a Lua script for -s, usually the one WriteScript wrote.
	Script string
	// CPUs pins wrk to a CPU list (e.g. "0" or "0-1,3"); empty leaves it
	// unpinned. NetNS runs wrk in that network namespace. Both as
	// proc.Options does it.
	CPUs, NetNS string
	// Cgroup, when set, is the control group wrk runs in (proc.Options).
	Cgroup proc.Joiner
	// Allow is the one address besides loopback the load may go to: the
	// server's address inside network namespaces the run created.
	Allow netip.Addr
	// Stdout, if set, receives wrk's output as it is printed.
	Stdout io.Writer
	// Overrun is how long wrk may run past Duration + Timeout, counted
	// from when it starts its clock, before Run stops it as hung
	// (DefaultOverrun if zero); Startup bounds the time before that
	// (DefaultStartup if zero).
	Overrun time.Duration
	Startup time.Duration
}

// DefaultTimeout is wrk's own request timeout when --timeout is not given.
const DefaultTimeout = 2 * time.Second

// Validate reports the first bad option, naming wrk's flag.
func (o Options) Validate() error {
	if o.Threads < 1 {
		return fmt.Errorf("wrk -t (threads) is %d; need at least 1", o.Threads)
	}
	if o.Connections < 1 {
		return fmt.Errorf("wrk -c (connections) is %d; need at least 1", o.Connections)
	}
	if o.Threads > o.Connections {
		return fmt.Errorf("wrk -t (threads) %d exceeds -c (connections) %d; each thread needs a connection", o.Threads, o.Connections)
	}
	if o.Connections%o.Threads != 0 {
		return fmt.Errorf("wrk -c (connections) %d is not a multiple of -t (threads) %d; wrk would open only %d",
			o.Connections, o.Threads, o.Connections/o.Threads*o.Threads)
	}
	if o.Duration < time.Second || o.Duration%time.Second != 0 {
		return fmt.Errorf("wrk -d (duration) %s: need whole seconds, at least 1s", o.Duration)
	}
	if o.Timeout < 0 || o.Timeout%time.Second != 0 {
		return fmt.Errorf("wrk --timeout %s: need whole seconds (0 for wrk's default %s)", o.Timeout, DefaultTimeout)
	}
	if o.Overrun < 0 {
		return fmt.Errorf("wrk overrun %s: need zero (for %s) or more", o.Overrun, DefaultOverrun)
	}
	if o.Startup < 0 {
		return fmt.Errorf("wrk startup bound %s: need zero (for %s) or more", o.Startup, DefaultStartup)
	}
	if _, err := loopurl.Check("wrk", o.URL, o.Allow); err != nil {
		return err
	}
	if o.CPUs != "" {
		if _, err := cpuset.Parse(o.CPUs); err != nil {
			return fmt.Errorf("wrk: %w", err)
		}
	}
	return nil
}

// Args are wrk's arguments, without the binary.
func (o Options) Args() []string {
	args := []string{
		"-t" + strconv.Itoa(o.Threads),
		"-c" + strconv.Itoa(o.Connections),
		"-d" + strconv.Itoa(int(o.Duration/time.Second)) + "s",
	}
	if o.Timeout > 0 {
		args = append(args, "--timeout", strconv.Itoa(int(o.Timeout/time.Second))+"s")
	}
	if o.Latency {
		args = append(args, "--latency")
	}
	if o.Close {
		args = append(args, "-H", "Connection: close")
	}
	if o.Script != "" {
		args = append(args, "-s", o.Script)
	}
	return append(args, o.URL)
}

// Command is the full command line Run executes (proc.Command): the
// namespace and CPU wrappers when asked for, "stdbuf -oL" (so wrk's header
// lines arrive when it prints them, see Run), the wrk binary, then Args.
func (o Options) Command() []string {
	return proc.Command("stdbuf", append([]string{"-oL", o.bin()}, o.Args()...), o.procOptions(nil))
}

func (o Options) bin() string {
	if o.Bin == "" {
		return "wrk"
	}
	return o.Bin
}

func (o Options) procOptions(stdout io.Writer) proc.Options {
	// SIGINT makes wrk stop early and still print its report.
	return proc.Options{Stop: syscall.SIGINT, Grace: 5 * time.Second, CPUs: o.CPUs, NetNS: o.NetNS, Cgroup: o.Cgroup, Stdout: stdout}
}

// DefaultOverrun is how long wrk may run past Duration + Timeout, counted
// from when it starts its clock, before Run stops it as hung, when
// Options.Overrun is zero.
const DefaultOverrun = 10 * time.Second

// DefaultStartup bounds how long wrk may take to start its clock, when
// Options.Startup is zero. Starting is creating a Lua state and an event
// loop per thread, one thread after another, while the threads already
// started send load; a wrk held to a small CPU quota takes most of a
// minute.
const DefaultStartup = 60 * time.Second

// Run runs wrk and parses its report. raw is everything wrk printed to
// stdout, also when err is not nil. Cancelling ctx stops wrk with SIGINT
// and returns an error wrapping the context's error.
//
// wrk measures Duration from the moment it prints its "N threads and M
// connections" line, after it has started every thread; Run runs wrk
// line-buffered (Command) to see that moment, and records the time before
// it as Result.Startup. wrk then sleeps for Duration and each thread stops
// at its next 100ms tick, so a run still going Duration + Timeout +
// Overrun after the header (or Startup + that, while no header came) is
// hung: Run records wrk's state (ProcessState: threads, system calls,
// socket queues), stops it and returns a *HangError, which matches ErrHung;
// the state is also appended to raw after a marker line, so whoever keeps
// raw keeps it.
func Run(ctx context.Context, o Options) (res Result, raw []byte, err error) {
	res, raw, _, err = RunCPU(ctx, o)
	return res, raw, err
}

// RunCPU is Run that also returns the CPU time wrk used, from its rusage
// once it has exited (zero if it did not start).
func RunCPU(ctx context.Context, o Options) (res Result, raw []byte, cpu procstat.Times, err error) {
	if err := o.Validate(); err != nil {
		return Result{}, nil, cpu, err
	}
	for _, name := range []string{"stdbuf", o.bin()} {
		if _, err := exec.LookPath(name); err != nil {
			return Result{}, nil, cpu, fmt.Errorf("wrk: %w", err)
		}
	}
	window := o.Duration + o.timeout() + o.overrun()
	startup := o.Startup
	if startup == 0 {
		startup = DefaultStartup
	}

	var out bytes.Buffer
	hdr := &headerWatch{seen: make(chan struct{})}
	var w io.Writer = io.MultiWriter(&out, hdr)
	if o.Stdout != nil {
		w = io.MultiWriter(&out, hdr, o.Stdout)
	}
	begin := time.Now()
	p, err := proc.Start(ctx, "stdbuf", append([]string{"-oL", o.bin()}, o.Args()...), o.procOptions(w))
	if err != nil {
		return Result{}, nil, cpu, err
	}
	deadline := time.NewTimer(startup + window)
	defer deadline.Stop()
	var hang *HangError
	seen := hdr.seen
wait:
	for {
		select {
		case <-p.Done():
			break wait
		case <-ctx.Done(): // proc stops wrk
			break wait
		case <-seen:
			seen = nil
			deadline.Reset(time.Until(hdr.at.Add(window)))
		case <-deadline.C:
			// Look before stopping it: afterwards there is nothing to see.
			// taskset and stdbuf exec wrk, so the pid is wrk's.
			hang = &HangError{URL: o.URL, Limit: window, Started: hdr.started()}
			if !hang.Started {
				hang.Limit = startup + window
			}
			hang.State, hang.Threads = processState(p.Pid())
			// A hung wrk is unlikely to act on SIGINT; do not wait long.
			_ = p.Stop(syscall.SIGINT, 2*time.Second)
			break wait
		}
	}
	waitErr := p.Wait()
	raw, cpu = out.Bytes(), p.CPU()
	switch {
	case hang != nil:
		raw = fmt.Appendf(raw, "\n%s\n%s", hangMarker, hang.State)
		return Result{}, raw, cpu, hang
	case ctx.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("wrk against %s interrupted: %w", o.URL, context.Cause(ctx))
	case waitErr != nil:
		return Result{}, raw, cpu, fmt.Errorf("running wrk against %s: %w", o.URL, waitErr)
	}
	res, err = Parse(bytes.NewReader(raw))
	if err != nil {
		return res, raw, cpu, fmt.Errorf("parsing wrk output: %w", err)
	}
	if hdr.started() {
		res.Startup = hdr.at.Sub(begin)
	}
	return res, raw, cpu, nil
}

func (o Options) timeout() time.Duration {
	if o.Timeout == 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

func (o Options) overrun() time.Duration {
	if o.Overrun == 0 {
		return DefaultOverrun
	}
	return o.Overrun
}

// headerWatch notes when wrk prints "N threads and M connections", the
// line after which it starts its clock.
type headerWatch struct {
	mu   sync.Mutex
	line []byte
	done bool
	at   time.Time // set before seen is closed
	seen chan struct{}
}

func (h *headerWatch) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return len(b), nil
	}
	for _, c := range b {
		if c != '\n' {
			if len(h.line) < 512 {
				h.line = append(h.line, c)
			}
			continue
		}
		if reThreads.MatchString(strings.Join(strings.Fields(string(h.line)), " ")) {
			h.at, h.done = time.Now(), true
			close(h.seen)
			return len(b), nil
		}
		h.line = h.line[:0]
	}
	return len(b), nil
}

// started reports whether the header came while wrk ran, as it does when
// stdbuf took effect, rather than with the rest of the output at exit.
func (h *headerWatch) started() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

// Version returns the version wrk reports ("4.1.0", or a distribution's
// "debian/4.1.0-3+b2").
func Version(ctx context.Context, bin string) (string, error) {
	if bin == "" {
		bin = "wrk"
	}
	var out bytes.Buffer
	p, err := proc.Start(ctx, bin, []string{"-v"}, proc.Options{Stdout: &out, Grace: time.Second})
	if err != nil {
		return "", err
	}
	// wrk -v prints the version and then its usage, and exits 1.
	waitErr := p.Wait()
	v, err := ParseVersion(&out)
	if err == nil {
		return v, nil
	}
	if waitErr != nil {
		err = waitErr
	}
	return "", fmt.Errorf("reading wrk version from %s -v: %w", bin, err)
}

// ParseVersion reads the version from wrk -v's output, whose first line
// is "wrk 4.1.0 [epoll] Copyright (C) 2012 Will Glozer".
func ParseVersion(r io.Reader) (string, error) {
	first, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", fmt.Errorf("reading wrk -v output: %w", err)
	}
	if f := strings.Fields(first); len(f) >= 2 && f[0] == "wrk" {
		return f[1], nil
	}
	return "", fmt.Errorf("no version line in wrk -v output: %q", strings.TrimSpace(first))
}

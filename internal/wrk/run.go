package wrk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
)

// Options are one wrk run.
type Options struct {
	// Bin is the wrk binary; "wrk" from PATH when empty.
	Bin string
	// URL is what wrk requests; it must point at loopback or at Allow.
	URL string
	// Allow is the one address besides loopback the URL may name: the
	// server end of a veth pair the run created itself, reached from
	// NetNS. Nothing else ever is.
	Allow netip.Addr
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
	// Script is a Lua script for -s, usually the one WriteScript wrote.
	Script string
	// CPUs pins wrk to a CPU list (e.g. "0" or "0-1,3"); empty leaves it
	// unpinned. NetNS runs wrk in that network namespace. Both as
	// proc.Options does it.
	CPUs, NetNS string
	// Stdout, if set, receives wrk's output as it is printed.
	Stdout io.Writer
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
	if err := checkLoopback(o.URL, o.Allow); err != nil {
		return err
	}
	if o.CPUs != "" {
		if _, err := procstat.ParseCPUList(o.CPUs); err != nil {
			return fmt.Errorf("wrk: %w", err)
		}
	}
	return nil
}

// checkLoopback accepts only http(s) URLs on 127.0.0.0/8, ::1, localhost
// or the one allowed address: load tests never leave the machine.
func checkLoopback(raw string, allow netip.Addr) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("wrk URL %q: want http:// or https://", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if a, err := netip.ParseAddr(host); err == nil && allow.IsValid() && a == allow {
		return nil
	}
	if allow.IsValid() {
		return fmt.Errorf("wrk URL %q: load goes to loopback (127.0.0.0/8, ::1 or localhost) or %s only", raw, allow)
	}
	return fmt.Errorf("wrk URL %q: load goes to loopback only (127.0.0.0/8, ::1 or localhost)", raw)
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
	if o.Script != "" {
		args = append(args, "-s", o.Script)
	}
	return append(args, o.URL)
}

// Command is the full command line Run executes (proc.Command): the
// namespace and CPU wrappers when asked for, the wrk binary, then Args.
func (o Options) Command() []string {
	return proc.Command(o.bin(), o.Args(), o.procOptions())
}

func (o Options) bin() string {
	if o.Bin == "" {
		return "wrk"
	}
	return o.Bin
}

func (o Options) procOptions() proc.Options {
	// SIGINT makes wrk stop early and still print its report.
	return proc.Options{Stop: syscall.SIGINT, Grace: 5 * time.Second, CPUs: o.CPUs, NetNS: o.NetNS}
}

// Run runs wrk and parses its report. raw is everything wrk printed to
// stdout, also when err is not nil. Cancelling ctx stops wrk with SIGINT
// and returns an error wrapping the context's error; wrk is also stopped if
// it runs well past Duration + Timeout.
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
	if _, err := exec.LookPath(o.bin()); err != nil {
		return Result{}, nil, cpu, fmt.Errorf("wrk: %w", err)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	// wrk sleeps for Duration, then waits for each thread's next 100ms
	// tick; anything far beyond that is a hang.
	limit := o.Duration + timeout + 10*time.Second
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	var out bytes.Buffer
	var w io.Writer = &out
	if o.Stdout != nil {
		w = io.MultiWriter(&out, o.Stdout)
	}
	popt := o.procOptions()
	popt.Stdout = w
	p, err := proc.Start(runCtx, o.bin(), o.Args(), popt)
	if err != nil {
		return Result{}, nil, cpu, err
	}
	waitErr := p.Wait()
	raw, cpu = out.Bytes(), p.CPU()
	switch {
	case ctx.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("wrk against %s interrupted: %w", o.URL, context.Cause(ctx))
	case runCtx.Err() != nil:
		return Result{}, raw, cpu, fmt.Errorf("wrk against %s did not finish within %s: %w", o.URL, limit, context.DeadlineExceeded)
	case waitErr != nil:
		return Result{}, raw, cpu, fmt.Errorf("running wrk against %s: %w", o.URL, waitErr)
	}
	res, err = Parse(bytes.NewReader(raw))
	if err != nil {
		return res, raw, cpu, fmt.Errorf("parsing wrk output: %w", err)
	}
	return res, raw, cpu, nil
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
	first, _, _ := strings.Cut(out.String(), "\n")
	if f := strings.Fields(first); len(f) >= 2 && f[0] == "wrk" {
		return f[1], nil
	}
	if waitErr == nil {
		waitErr = errors.New("no version line")
	}
	return "", fmt.Errorf("reading wrk version from %s -v: %w", bin, waitErr)
}

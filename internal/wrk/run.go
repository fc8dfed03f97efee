package wrk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/proc"
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
	// Script is a Lua script for -s, usually the one WriteScript wrote.
	Script string
	// CPUs pins wrk with "taskset -c CPUs" (e.g. "0" or "0-1,3"); empty
	// leaves it unpinned.
	CPUs string
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
	if err := checkLoopback(o.URL); err != nil {
		return err
	}
	if o.CPUs != "" {
		if _, err := cpuset.Parse(o.CPUs); err != nil {
			return fmt.Errorf("wrk: %w", err)
		}
	}
	return nil
}

// checkLoopback accepts only http(s) URLs on 127.0.0.0/8, ::1 or
// localhost: load tests never leave the machine.
func checkLoopback(raw string) error {
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

// Command is the full command line Run executes: taskset when pinned, the
// wrk binary, then Args.
func (o Options) Command() []string {
	bin := o.Bin
	if bin == "" {
		bin = "wrk"
	}
	cmd := []string{bin}
	if o.CPUs != "" {
		cmd = []string{"taskset", "-c", o.CPUs, bin}
	}
	return append(cmd, o.Args()...)
}

// Run runs wrk and parses its report. raw is everything wrk printed to
// stdout, also when err is not nil. Cancelling ctx stops wrk with SIGINT
// and returns an error wrapping the context's error; wrk is also stopped if
// it runs well past Duration + Timeout.
func Run(ctx context.Context, o Options) (res Result, raw []byte, err error) {
	if err := o.Validate(); err != nil {
		return Result{}, nil, err
	}
	argv := o.Command()
	need := []string{argv[0]}
	if o.CPUs != "" {
		need = append(need, argv[3]) // the wrk binary after "taskset -c CPUs"
	}
	for _, name := range need {
		if _, err := exec.LookPath(name); err != nil {
			return Result{}, nil, fmt.Errorf("wrk: %w", err)
		}
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
	// SIGINT makes wrk stop early and still print its report.
	p, err := proc.Start(runCtx, argv[0], argv[1:], proc.Options{Stop: syscall.SIGINT, Grace: 5 * time.Second, Stdout: w})
	if err != nil {
		return Result{}, nil, err
	}
	waitErr := p.Wait()
	raw = out.Bytes()
	switch {
	case ctx.Err() != nil:
		return Result{}, raw, fmt.Errorf("wrk against %s interrupted: %w", o.URL, context.Cause(ctx))
	case runCtx.Err() != nil:
		return Result{}, raw, fmt.Errorf("wrk against %s did not finish within %s: %w", o.URL, limit, context.DeadlineExceeded)
	case waitErr != nil:
		return Result{}, raw, fmt.Errorf("running wrk against %s: %w", o.URL, waitErr)
	}
	res, err = Parse(bytes.NewReader(raw))
	if err != nil {
		return res, raw, fmt.Errorf("parsing wrk output: %w", err)
	}
	return res, raw, nil
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

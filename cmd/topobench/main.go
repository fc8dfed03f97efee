// Command topobench measures what it costs to put nginx in front of a Go
// service, and which way of connecting them is fastest.
//
// Usage:
//
//	topobench <command> [flags]
//
// Commands:
//
//	compare     run the sweep: topologies x GOMAXPROCS x repetitions (x handler
//	            work, rates, ...) under wrk or the built-in engine
//	report      re-render the report of a results directory (-format), or write
//	            one HTML page of several (-html)
//	diff        compare two results directories cell by cell, as benchstat does
//	windows     compare paired sweeps of different window lengths: the spread
//	            of per-window rates and the time a ratio needs at each
//	parity      check that every topology returns the identical response
//	load        drive one URL with the built-in open- or closed-loop engine
//	preflight   show the kernel and limits settings in effect
//	nginx-conf  write the rendered nginx configuration for inspection
//	speed       probe the speed of the CPU it runs on (compare -speed-probe)
//
// Run "topobench <command> -h" for a command's flags.
//
// # load
//
//	topobench load [flags] URL
//
// drives one URL, http://127.0.0.1:PORT/path (loopback addresses only) or
// unix:/path/to.sock:/path, with the built-in engine (internal/load):
// HTTP/1.1 GETs over kept-alive connections. Without -rate it is closed
// loop like wrk: -connections N each send the next request when the
// previous answer is in, so a stalled server also stalls the load. With
// -rate R it is open loop: requests are due at -arrivals poisson (default)
// or uniform times, latency runs from that intended time, a request that
// finds every connection busy is counted late and waits while more
// connections open (up to -max-connections), and one not sent within
// -timeout of its time is dropped. -requests N or -duration D bounds the
// run (10s by default). -wait D appends ?wait=D, which cmd/hello answers
// after that delay. -timeout (2s) turns slow answers into timeout errors.
//
// The same run can be given as a JSON spec (internal/load's Spec, whose
// keys are these flags' names and whose durations are strings such as
// "15s"): topobench load -spec FILE, or -spec - for standard input; flags
// given beside it override the file, a URL given replaces its target.
// compare -load builtin runs each cell this way and keeps the spec as
// runs/<cell>.spec, so "topobench load -spec runs/<cell>.spec" repeats a
// run (an isolated run's spec names the veth address, refused once its
// namespaces are gone; a URL given beside it aims it elsewhere).
//
// It prints the requests, achieved against target rate, late and dropped
// requests, errors in wrk's classes (connect, read, write, timeout, status
// >= 400; framing errors are read errors), latency percentiles p50 to
// p99.99 and max in milliseconds, and the engine's CPU time per request;
// -json prints the same as one JSON object. -out DIR writes latency.hgrm
// (HdrHistogram's percentile text), latency.hdr (the encoded histogram,
// exact and mergeable) and summary.json. A progress line goes to stderr
// every second (-quiet turns it off); Ctrl-C stops the run, prints what
// was measured and exits 1. A run in which no request succeeded (every
// one an error or a status of 400 or more) prints its summary and exits 3;
// bad input is one line naming the flag (or the spec's key) and exits 2. The engine runs on -procs 1 P by default: one
// P costs the least CPU per request and leaves the other cores to the
// servers under test.
//
// -probe N -wait W is the concurrency-level probe of the 2016 study: N
// connections are opened (refused above the open-files limit), then one
// request with the handler wait W goes out on each at once. A request the
// server takes on at once answers in about W, a queued one no earlier than
// 2W; answers within -within (default W plus the larger of W/2 and 1s)
// count as served concurrently, and the summary reports that count beside
// the errors.
//
// -allow ADDR lets the load go to one link-local address besides loopback:
// the server end of the veth in network namespaces the caller created,
// as compare -isolate netns does.
//
// -session runs a load session instead: one process that keeps its
// connections across many measured windows, on one or several targets
// (pools), driven one command a line on standard input with one JSON
// reply a line on standard output: open NAME SPEC, window NAME DURATION
// [lead DURATION], close NAME, quit (go doc ./internal/load, Sessions). Only -procs applies
// beside it.
//
// Every connection is opened before the measured time, at most 64 dials
// (load.DialsInFlight) under way at once, and counts as open once it has
// answered a first request. A request past -timeout is counted as a
// timeout, as wrk counts it, and its connection is kept for the answer
// (cut and dialed again after twice the timeout); reconnects are counted.
//
// -start-at TIME (RFC 3339) connects first, then begins the measured run at
// that wall-clock instant and records how late it really began (start_skew_ms);
// -report prints the summary and the encoded histogram as marked text lines
// instead: what a load job on a cluster node prints for the harness to
// collect from its log (internal/cluster).
//
// # Targets
//
// compare -targets go,erlang,java-threads,java-pool,java-netty,java-jetty
// (or all; default go) measures, beside Go's cmd/hello, the servers the
// older seed comparisons ran (internal/target, sources in targets/):
// each is built once per run with javac or erlc into DIR/bin/<target>,
// replaces cmd/hello on standalone and behind nginx-http (the FastCGI
// topologies and the nginx ceilings stay Go's), restarts for each
// -gomaxprocs value with that processor count (Erlang +S N, the JVM's
// -XX:ActiveProcessorCount=N, heap fixed at 256m; java-pool has 5 threads)
// and must pass parity against cmd/hello's bytes before it is measured.
// A missing compiler or library is refused before anything starts, naming
// the Debian package. env.json and summary.md's machine section record
// each target's command line. -preset 2009 -targets all is the 2009
// table; -preset 2007 runs go, java-threads, java-pool and erlang
// standalone at -c1000 with -close (Connection: close on every request,
// a connection per request as ab without -k) beside the 2007 figures.
//
// # Isolation
//
// By default compare runs the servers (cmd/hello, nginx) and the
// load generator as two network hosts, each in a network namespace of its
// own joined by a veth (-isolate netns, where the harness may create
// namespaces: as root with the ip command), and on separate CPUs (-cpus
// auto: the load generator on CPU 0, the servers on the rest). Every run
// records the CPU time of the load generator, of nginx and of cmd/hello,
// the machine's steal and other load, and whether the servers were idle
// before the cell began. -isolate none -cpus none is the 2013 setup: all on
// one loopback, sharing every CPU. -link-delay 100us adds a one-way delay
// on each end of the veth with tc netem, a LAN as in the 2009 setup; a
// kernel without sch_netem gets one line saying so, and nothing runs.
// A run killed outright leaves its
// namespaces (tb-PID-N-srv, tb-PID-N-cli); the next isolated run removes
// them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand; each lives in its own file.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"compare":    {"run the sweep and write a report", runCompare},
		"report":     {"re-render the summary and charts of a results directory", runReport},
		"diff":       {"compare two results directories cell by cell, as benchstat does", runDiff},
		"windows":    {"compare paired sweeps of different window lengths: per-window spread, time a ratio needs", runWindows},
		"parity":     {"check that every topology returns the identical response", runParity},
		"load":       {"drive one URL with the built-in open- or closed-loop engine", runLoad},
		"preflight":  {"show the kernel and limits settings in effect", runPreflight},
		"nginx-conf": {"write the rendered nginx configuration", runNginxConf},
		"speed":      {"probe the speed of the CPU it runs on (compare -speed-probe runs it)", runSpeed},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			printError(os.Stderr, err)
		}
		os.Exit(exitCode(err))
	}
}

// printError writes err after the command's name; an error of several
// complete lines (lineList) gets the name on each.
func printError(w io.Writer, err error) {
	var ll *lineList
	if !errors.As(err, &ll) {
		fmt.Fprintln(w, "topobench:", err)
		return
	}
	for _, l := range ll.lines {
		fmt.Fprintln(w, "topobench:", l)
	}
}

// exitError carries a specific exit status (e.g. 2 for usage errors).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0 // asked for help, got it
	}
	return 1
}

func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return usageError("no command given")
		}
		return nil
	}
	c, ok := cmds[args[0]]
	if !ok {
		usage(stderr, cmds)
		return usageError("unknown command %q", args[0])
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: topobench <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].summary)
	}
}

// newFlagSet returns a flag set whose parse errors come back as usage errors
// instead of exiting, with output to stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("topobench "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and rejects stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		return usageError("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

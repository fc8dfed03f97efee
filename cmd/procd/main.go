// Command procd runs one program inside a container on behalf of the
// topobench harness in another container of the same run, which asks it
// over loopback to restart the program — cmd/hello with a new GOMAXPROCS,
// nginx with a freshly rendered configuration — as the harness starts them
// itself on the host. compose/docker-compose.yml is where it is used.
//
// Usage:
//
//	procd -listen ADDR [flags] -- PROGRAM [ARGS...]
//	procd -check URL
//
// procd starts PROGRAM at once and serves (see internal/supervise):
//
//	GET  /healthz  200 once PROGRAM answers every -ready target, else 503
//	GET  /status   the program's state as JSON
//	POST /restart  {"env":["GOMAXPROCS=8"]}: stop, -prepare, start, wait for -ready
//	POST /stop     stop the program
//	GET  /cpu      the CPU time of the program's process tree so far, for the
//	               harness in another container, which cannot see it
//
// The program starts with procd's hard open-files limit as its soft one.
//
// The API answers only requests whose Host is a loopback address or
// localhost, that carry no Origin header, and, for POST, with
// Content-Type: application/json: a web page cannot make a browser on
// the host send such a request without a CORS preflight, which procd
// never grants (internal/supervise's Client sends them).
//
// Flags:
//
//	-listen ADDR          loopback address of the API (required; anything else
//	                      is refused: the API starts programs), or one given
//	                      with -allow-host
//	-allow-host IP        an address besides loopback the API may listen on and
//	                      answer as Host: the node's own, when the harness runs
//	                      on another machine (topobench compare -swarm); the
//	                      Origin and Content-Type rules still hold. Anyone who
//	                      reaches that address can restart or stop the program:
//	                      use it on a benchmark network only; repeatable
//	-ready TARGET         must answer before the program counts as started:
//	                      http://HOST:PORT/PATH (any HTTP response), tcp:HOST:PORT
//	                      or unix:PATH; repeatable
//	-ready-timeout D      bound on that wait (10s)
//	-env NAME             a variable a restart may set; repeatable. A value
//	                      the program would ignore is refused, in a restart
//	                      or inherited by procd: GOMAXPROCS must be a
//	                      positive integer
//	-prepare "CMD ARGS"   run to completion before every start; split on
//	                      spaces, no shell
//	-version-args "ARGS"  make the program print its version (nginx: -v); the
//	                      first line shows in /status as "version"
//	-stop-signal SIG      TERM, QUIT, INT or HUP (TERM)
//	-grace D              after the stop signal, how long before the
//	                      program's process group is killed (5s)
//
// With -check, procd sends one GET to URL and exits 0 on 200 — the
// containers' healthcheck, as their images have no curl.
//
// On SIGINT or SIGTERM procd stops the program and exits 0. If the first
// start fails procd exits 1 with the reason, so the container fails at once
// instead of never turning healthy.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/supervise"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "procd:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM,
	"QUIT": syscall.SIGQUIT,
	"INT":  syscall.SIGINT,
	"HUP":  syscall.SIGHUP,
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.check != "" {
		if len(o.program) > 0 {
			return usageError{fmt.Errorf("-check takes no program (got %q)", o.program[0])}
		}
		return supervise.Check(ctx, o.check, 5*time.Second)
	}
	if len(o.program) == 0 {
		return usageError{errors.New("no program given (procd -listen ADDR [flags] -- PROGRAM [ARGS...])")}
	}
	cfg, err := o.config(stdout, stderr)
	if err != nil {
		return usageError{err}
	}
	// The program inherits the hard open-files limit, not the soft one
	// the Go runtime would give it back (see preflight.RaiseOpenFiles).
	if _, _, err := preflight.RaiseOpenFiles(); err != nil {
		fmt.Fprintf(stderr, "procd: warning: %v\n", err)
	}
	s, err := supervise.New(cfg)
	if err != nil {
		return usageError{err}
	}
	return serve(ctx, s, o.listen, stderr)
}

// options are procd's flags, and the program after them.
type options struct {
	listen, check                 string
	ready, env, allowHosts        listFlag
	readyTimeout, grace           time.Duration
	prepare, versionArgs, stopSig string
	program                       []string
}

// parseFlags reads procd's flags; a bad one is a usageError, -h
// flag.ErrHelp.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("procd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "", "loopback `address` of the API")
	fs.StringVar(&o.check, "check", "", "send one GET to `URL` and exit 0 on 200")
	fs.Var(&o.ready, "ready", "`target` that must answer before the program counts as started (repeatable)")
	fs.Var(&o.env, "env", "`name` of a variable a restart may set (repeatable)")
	fs.DurationVar(&o.readyTimeout, "ready-timeout", 10*time.Second, "bound on the wait for -ready")
	fs.StringVar(&o.prepare, "prepare", "", "`command` run before every start (split on spaces, no shell)")
	fs.StringVar(&o.versionArgs, "version-args", "", "`arguments` that make the program print its version (split on spaces)")
	fs.StringVar(&o.stopSig, "stop-signal", "TERM", "`signal` that asks the program to finish: TERM, QUIT, INT or HUP")
	fs.DurationVar(&o.grace, "grace", 5*time.Second, "time after the stop signal before the process group is killed")
	fs.Var(&o.allowHosts, "allow-host", "`address` besides loopback the API may listen on and be addressed as (Host), for a harness on another machine; repeatable")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: procd -listen ADDR [flags] -- PROGRAM [ARGS...]\n       procd -check URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	o.program = fs.Args()
	return o, nil
}

// config is the supervisor's configuration of the flags, checked: the
// hosts the API may be addressed as, -listen, and the stop signal.
func (o options) config(stdout, stderr io.Writer) (supervise.Config, error) {
	var allow []netip.Addr
	for _, h := range o.allowHosts {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return supervise.Config{}, fmt.Errorf("-allow-host %q: not an IP address (a name could be rebound)", h)
		}
		allow = append(allow, a)
	}
	if err := listenable(o.listen, allow); err != nil {
		return supervise.Config{}, err
	}
	sig, ok := signals[strings.TrimPrefix(strings.ToUpper(o.stopSig), "SIG")]
	if !ok {
		return supervise.Config{}, fmt.Errorf("-stop-signal %q: want TERM, QUIT, INT or HUP", o.stopSig)
	}
	return supervise.Config{
		Program:      o.program[0],
		Args:         o.program[1:],
		Prepare:      strings.Fields(o.prepare),
		Env:          o.env,
		VersionArgs:  strings.Fields(o.versionArgs),
		Ready:        o.ready,
		ReadyTimeout: o.readyTimeout,
		StopSignal:   sig,
		Grace:        o.grace,
		Stdout:       stdout,
		Stderr:       stderr,
		AllowHosts:   allow,
	}, nil
}

// serve starts the program, serves the API on listen until ctx ends,
// then stops the program.
func serve(ctx context.Context, s *supervise.Supervisor, listen string, stderr io.Writer) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("-listen %s: %w", listen, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer srv.Close()

	st, err := s.Start(ctx, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "procd: %s ready (pid %d); API on http://%s\n", s.Name(), st.Pid, ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-served:
		_ = s.Stop()
		return fmt.Errorf("serving the API: %w", err)
	}
	// Stop the program first: a restart in flight finishes or fails, then
	// nothing is left running.
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	if err := s.Stop(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "procd: %s stopped\n", s.Name())
	return nil
}

// loopback refuses API addresses reachable from outside the host's (or the
// run's) network namespace.
// listenable checks -listen: a loopback address, or one given with
// -allow-host.
func listenable(addr string, allow []netip.Addr) error {
	if addr != "" {
		if ap, err := netip.ParseAddrPort(addr); err == nil {
			for _, a := range allow {
				if ap.Addr().Unmap() == a.Unmap() {
					return nil
				}
			}
		}
	}
	return loopback(addr)
}

func loopback(addr string) error {
	if addr == "" {
		return errors.New("-listen is required (a loopback address such as 127.0.0.1:7070)")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-listen %s: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if host == "localhost" {
		return nil
	}
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %s: not a loopback address; the API starts programs, so it must not be reachable from elsewhere", addr)
	}
	return nil
}

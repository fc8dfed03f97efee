package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/unixsock"
)

// DefaultStartTimeout bounds Start when ctx has no earlier deadline: a JVM
// with Jetty takes seconds to start on a busy machine.
const DefaultStartTimeout = 60 * time.Second

// DefaultGrace is how long a target has to exit after SIGTERM before it is
// killed.
const DefaultGrace = 5 * time.Second

// Config says how to run a Program.
type Config struct {
	// Addr is the IP:PORT it listens on.
	Addr string
	// Unix is the unix socket path a command target that names {unix}
	// listens on; the others ignore it.
	Unix string
	// Path is the request path of a command target's readiness request
	// ("/" if empty), and Header its extra request headers (a service may
	// want an Accept or an API key); the seed targets are probed with "/".
	Path   string
	Header http.Header
	// Procs is the sweep's processor value: Erlang schedulers (+S N) or
	// the JVM's processor count (-XX:ActiveProcessorCount=N); 0 leaves the
	// runtime's default (every CPU).
	Procs int
	// PoolThreads is java-pool's pool size (DefaultPoolThreads if 0);
	// other targets ignore it.
	PoolThreads int
	// Stderr, if set, receives a copy of the target's standard error.
	Stderr io.Writer
	// Grace is how long it has to exit after SIGTERM (DefaultGrace if 0).
	Grace time.Duration
	// NetNS runs it in that network namespace and CPUs pins it to a CPU
	// list (see proc.Options); Dial makes the readiness requests and must
	// reach inside NetNS when that is set (netns.Dialer). Nil dials from
	// the harness.
	NetNS, CPUs string
	Dial        hellorun.DialFunc
}

// Server is a running target.
type Server struct {
	Program *Program
	// Addr is where it listens; Unix too, for a command target with
	// {unix}.
	Addr, Unix string
	p          *proc.Proc
	grace      time.Duration
	stopOnce   sync.Once
	stopErr    error
}

// ReadyPrefix is the start of the line a target writes to stderr once it
// listens: "NAME: ready".
func (t Target) ReadyPrefix() string { return t.Name + ": ready" }

// Start runs p and returns once it has written its ready line and answered
// a real GET with cmd/hello's body, within ctx's deadline or
// DefaultStartTimeout, whichever comes first. Cancelling ctx stops the
// target gracefully. On failure the target is stopped and waited for, and
// the error carries the tail of its stderr; a missing runtime matches
// ErrMissingTool.
//
// A command target has no ready line; see the package doc and
// CommandStartTimeout.
func (p *Program) Start(ctx context.Context, cfg Config) (*Server, error) {
	t := p.Target
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if t.Runtime == Cmd {
		return p.startCommand(ctx, cfg)
	}
	if err := checkAddr(cfg.Addr); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	if err := t.check(t.RunTools); err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	argv := p.Command(cfg)
	ready := proc.NewLineWatch(t.ReadyPrefix())
	var stderr io.Writer = ready
	if cfg.Stderr != nil {
		stderr = io.MultiWriter(ready, cfg.Stderr)
	}
	child, err := proc.Start(ctx, argv[0], argv[1:], proc.Options{Stderr: stderr, Grace: cfg.Grace, NetNS: cfg.NetNS, CPUs: cfg.CPUs})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", t.Name, err)
	}
	child.Name = t.Name
	s := &Server{Program: p, Addr: cfg.Addr, p: child, grace: cfg.Grace}

	sctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	fail := func(format string, args ...any) (*Server, error) {
		err := fmt.Errorf("starting %s on %s: "+format, append([]any{t.Name, cfg.Addr}, args...)...)
		_ = s.Stop()
		if tail := strings.TrimSpace(child.Tail()); tail != "" {
			err = fmt.Errorf("%w\n%s", err, proc.Indent(proc.LastLines(tail, 10), "    "))
		}
		return nil, err
	}
	select {
	case <-ready.Found():
	case <-child.Done():
		// The end of ctx also ends the child: say what ran out.
		if ctx.Err() != nil {
			return fail("no %q line: %w", t.ReadyPrefix(), ctx.Err())
		}
		return fail("it exited before it was ready: %s", exitStatus(child))
	case <-sctx.Done():
		return fail("no %q line: %w", t.ReadyPrefix(), sctx.Err())
	}
	// The ready line says it listens; a real request says it serves.
	probe := probeAddr(cfg.Addr)
	backoff := 5 * time.Millisecond
	var last error
	for {
		err := hellorun.ProbeVia(sctx, cfg.Dial, "tcp", probe, false)
		if err == nil {
			return s, nil
		}
		if last == nil || sctx.Err() == nil {
			last = err
		}
		select {
		case <-child.Done():
			if ctx.Err() != nil {
				return fail("%w; last request: %w", ctx.Err(), last)
			}
			return fail("it exited (%s); last request: %w", exitStatus(child), last)
		case <-sctx.Done():
			return fail("%w; last request: %w", sctx.Err(), last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// checkAddr accepts IP:PORT with a port chosen by the caller: the
// readiness request must know where to go.
func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if net.ParseIP(host) == nil {
		return fmt.Errorf("address %q: want an IP address, not a name", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("address %q: want a port from 1 to 65535", addr)
	}
	return nil
}

// probeAddr is where the readiness request goes: addr, or loopback at
// its port when the target listens on every address (0.0.0.0 inside a
// namespace of the run's own).
func probeAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() == nil {
			return net.JoinHostPort("::1", port)
		}
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}

func exitStatus(p *proc.Proc) string {
	if err := p.Wait(); err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		return first
	}
	return "exit status 0"
}

// Pid is the target's process id.
func (s *Server) Pid() int { return s.p.Pid() }

// Done is closed once the target has exited.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// Exited reports whether the target has exited.
func (s *Server) Exited() bool { return s.p.Exited() }

// Tail returns the last lines the target wrote to stderr.
func (s *Server) Tail() string { return s.p.Tail() }

// Wait waits for the target to exit; the error carries its stderr tail.
func (s *Server) Wait() error { return s.p.Wait() }

// Stop sends SIGTERM, waits for the target to exit (killing it after its
// grace period) and returns nil for a clean exit: status 0, death by
// SIGTERM, or for Java and command targets 143 (128+SIGTERM, the JVM's
// after its shutdown hooks, a shell's). A command target gets the signal
// in its whole process group, and a socket file it left with nobody
// listening is removed. Calling Stop again returns the same result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		rt := s.Program.Target.Runtime
		err := s.p.Stop(syscall.SIGTERM, s.grace)
		var ee *exec.ExitError
		if (rt == Java || rt == Cmd) && errors.As(err, &ee) && ee.ExitCode() == 128+int(syscall.SIGTERM) {
			err = nil
		}
		if err != nil {
			s.stopErr = fmt.Errorf("stopping %s: %w", s.Program.Target.Name, err)
		}
		if rt == Cmd && s.Unix != "" {
			if live, _ := unixsock.Live(s.Unix); !live {
				_ = unixsock.Remove(s.Unix)
			}
		}
	})
	return s.stopErr
}

// Name is the target's name (a command target's is its whole spec).
func (s *Server) Name() string { return s.Program.Target.Name }

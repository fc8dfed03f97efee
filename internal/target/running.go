package target

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/topology"
)

// RunningPrefix starts a -targets name that is a service already running,
// which the sweep measures without starting or stopping it:
// "listen:127.0.0.1:8080" or "listen:unix:/run/api.sock".
const RunningPrefix = "listen:"

// Running is the runtime of a running target: none of the sweep's.
const Running Runtime = "listen"

// IsRunning reports whether a -targets name is a running target.
func IsRunning(name string) bool { return strings.HasPrefix(name, RunningPrefix) }

// IsOwn reports whether a target's answers are its own (a command or a
// running target): parity holds it to its standalone answer, not to
// cmd/hello's bytes.
func IsOwn(name string) bool { return IsCommand(name) || IsRunning(name) }

// ParseRunning turns "listen:IP:PORT" or "listen:unix:PATH" into a Target
// of Runtime Running. The load goes only to loopback: the IP must be in
// 127.0.0.0/8, and a unix socket's path must be absolute.
func ParseRunning(spec string) (Target, error) {
	where, ok := strings.CutPrefix(spec, RunningPrefix)
	if !ok {
		return Target{}, fmt.Errorf("target %q: a running target starts with %q", spec, RunningPrefix)
	}
	t := Target{Name: spec, Runtime: Running}
	if path, ok := strings.CutPrefix(where, "unix:"); ok {
		if !filepath.IsAbs(path) || filepath.Clean(path) != path {
			return Target{}, fmt.Errorf("target %q: want an absolute, clean socket path (listen:unix:/run/api.sock)", spec)
		}
		t.listen = endpoint{"unix", path}
		t.Model = "your running service on unix socket " + path
		return t, nil
	}
	ap, err := netip.ParseAddrPort(where)
	if err != nil || ap.Port() == 0 {
		return Target{}, fmt.Errorf("target %q: want listen:IP:PORT with a loopback IP (listen:127.0.0.1:8080) or listen:unix:PATH", spec)
	}
	if !ap.Addr().Is4() || !ap.Addr().IsLoopback() {
		return Target{}, fmt.Errorf("target %q: %s is not in 127.0.0.0/8; the load goes only to loopback or a unix socket", spec, ap.Addr())
	}
	t.listen = endpoint{"tcp", ap.String()}
	t.Model = "your running service at " + ap.String()
	return t, nil
}

// runningSlug is a running target's file name, as results.TargetFile
// has it: "listen-IP-PORT", "listen-unix-NAME".
func (t Target) runningSlug() string {
	if t.listen.network == "unix" {
		return "listen-unix-" + strings.Trim(unsafeName.ReplaceAllString(filepath.Base(t.listen.addr), "_"), "._")
	}
	return "listen-" + unsafeName.ReplaceAllString(strings.ReplaceAll(t.listen.addr, ":", "-"), "_")
}

// LayoutFor is l with the backend address of target name: a running
// target's own address (TCP, or its unix socket) where standalone's load
// and nginx's upstream go; l itself for any other target.
func LayoutFor(l topology.Layout, name string) topology.Layout {
	if !IsRunning(name) {
		return l
	}
	t, err := ParseRunning(name)
	if err != nil {
		return l
	}
	if t.listen.network == "unix" {
		l.HTTPUnix = t.listen.addr
	} else {
		l.HTTP = t.listen.addr
	}
	return l
}

// Service is a running target as a block's server: found where it
// listens, never started nor stopped by the sweep.
type Service struct {
	Program *Program
	// Addr is where it listens: IP:PORT, or the socket's path.
	Addr string
	net  string
	pid  int
	// start identifies pid against reuse; why says why no pid was found.
	start uint64
	why   string
}

// procfs is where a running service's process is looked for.
const procfs = procstat.FS("/proc")

// Attach checks that a running target answers: an HTTP GET of cfg.Path
// ("/" if empty) gets an answer below 500 within CommandStartTimeout (or
// ctx's deadline). Then it looks for the process that holds the listening
// socket, whose CPU time is the server's; one that cannot be found
// (another user's without privilege, a container's pid namespace) leaves
// Pid 0 and says why in Describe. It starts nothing.
func (p *Program) Attach(ctx context.Context, cfg Config) (*Service, error) {
	t := p.Target
	if t.Runtime != Running {
		return nil, fmt.Errorf("target %s is not a running service", t.Name)
	}
	s := &Service{Program: p, Addr: t.listen.addr, net: t.listen.network}
	path := cfg.Path
	if path == "" {
		path = "/"
	}
	sctx, cancel := context.WithTimeout(ctx, CommandStartTimeout)
	defer cancel()
	backoff := 5 * time.Millisecond
	for {
		status, err := ProbeHTTP(sctx, nil, s.net, s.Addr, path, cfg.Header)
		if err == nil && status >= 500 {
			err = fmt.Errorf("status %d", status)
		}
		if err == nil {
			break
		}
		select {
		case <-sctx.Done():
			return nil, fmt.Errorf("checking %s: no answer to GET %s on %s: %w", t.Name, path, t.listen, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
	pid, err := procfs.ListenerPid(s.net, s.Addr)
	if err == nil {
		var pr procstat.Process
		if pr, err = procfs.Process(pid); err == nil {
			s.pid, s.start = pid, pr.Start
		}
	}
	if err != nil {
		s.why = err.Error()
	}
	return s, nil
}

// Name is the target's name.
func (s *Service) Name() string { return s.Program.Target.Name }

// Pid is the process that holds its listening socket; 0 when none was
// found.
func (s *Service) Pid() int { return s.pid }

// Owned is false: the stack puts no process of it in its control groups.
func (s *Service) Owned() bool { return false }

// Exited reports whether its process has gone (or, with none found, it
// no longer accepts connections).
func (s *Service) Exited() bool {
	if s.pid > 0 {
		p, err := procfs.Process(s.pid)
		return err != nil || p.Start != s.start
	}
	c, err := net.DialTimeout(s.net, s.Addr, 2*time.Second)
	if err != nil {
		return true
	}
	c.Close()
	return false
}

// Tail says what Exited found: the service is not the sweep's, so it
// has no stderr here.
func (s *Service) Tail() string {
	return fmt.Sprintf("the running service on %s is gone (it is not the sweep's to restart)", s.Program.Target.listen)
}

// Stop stops nothing: the service is the user's.
func (s *Service) Stop() error { return nil }

// ErrNoProcess is CPU's error when no process was found for the service.
var ErrNoProcess = errors.New("no process found for the running service")

// CPU is the CPU time so far of the process that listens and its
// descendants.
func (s *Service) CPU(context.Context) (procstat.Times, error) {
	if s.pid == 0 {
		return procstat.Times{}, ErrNoProcess
	}
	tr, err := procfs.Tree(s.pid)
	if err != nil {
		return procstat.Times{}, fmt.Errorf("%s: %w", s.Name(), err)
	}
	return tr.CPU(), nil
}

// Describe is what the block's progress line says of it: running, and
// where its CPU time comes from.
func (s *Service) Describe() string {
	if s.pid == 0 {
		return fmt.Sprintf("%s (running; its CPU not read: %s)", s.Name(), s.why)
	}
	return fmt.Sprintf("%s (running, pid %d, CPU from /proc/%d and its children)", s.Name(), s.pid, s.pid)
}

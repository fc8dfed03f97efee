// Package supervise runs one program on behalf of a harness in another
// container. In the compose setup (compose/) cmd/hello and nginx live in
// their own containers, where the harness cannot start them itself; a
// supervisor (cmd/procd) owns the program there, starts it when the
// container starts, and restarts it when the harness asks — with a new
// GOMAXPROCS for cmd/hello, with a freshly rendered configuration for nginx —
// answering only once the program serves real requests again, as the
// harness's own readiness checks do on the host.
//
// The containers of one run share a network namespace, so the supervisor
// listens on loopback and nothing outside the run can reach it.
package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
)

// Config is the program a Supervisor owns.
type Config struct {
	// Program is the absolute path of the program.
	Program string
	// Args are its arguments, the same on every start.
	Args []string
	// Prepare, if set, is run to completion before every start (program
	// first, then its arguments); if it fails, the start fails. nginx uses it
	// to render its configuration, as the harness does before each start on
	// the host.
	Prepare []string
	// VersionArgs, if set, make Program print its version (nginx: -v); the
	// first line it prints becomes Status.Version, so the harness can record
	// the version of a program it cannot run itself.
	VersionArgs []string
	// Env names the variables a restart may set (e.g. GOMAXPROCS); any other
	// is refused.
	Env []string
	// Ready are the targets that must answer before the program counts as
	// started: "http://HOST:PORT/PATH" (any HTTP response), "tcp:HOST:PORT"
	// or "unix:PATH" (a connection is accepted).
	Ready []string
	// ReadyTimeout bounds the wait for Ready (10s if zero); Prepare gets as
	// long again.
	ReadyTimeout time.Duration
	// StopSignal asks the program to finish (SIGTERM if zero); after Grace
	// (5s if zero) its whole process group is killed.
	StopSignal syscall.Signal
	Grace      time.Duration
	// Stdout and Stderr receive copies of the program's output; the tail of
	// its stderr is always kept for error messages.
	Stdout, Stderr io.Writer
	// Proc is where /proc is read for GET /cpu ("/proc" if empty).
	Proc procstat.FS
	// AllowHosts are addresses besides loopback that a request's Host may
	// name (see Handler): the node's own address when the harness runs
	// on another machine of a cluster. Empty: loopback only.
	AllowHosts []netip.Addr
}

// Status is what the supervisor knows about its program.
type Status struct {
	// Running: the program has been started and has not exited.
	Running bool `json:"running"`
	// Ready: it answered every Ready target after its last start.
	Ready bool `json:"ready"`
	Pid   int  `json:"pid,omitempty"`
	// Env is what the last start set (e.g. ["GOMAXPROCS=8"]).
	Env []string `json:"env,omitempty"`
	// Version is the first line Program printed for Config.VersionArgs.
	Version string `json:"version,omitempty"`
	// Starts counts successful starts.
	Starts int `json:"starts"`
	// Error is why the last start failed or why the program exited on its
	// own, with the tail of its stderr.
	Error string `json:"error,omitempty"`
}

// Supervisor owns one program: at most one copy runs at a time.
type Supervisor struct {
	cfg Config

	// mu serializes Start and Stop.
	mu  sync.Mutex
	cur *child

	smu sync.Mutex
	st  Status
}

type child struct {
	cmd      *exec.Cmd
	tail     *proc.Tail
	done     chan struct{}
	err      error
	stopping bool // set under Supervisor.smu before a deliberate stop
}

// New checks cfg and returns a supervisor with nothing running yet.
func New(cfg Config) (*Supervisor, error) {
	if !filepath.IsAbs(cfg.Program) {
		return nil, fmt.Errorf("program %q: want an absolute path", cfg.Program)
	}
	if err := executable(cfg.Program); err != nil {
		return nil, err
	}
	if len(cfg.Prepare) > 0 {
		if !filepath.IsAbs(cfg.Prepare[0]) {
			return nil, fmt.Errorf("prepare program %q: want an absolute path", cfg.Prepare[0])
		}
		if err := executable(cfg.Prepare[0]); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
	}
	for _, t := range cfg.Ready {
		if _, _, err := parseTarget(t); err != nil {
			return nil, err
		}
	}
	for _, name := range cfg.Env {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			return nil, fmt.Errorf("env name %q is not a variable name", name)
		}
		// A start without env passes the supervisor's own value on.
		if v, ok := os.LookupEnv(name); ok {
			if err := checkValue(name, v); err != nil {
				return nil, fmt.Errorf("environment %s=%s: %w", name, v, err)
			}
		}
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	if cfg.StopSignal == 0 {
		cfg.StopSignal = syscall.SIGTERM
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	return &Supervisor{cfg: cfg}, nil
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("program %s: %w", path, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("program %s: not an executable file", path)
	}
	return nil
}

// Name is the program's base name, for messages.
func (s *Supervisor) Name() string { return filepath.Base(s.cfg.Program) }

// Status returns a snapshot of the program's state.
func (s *Supervisor) Status() Status {
	s.smu.Lock()
	defer s.smu.Unlock()
	st := s.st
	st.Env = slices.Clone(st.Env)
	return st
}

// Start stops the running copy, if any, then runs Prepare, starts the
// program with env (NAME=VALUE pairs, names from Config.Env) added to the
// supervisor's environment, and waits until every Ready target answers. A
// program that fails to get ready is stopped again; the error carries the
// tail of its stderr.
func (s *Supervisor) Start(ctx context.Context, env []string) (Status, error) {
	if err := s.checkEnv(env); err != nil {
		return s.Status(), err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.stopLocked(); err != nil {
		// The old copy is gone either way (killed); the new one may start.
		fmt.Fprintf(stderrOr(s.cfg.Stderr), "procd: %v\n", err)
	}
	err := s.startLocked(ctx, env)
	s.smu.Lock()
	if err != nil {
		s.st.Error = err.Error()
	} else {
		s.st.Error = ""
	}
	s.smu.Unlock()
	return s.Status(), err
}

func stderrOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (s *Supervisor) checkEnv(env []string) error {
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("env %q: want NAME=VALUE", kv)
		}
		if !slices.Contains(s.cfg.Env, name) {
			allowed := "none"
			if len(s.cfg.Env) > 0 {
				allowed = strings.Join(s.cfg.Env, ", ")
			}
			return fmt.Errorf("env %s: %s may not be set for %s (allowed: %s)", kv, name, s.Name(), allowed)
		}
		if err := checkValue(name, value); err != nil {
			return fmt.Errorf("env %s: %w", kv, err)
		}
	}
	return nil
}

// ValueError is a variable's value the program would not honour.
type ValueError struct {
	Name, Value string
	Want        string // what the value must be, e.g. "a positive integer"
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s must be %s, not %q", e.Name, e.Want, e.Value)
}

// checkValue refuses values a program would silently ignore: the Go runtime
// falls back to one P per CPU for a GOMAXPROCS that is not a positive
// integer, so a typo would measure a configuration nobody asked for.
func checkValue(name, value string) error {
	switch name {
	case "GOMAXPROCS":
		n, err := strconv.ParseInt(value, 10, 32)
		if err != nil || n < 1 || strings.TrimLeft(value, "0123456789") != "" {
			return &ValueError{Name: name, Value: value, Want: "a positive integer"}
		}
	}
	return nil
}

func (s *Supervisor) startLocked(ctx context.Context, env []string) error {
	if len(s.cfg.VersionArgs) > 0 && s.Status().Version == "" {
		v, err := s.version(ctx)
		if err != nil {
			return err
		}
		s.smu.Lock()
		s.st.Version = v
		s.smu.Unlock()
	}
	if len(s.cfg.Prepare) > 0 {
		if err := s.prepare(ctx); err != nil {
			return err
		}
	}
	tail := proc.NewTail(8 << 10)
	cmd := exec.Command(s.cfg.Program, s.cfg.Args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout = s.cfg.Stdout
	cmd.Stderr = tail
	if s.cfg.Stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, s.cfg.Stderr)
	}
	// Its own process group, so a kill reaches the workers a program like
	// nginx forks; the stop signal as death signal takes them down if the
	// supervisor dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: s.cfg.StopSignal}
	// Output pipes inherited by workers must not hold Wait up for long.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", s.cfg.Program, err)
	}
	c := &child{cmd: cmd, tail: tail, done: make(chan struct{})}
	s.cur = c
	s.smu.Lock()
	s.st = Status{Running: true, Pid: cmd.Process.Pid, Env: slices.Clone(env), Starts: s.st.Starts, Version: s.st.Version}
	s.smu.Unlock()
	go s.wait(c)

	if err := s.waitReady(ctx, c); err != nil {
		stopErr := s.stopLocked()
		err = fmt.Errorf("%s (pid %d) not ready: %w%s", s.Name(), cmd.Process.Pid, err, tailSuffix(c.tail))
		if stopErr != nil {
			err = fmt.Errorf("%w; stopping it: %v", err, stopErr)
		}
		return err
	}
	s.smu.Lock()
	s.st.Ready = true
	s.st.Starts++
	s.smu.Unlock()
	return nil
}

// wait reaps the child and records an exit nobody asked for.
func (s *Supervisor) wait(c *child) {
	err := c.cmd.Wait()
	// Workers left behind by a master that died go with it.
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	s.smu.Lock()
	c.err = err
	if !c.stopping {
		msg := "exited"
		if err != nil {
			msg = "exited: " + err.Error()
		}
		s.st.Error = fmt.Sprintf("%s (pid %d) %s%s", s.Name(), c.cmd.Process.Pid, msg, tailSuffix(c.tail))
	}
	s.st.Running, s.st.Ready = false, false
	s.smu.Unlock()
	close(c.done)
}

func (s *Supervisor) prepare(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ReadyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.cfg.Prepare[0], s.cfg.Prepare[1:]...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if s.cfg.Stdout != nil && len(out) > 0 {
		_, _ = s.cfg.Stdout.Write(out)
	}
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg != "" {
			msg = "\n" + proc.Indent(proc.LastLines(msg, 10), "    ")
		}
		return fmt.Errorf("prepare %s: %w%s", strings.Join(s.cfg.Prepare, " "), err, msg)
	}
	return nil
}

func (s *Supervisor) version(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.cfg.Program, s.cfg.VersionArgs...)
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", s.cfg.Program, strings.Join(s.cfg.VersionArgs, " "), err, strings.TrimSpace(string(out)))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line, nil
		}
	}
	return "", fmt.Errorf("%s %s printed nothing", s.cfg.Program, strings.Join(s.cfg.VersionArgs, " "))
}

// Stop asks the program to finish with the stop signal and kills its
// process group after the grace period. It returns an error only when the
// program had to be killed.
func (s *Supervisor) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopLocked()
}

func (s *Supervisor) stopLocked() error {
	c := s.cur
	if c == nil {
		return nil
	}
	s.cur = nil
	s.smu.Lock()
	c.stopping = true
	s.smu.Unlock()
	select {
	case <-c.done:
		return nil
	default:
	}
	pid := c.cmd.Process.Pid
	_ = c.cmd.Process.Signal(s.cfg.StopSignal)
	t := time.NewTimer(s.cfg.Grace)
	defer t.Stop()
	select {
	case <-c.done:
		return nil
	case <-t.C:
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-c.done
	return fmt.Errorf("%s (pid %d) did not exit within %s of %s; killed", s.Name(), pid, s.cfg.Grace, s.cfg.StopSignal)
}

// waitReady polls every Ready target until all answer, the program exits,
// ctx ends or ReadyTimeout passes.
func (s *Supervisor) waitReady(ctx context.Context, c *child) error {
	deadline := time.Now().Add(s.cfg.ReadyTimeout)
	pending := slices.Clone(s.cfg.Ready)
	delay := 5 * time.Millisecond
	var lastErr error
	for {
		for len(pending) > 0 {
			if lastErr = probe(ctx, pending[0], deadline); lastErr != nil {
				break
			}
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-c.done:
			s.smu.Lock()
			err := c.err
			s.smu.Unlock()
			if err == nil {
				return errors.New("exited before it was ready")
			}
			return fmt.Errorf("exited before it was ready: %w", err)
		default:
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("%s not answering after %s: %w", pending[0], s.cfg.ReadyTimeout, lastErr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// parseTarget splits a Ready target into a network and an address ("http"
// keeps the whole URL).
func parseTarget(t string) (network, addr string, err error) {
	switch {
	case strings.HasPrefix(t, "http://"):
		host := strings.TrimPrefix(t, "http://")
		if i := strings.IndexByte(host, '/'); i >= 0 {
			host = host[:i]
		}
		if _, _, err := net.SplitHostPort(host); err != nil {
			return "", "", fmt.Errorf("ready target %q: %w", t, err)
		}
		return "http", t, nil
	case strings.HasPrefix(t, "tcp:"):
		addr := strings.TrimPrefix(t, "tcp:")
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", "", fmt.Errorf("ready target %q: %w", t, err)
		}
		return "tcp", addr, nil
	case strings.HasPrefix(t, "unix:"):
		path := strings.TrimPrefix(t, "unix:")
		if !filepath.IsAbs(path) {
			return "", "", fmt.Errorf("ready target %q: want an absolute socket path", t)
		}
		return "unix", path, nil
	}
	return "", "", fmt.Errorf("ready target %q: want http://HOST:PORT/PATH, tcp:HOST:PORT or unix:PATH", t)
}

// probe makes one attempt at a target: a real HTTP request for http
// targets, a connection for the others.
func probe(ctx context.Context, target string, deadline time.Time) error {
	network, addr, err := parseTarget(target)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if network != "http" {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return err
	}
	req.Close = true
	// A fresh transport: no connection is kept between probes.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return resp.Body.Close()
}

func tailSuffix(t *proc.Tail) string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	return "\n" + proc.Indent(proc.LastLines(s, 10), "    ")
}

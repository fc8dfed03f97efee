// Package nginx runs a private nginx in front of cmd/hello: it renders the
// configuration (internal/nginxconf) into a run directory, checks it with
// "nginx -t", starts nginx in the foreground as a child process, waits until
// every vhost answers a real HTTP request, and stops it gracefully. It never
// touches the system nginx, its configuration or logs, and needs neither root
// nor port 80.
package nginx

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/proc"
)

// fallbackPath is where distributions install nginx outside most users' PATH.
const fallbackPath = "/usr/sbin/nginx"

// Find returns the nginx binary: the first in PATH, then /usr/sbin/nginx.
func Find() (string, error) {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if fi, err := os.Stat(fallbackPath); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return fallbackPath, nil
	}
	return "", errors.New("nginx not found in PATH or at " + fallbackPath + " (install it: .ci/install-tools)")
}

var versionRE = regexp.MustCompile(`nginx/(\d+)\.(\d+)\.(\d+)`)

// Version is an nginx release.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

func (v Version) atLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// ParseVersion reads the output of "nginx -v".
func ParseVersion(out string) (Version, error) {
	m := versionRE.FindStringSubmatch(out)
	if m == nil {
		return Version{}, fmt.Errorf("no nginx version in %q", strings.TrimSpace(out))
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	v.Patch, _ = strconv.Atoi(m[3])
	return v, nil
}

// GetVersion runs "bin -v".
func GetVersion(ctx context.Context, bin string) (Version, error) {
	if _, err := exec.LookPath(bin); err != nil {
		return Version{}, fmt.Errorf("nginx binary: %w", err)
	}
	out, err := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	if err != nil {
		return Version{}, fmt.Errorf("%s -v: %w%s", bin, err, indented(string(out)))
	}
	return ParseVersion(string(out))
}

// args are the flags that point nginx at the run directory only. Since
// 1.19.5, -e moves the log nginx writes before it has read its config into
// the run directory too (older builds write there only on early failures).
func args(v Version, dir string, extra ...string) []string {
	a := []string{"-p", dir, "-c", filepath.Join(dir, "nginx.conf")}
	if v.atLeast(1, 19, 5) {
		a = append(a, "-e", filepath.Join(dir, "error.log"))
	}
	return append(a, extra...)
}

// Test runs "nginx -t" on the configuration rendered into dir and returns
// nginx's own complaint when it fails.
func Test(ctx context.Context, bin, dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	v, err := GetVersion(ctx, bin)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, args(v, dir, "-q", "-t")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = LogTail(dir, 5)
		}
		return fmt.Errorf("nginx -t rejected %s: %w\n%s", filepath.Join(dir, "nginx.conf"), err, proc.Indent(proc.LastLines(msg, 10), "    "))
	}
	return nil
}

// Config says how to run nginx.
type Config struct {
	// Bin is the nginx binary; Find() if empty.
	Bin string
	// Dir is the run directory: the configuration is rendered into it, and
	// nginx keeps its pid file, error log and temp files there.
	Dir string
	// Params is what to render. Prefix is set to Dir; a zero
	// WorkerRlimitNofile or User is filled in as by DefaultParams.
	Params nginxconf.Params
	// CPUs, when set, pins nginx to a CPU list (e.g. "1" or "0-1"); NetNS
	// runs it in that network namespace (see proc.Options).
	CPUs, NetNS string
	// Dial makes the readiness probes' connections to 127.0.0.1; it must
	// reach inside NetNS when that is set (netns.Dialer). Nil dials from
	// the harness.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Stderr receives a copy of nginx's standard error, if set.
	Stderr io.Writer
	// ReadyTimeout bounds the wait for every vhost to answer (10s if zero).
	ReadyTimeout time.Duration
	// Grace is how long a graceful stop (SIGQUIT) may take before nginx is
	// shut down fast and then killed (5s if zero).
	Grace time.Duration
}

// Server is a running nginx.
type Server struct {
	p     *proc.Proc
	dir   string
	ports map[string]int
	grace time.Duration
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{}
}

// Start renders cfg.Params into cfg.Dir, checks it with nginx -t, starts
// nginx and waits until every vhost answers an HTTP request. Cancelling ctx
// stops nginx as Stop does.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	dir, err := withDefaults(&cfg)
	if err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	v, err := GetVersion(ctx, cfg.Bin)
	if err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	ports, err := configure(ctx, cfg, dir)
	if err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	name, argv := cfg.Bin, args(v, dir, "-g", "daemon off;")
	// ctx is handled below rather than by proc: killing only the master
	// would orphan its workers, which hold the listening sockets.
	p, err := proc.Start(context.WithoutCancel(ctx), name, argv, proc.Options{
		Stop:   syscall.SIGQUIT,
		CPUs:   cfg.CPUs,
		NetNS:  cfg.NetNS,
		Grace:  cfg.Grace + 10*time.Second, // Stop escalates well before this
		Stderr: cfg.Stderr,
		Dir:    dir,
		// If the harness dies, a fast shutdown (SIGTERM) takes the workers
		// down with the master; SIGKILL would leave them running.
		DeathSignal: syscall.SIGTERM,
	})
	if err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	s := &Server{p: p, dir: dir, ports: ports, grace: cfg.Grace, dial: cfg.Dial, stopped: make(chan struct{})}
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Stop()
		case <-s.stopped:
		}
	}()
	if err := s.waitReady(ctx, cfg.ReadyTimeout); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("starting nginx: %w%s", err, s.failureDetail())
	}
	return s, nil
}

// withDefaults fills in cfg's binary, timeouts and dialer where unset,
// and returns its run directory made absolute.
func withDefaults(cfg *Config) (string, error) {
	if cfg.Dir == "" {
		return "", errors.New("no run directory")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return "", err
	}
	if cfg.Bin == "" {
		if cfg.Bin, err = Find(); err != nil {
			return "", err
		}
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	if cfg.Grace == 0 {
		cfg.Grace = 5 * time.Second
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	return dir, nil
}

// configure renders the configuration into dir, checks it with nginx -t,
// and returns the port of each vhost, each checked free unless nginx runs
// in a namespace of its own.
func configure(ctx context.Context, cfg Config, dir string) (map[string]int, error) {
	params := cfg.Params
	params.Prefix = dir
	if params.Vhosts == nil {
		params.Vhosts = nginxconf.AllVhosts()
	}
	// What DefaultParams would fill in: without it nginx either cannot
	// start (no rlimit) or, under root, its workers lose access to the run
	// directory.
	if params.WorkerRlimitNofile == 0 || params.User == "" {
		def, err := nginxconf.DefaultParams(params.Layout)
		if err != nil {
			return nil, err
		}
		if params.WorkerRlimitNofile == 0 {
			params.WorkerRlimitNofile = def.WorkerRlimitNofile
		}
		if params.User == "" {
			params.User = def.User
		}
	}
	if err := nginxconf.Render(dir, params); err != nil {
		return nil, err
	}
	if err := Test(ctx, cfg.Bin, dir); err != nil {
		return nil, err
	}
	ports := map[string]int{}
	for _, vh := range params.Vhosts {
		ports[vh] = params.Layout.NginxPorts[vh]
	}
	// nginx retries a taken port for seconds before giving up, and the
	// readiness probe could reach whoever holds it; say so at once instead.
	// A namespace of the run's own has nothing else listening.
	if cfg.NetNS == "" {
		if err := checkPortsFree(ports); err != nil {
			return nil, err
		}
	}
	return ports, nil
}

// Pid is the nginx master's process id.
func (s *Server) Pid() int { return s.p.Pid() }

// Dir is the run directory.
func (s *Server) Dir() string { return s.dir }

// Workers returns the process ids of the master's children (the workers
// and, briefly after start, the cache helpers).
func (s *Server) Workers() []int { return children(s.p.Pid()) }

// Done is closed once the master has exited.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// Stop asks nginx to finish gracefully (SIGQUIT: close listeners, finish
// requests in flight), then shuts it down fast (SIGTERM) and finally kills
// the master and its workers if it takes longer than the grace period. It is
// safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.stop()
		close(s.stopped)
	})
	return s.stopErr
}

func (s *Server) stop() error {
	if s.p.Exited() {
		// It stopped on its own: that is a failure worth reporting.
		if err := s.p.Wait(); err != nil {
			return fmt.Errorf("nginx exited early: %w%s", err, s.logSuffix())
		}
		return fmt.Errorf("nginx exited early%s", s.logSuffix())
	}
	workers := children(s.p.Pid())
	_ = s.p.Signal(syscall.SIGQUIT)
	if s.waitExit(s.grace) {
		return s.reap(workers, nil)
	}
	_ = s.p.Signal(syscall.SIGTERM)
	if s.waitExit(2 * time.Second) {
		return s.reap(workers, fmt.Errorf("nginx did not finish within %s of SIGQUIT; shut down with SIGTERM", s.grace))
	}
	workers = append(workers, children(s.p.Pid())...)
	for _, pid := range workers {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = s.p.Signal(syscall.SIGKILL)
	<-s.p.Done()
	return s.reap(workers, fmt.Errorf("nginx ignored SIGQUIT and SIGTERM; killed%s", s.logSuffix()))
}

func (s *Server) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.p.Done():
		return true
	case <-t.C:
		return false
	}
}

// reap makes sure no worker outlived the master (a master that exits
// normally has already waited for them).
func (s *Server) reap(workers []int, err error) error {
	for _, pid := range workers {
		if isNginx(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if err == nil {
		if werr := s.p.Wait(); werr != nil {
			err = fmt.Errorf("stopping nginx: %w", werr)
		}
	}
	return err
}

// waitReady polls every vhost with a real request until each answers with
// an HTTP status line or the deadline passes.
func (s *Server) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	pending := make([]string, 0, len(s.ports))
	for vh := range s.ports {
		pending = append(pending, vh)
	}
	sort.Strings(pending)
	delay := 5 * time.Millisecond
	var lastErr error
	for {
		for len(pending) > 0 {
			attempt := time.Now().Add(2 * time.Second)
			if attempt.After(deadline) {
				attempt = deadline
			}
			if lastErr = s.probe(ctx, s.ports[pending[0]], attempt); lastErr != nil {
				break
			}
			pending = pending[1:]
		}
		if len(pending) == 0 {
			return nil
		}
		if s.p.Exited() {
			return errors.New("nginx exited before it was ready")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("vhost %s (127.0.0.1:%d) not answering after %s: %w", pending[0], s.ports[pending[0]], timeout, lastErr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.p.Done():
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// probe sends one HEAD request and reads the status line. A TLS vhost
// answers this plain request too, with a 400 status line (plain HTTP sent
// to an HTTPS port), which is all the probe needs: the vhost listens.
func (s *Server) probe(ctx context.Context, port int, deadline time.Time) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	c, err := s.dial(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(deadline)
	if _, err := io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading status line: %w", err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 ") {
		return fmt.Errorf("not an HTTP response: %q", line)
	}
	return nil
}

func checkPortsFree(ports map[string]int) error {
	vhs := make([]string, 0, len(ports))
	for vh := range ports {
		vhs = append(vhs, vh)
	}
	sort.Strings(vhs)
	for _, vh := range vhs {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[vh]))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("port %d for vhost %s is not free: %w", ports[vh], vh, err)
		}
		ln.Close()
	}
	return nil
}

// failureDetail is nginx's stderr tail, or its error log when stderr was
// quiet.
func (s *Server) failureDetail() string {
	if t := strings.TrimSpace(s.p.Tail()); t != "" {
		return "\n" + proc.Indent(proc.LastLines(t, 10), "    ")
	}
	return s.logSuffix()
}

func (s *Server) logSuffix() string {
	t := LogTail(s.dir, 10)
	if t == "" {
		return ""
	}
	return "\n" + proc.Indent(t, "    ")
}

// LogTail returns the last n lines of the error log in run directory dir.
func LogTail(dir string, n int) string {
	b, err := os.ReadFile(filepath.Join(dir, "error.log"))
	if err != nil {
		return ""
	}
	return proc.LastLines(strings.TrimSpace(string(b)), n)
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := stat(cpid); ok && ppid == pid {
			out = append(out, cpid)
		}
	}
	return out
}

// stat reads a process's parent and state from /proc/PID/stat.
func stat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid ...; comm may hold spaces and parentheses.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0][0], err == nil
}

// Alive reports whether pid is a live process (zombies count as gone).
func Alive(pid int) bool {
	_, state, ok := stat(pid)
	return ok && state != 'Z'
}

// isNginx guards against signalling a reused pid.
func isNginx(pid int) bool {
	if !Alive(pid) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return err == nil && strings.HasPrefix(string(b), "nginx")
}

func indented(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "\n" + proc.Indent(proc.LastLines(s, 10), "    ")
}

// Reload has the master start new workers and retire the old ones
// gracefully (SIGHUP), and returns once every old worker has exited and
// every vhost answers again. A retiring worker closes its idle kept-alive
// connections, its upstream pools among them, so Reload is how a sweep
// frees the pool a topology left behind: a worker's open files are
// limited, and idle pools sized to the clients of several topologies do
// not fit in one worker together. The old workers' file descriptors are
// theirs, not the new workers'.
func (s *Server) Reload(ctx context.Context, timeout time.Duration) error {
	old := children(s.p.Pid())
	if err := s.p.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("reloading nginx: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		left := slices.DeleteFunc(slices.Clone(old), func(pid int) bool { return !isNginx(pid) })
		if len(left) == 0 {
			break
		}
		if s.p.Exited() {
			return fmt.Errorf("reloading nginx: nginx exited%s", s.logSuffix())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reloading nginx: %d old workers still running after %s%s", len(left), timeout, s.logSuffix())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
	if err := s.waitReady(ctx, max(time.Until(deadline), time.Second)); err != nil {
		return fmt.Errorf("reloading nginx: %w%s", err, s.failureDetail())
	}
	return nil
}

// Package hellorun builds cmd/hello and runs it as a child process for the
// harness and for tests: Start opens exactly the listeners the chosen
// topologies need, waits for the "hello: ready" line and then for a real
// request to succeed on every listener (over TLS on the HTTPS one, which
// takes the run's certificate, Config.TLS); Stop sends SIGTERM, waits, and checks
// that no unix socket was left behind. ParseReady reads the ready line,
// which carries hello's calibration of ?work= (Server.Ready,
// Server.WorkCalibration), for the run's env.json.
package hellorun

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/fcgiclient"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/internal/unixsock"
)

// ReadyLine starts the line cmd/hello writes once every listener is served.
const ReadyLine = "hello: ready"

// Ready is what cmd/hello's ready line says:
//
//	hello: ready: 3 listeners, GOMAXPROCS 2, go1.26.8, pid 12345, work 14.79 units/us
type Ready struct {
	Listeners  int
	GOMAXPROCS int
	GoVersion  string
	Pid        int
	// WorkUnitsPerMicrosecond is hello's calibration of ?work=: units of
	// work (internal/hello.Spin) per microsecond of CPU time on this
	// machine; 0 when the line does not say (a hello older than ?work=).
	WorkUnitsPerMicrosecond float64
}

// ParseReady reads cmd/hello's ready line (with or without a trailing
// newline). Fields it does not know are ignored, so a later hello can say
// more; the ones it knows must parse.
func ParseReady(line string) (Ready, error) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), ReadyLine+": ")
	if !ok {
		return Ready{}, fmt.Errorf("not a ready line: %q", line)
	}
	var r Ready
	bad := func(field string) (Ready, error) {
		return Ready{}, fmt.Errorf("ready line %q: bad field %q", line, field)
	}
	for field := range strings.SplitSeq(rest, ", ") {
		f := strings.Fields(field)
		var err error
		switch {
		case len(f) == 2 && f[1] == "listeners":
			r.Listeners, err = strconv.Atoi(f[0])
		case len(f) == 2 && f[0] == "GOMAXPROCS":
			r.GOMAXPROCS, err = strconv.Atoi(f[1])
		case len(f) == 2 && f[0] == "pid":
			r.Pid, err = strconv.Atoi(f[1])
		case len(f) == 3 && f[0] == "work" && f[2] == "units/us":
			r.WorkUnitsPerMicrosecond, err = strconv.ParseFloat(f[1], 64)
			if err == nil && !(r.WorkUnitsPerMicrosecond > 0) {
				return bad(field)
			}
		case len(f) == 1 && strings.HasPrefix(f[0], "go"):
			r.GoVersion = f[0]
		}
		if err != nil {
			return bad(field)
		}
	}
	if r.Listeners == 0 || r.Pid == 0 {
		return Ready{}, fmt.Errorf("ready line %q: no listener count or pid", line)
	}
	return r, nil
}

// DefaultStartTimeout bounds Start when ctx has no earlier deadline.
const DefaultStartTimeout = 10 * time.Second

// Build compiles ./cmd/hello into dir and returns the binary's path. It finds
// the module root with "go env GOMOD" (so it works from any package
// directory, as tests run), falling back to this source file's location.
func Build(ctx context.Context, dir string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building cmd/hello: the go command is needed: %w", err)
	}
	root, err := moduleRoot(ctx, goBin)
	if err != nil {
		return "", fmt.Errorf("building cmd/hello: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("building cmd/hello: %w", err)
	}
	out, err := filepath.Abs(filepath.Join(dir, "hello"))
	if err != nil {
		return "", fmt.Errorf("building cmd/hello: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", out, "./cmd/hello")
	cmd.Dir = root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cmd/hello in %s: %w\n%s", root, err, proc.Indent(strings.TrimSpace(string(msg)), "    "))
	}
	return out, nil
}

const modulePath = "github.com/topobench/topobench"

// ModuleRoot is the directory of topobench's source tree the harness runs
// from (or was built from), for building programs and images from it.
func ModuleRoot(ctx context.Context) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go command is needed: %w", err)
	}
	return moduleRoot(ctx, goBin)
}

func moduleRoot(ctx context.Context, goBin string) (string, error) {
	out, err := exec.CommandContext(ctx, goBin, "env", "GOMOD").Output()
	if err == nil {
		if gomod := strings.TrimSpace(string(out)); isOurModule(gomod) {
			return filepath.Dir(gomod), nil
		}
	}
	// Run from outside the module (e.g. an installed harness): use the
	// source tree this package was compiled from, if it is still there.
	if _, file, _, ok := runtime.Caller(0); ok {
		gomod := filepath.Join(filepath.Dir(file), "..", "..", "go.mod")
		if isOurModule(gomod) {
			return filepath.Dir(filepath.Clean(gomod)), nil
		}
	}
	return "", fmt.Errorf("cannot find the %s module; run from inside its source tree", modulePath)
}

func isOurModule(gomod string) bool {
	if gomod == "" || gomod == os.DevNull {
		return false
	}
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == modulePath
		}
	}
	return false
}

// Config says how to run cmd/hello.
type Config struct {
	// Bin is the path to the hello binary (see Build).
	Bin string
	// Layout holds the addresses.
	Layout topology.Layout
	// Topologies decide which listeners are opened (Layout.HelloArgs).
	Topologies []topology.Topology
	// GOMAXPROCS is passed as -gomaxprocs; 0 keeps the runtime default.
	GOMAXPROCS int
	// Grace is passed as -grace if set; Stop waits this (5s if zero) plus
	// a margin before killing.
	Grace time.Duration
	// Stderr, if set, receives a copy of hello's standard error.
	Stderr io.Writer
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	// CPUs pins hello to a CPU list (e.g. "0" or "0-1"); NetNS runs it in
	// that network namespace (see proc.Options).
	CPUs, NetNS string
	// Dial makes the readiness probes' connections; it must reach inside
	// NetNS when that is set (netns.Dialer). Nil dials from the harness.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the HTTPS listener's certificate and settings, which a
	// topology ending at it (topology.HTTPSTCP) needs.
	TLS *tlscert.Setup
}

// args are hello's command line: the listeners, the HTTPS one's
// certificate, the processors, the grace, and ExtraArgs.
func (cfg Config) args() ([]string, error) {
	tlsArgs, err := cfg.tlsArgs()
	if err != nil {
		return nil, err
	}
	args := append(cfg.Layout.HelloArgs(cfg.Topologies), tlsArgs...)
	args = append(args, "-gomaxprocs="+strconv.Itoa(cfg.GOMAXPROCS))
	if cfg.Grace > 0 {
		args = append(args, "-grace="+cfg.Grace.String())
	}
	return append(args, cfg.ExtraArgs...), nil
}

// tlsArgs are the flags of the HTTPS listener, when a topology ends at it.
func (cfg Config) tlsArgs() ([]string, error) {
	if !slices.ContainsFunc(cfg.Topologies, func(t topology.Topology) bool { return t.Backend == topology.HTTPSTCP }) {
		return nil, nil
	}
	if cfg.TLS == nil {
		return nil, errors.New("the HTTPS listener needs a certificate (Config.TLS)")
	}
	s := cfg.TLS.Settings
	return []string{"-tls-cert=" + cfg.TLS.Cert, "-tls-key=" + cfg.TLS.Key, "-tls-key-type=" + s.Key.String(),
		"-tls-version=" + s.Version.String(), "-tls-resume=" + strconv.FormatBool(s.Resume)}, nil
}

// listener is one cmd/hello listener and how to probe it: over TLS
// when tls is set (the HTTPS listener).
type listener struct {
	backend topology.Backend
	network string
	addr    string
	tls     *tls.Config
}

func (l listener) fastcgi() bool {
	switch l.backend {
	case topology.FCGITCP, topology.FCGIUnix, topology.FastTCP, topology.FastUnix:
		return true
	}
	return false
}

func (l listener) String() string {
	kind := "http"
	if l.fastcgi() {
		kind = "fastcgi"
	}
	return fmt.Sprintf("%s listener %s:%s", kind, l.network, l.addr)
}

func (cfg Config) listeners() ([]listener, error) {
	var ls []listener
	seen := map[topology.Backend]bool{}
	for _, t := range cfg.Topologies {
		network, addr, ok := cfg.Layout.BackendAddr(t)
		if !ok || seen[t.Backend] {
			continue
		}
		seen[t.Backend] = true
		l := listener{backend: t.Backend, network: network, addr: addr}
		if t.Backend == topology.HTTPSTCP && cfg.TLS != nil {
			var err error
			if l.tls, err = tlscert.ClientConfig(cfg.TLS.Cert, cfg.TLS.Settings); err != nil {
				return nil, err
			}
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// Server is a running cmd/hello.
type Server struct {
	p        *proc.Proc
	info     Ready
	infoErr  error
	grace    time.Duration
	socks    []string
	ready    bool // hello said it was ready, so the sockets are its own
	stopOnce sync.Once
	stopErr  error
}

// Start runs hello and returns once it has written its ready line and a
// real request has succeeded on every listener it opened (HTTP GET on HTTP
// listeners, a FastCGI request on FastCGI ones). Startup is bounded by ctx's
// deadline or DefaultStartTimeout, whichever comes first; ctx also bounds
// the child's life: cancelling it stops hello gracefully. On failure the
// child is stopped and the error carries the tail of its stderr.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Bin == "" {
		return nil, errors.New("starting cmd/hello: no binary given")
	}
	ls, err := cfg.listeners()
	if err != nil {
		return nil, fmt.Errorf("starting cmd/hello: %w", err)
	}
	if len(ls) == 0 {
		return nil, errors.New("starting cmd/hello: none of the topologies needs it")
	}
	args, err := cfg.args()
	if err != nil {
		return nil, fmt.Errorf("starting cmd/hello: %w", err)
	}
	grace := cfg.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}

	ready := proc.NewLineWatch(ReadyLine)
	var stderr io.Writer = ready
	if cfg.Stderr != nil {
		stderr = io.MultiWriter(ready, cfg.Stderr)
	}
	p, err := proc.Start(ctx, cfg.Bin, args, proc.Options{
		CPUs:   cfg.CPUs,
		NetNS:  cfg.NetNS,
		Stderr: stderr,
		Grace:  grace + 2*time.Second,
		// If the harness dies, SIGTERM lets hello remove its sockets.
		DeathSignal: syscall.SIGTERM,
	})
	if err != nil {
		return nil, err
	}
	s := &Server{p: p, grace: grace}
	for _, l := range ls {
		if l.network == "unix" {
			s.socks = append(s.socks, l.addr)
		}
	}

	sctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	fail := func(format string, args ...any) (*Server, error) {
		err := fmt.Errorf(format, args...)
		_ = s.Stop()
		tail := strings.TrimSpace(p.Tail())
		if tail != "" {
			err = fmt.Errorf("%w\n%s", err, proc.Indent(proc.LastLines(tail, 10), "    "))
		}
		return nil, err
	}
	select {
	case <-ready.Found():
		s.ready = true
		s.info, s.infoErr = ParseReady(ready.Line())
	case <-p.Done():
		if sctx.Err() != nil {
			// The deadline stopped it (proc cancels with ctx): say what
			// it did not do in time, not how it was stopped.
			return fail("cmd/hello wrote no %q line: %w", ReadyLine, sctx.Err())
		}
		return fail("cmd/hello exited before it was ready: %v", exitStatus(p))
	case <-sctx.Done():
		return fail("cmd/hello wrote no %q line: %w", ReadyLine, sctx.Err())
	}
	for _, l := range ls {
		if err := waitServing(sctx, cfg.Dial, p, l); err != nil {
			return fail("cmd/hello is not serving its %s: %w", l, err)
		}
	}
	return s, nil
}

func exitStatus(p *proc.Proc) string {
	// Wait has returned already; this only formats the status.
	if err := p.Wait(); err != nil {
		if first, _, _ := strings.Cut(err.Error(), "\n"); first != "" {
			return first
		}
	}
	return "exit status 0"
}

// waitServing retries a real request on l until one succeeds, the child
// exits, or ctx ends.
func waitServing(ctx context.Context, dial DialFunc, p *proc.Proc, l listener) error {
	backoff := 5 * time.Millisecond
	var last error // the last failure not caused by the deadline itself
	for {
		err := probe(ctx, dial, l)
		if err == nil {
			return nil
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-p.Done():
			return fmt.Errorf("cmd/hello exited (%s); last request: %w", exitStatus(p), last)
		case <-ctx.Done():
			return fmt.Errorf("%w; last request: %w", ctx.Err(), last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// DialFunc dials like net.Dialer.DialContext.
type DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// Probe sends one GET / to a cmd/hello listener (FastCGI if fastcgi is set,
// HTTP otherwise) on a fresh connection and checks for a 200 with the
// expected body.
func Probe(ctx context.Context, network, addr string, fastcgi bool) error {
	return ProbeVia(ctx, nil, network, addr, fastcgi)
}

// ProbeVia is Probe with its connection made by dial (nil: net.Dialer).
func ProbeVia(ctx context.Context, dial DialFunc, network, addr string, fastcgi bool) error {
	return probeOn(ctx, dial, network, addr, fastcgi, nil)
}

// probe is Probe of one of hello's listeners: over TLS on the HTTPS one.
func probe(ctx context.Context, dial DialFunc, l listener) error {
	return probeOn(ctx, dial, l.network, l.addr, l.fastcgi(), l.tls)
}

// probeOn sends the probe's request, over TLS when tc is set, and checks
// the answer.
func probeOn(ctx context.Context, dial DialFunc, network, addr string, fastcgi bool, tc *tls.Config) error {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	probeOf := probeHTTP
	if fastcgi {
		probeOf = probeFastCGI
	}
	status, body, err := probeOf(ctx, dial, network, addr, tc)
	if err != nil {
		return err
	}
	if status != http.StatusOK || string(body) != "Hello World\n" {
		return fmt.Errorf("got status %d, body %q; want 200, %q", status, body, "Hello World\n")
	}
	return nil
}

// probeFastCGI sends one FastCGI request on a connection of its own.
func probeFastCGI(ctx context.Context, dial DialFunc, network, addr string, _ *tls.Config) (int, []byte, error) {
	nc, err := dial(ctx, network, addr)
	if err != nil {
		return 0, nil, err
	}
	c := fcgiclient.NewConn(nc)
	defer c.Close()
	resp, err := c.Do(ctx, &fcgiclient.Request{CloseConn: true})
	if err != nil {
		return 0, nil, err
	}
	if resp.ProtocolStatus != fcgiclient.StatusRequestComplete {
		return 0, nil, fmt.Errorf("END_REQUEST protocol status %d", resp.ProtocolStatus)
	}
	return resp.Status, resp.Body, nil
}

// probeHTTP sends one GET / on a connection of its own, an HTTP/1.1
// request over TLS when tc is set (a full handshake).
func probeHTTP(ctx context.Context, dial DialFunc, network, addr string, tc *tls.Config) (int, []byte, error) {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	url := "http://" + addr + "/"
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dial(ctx, network, addr)
	}
	switch {
	case network == "unix":
		url = "http://localhost/"
	case tc != nil:
		url = "https://" + addr + "/"
		tr.TLSClientConfig = tc.Clone()
		tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, body, nil
}

// Pid is hello's process id.
func (s *Server) Pid() int { return s.p.Pid() }

// Ready is what hello's ready line said, its ?work= calibration among it
// (for env.json); the error says why the line did not parse. Start does
// not fail on it: the readiness requests decide whether hello serves.
func (s *Server) Ready() (Ready, error) { return s.info, s.infoErr }

// WorkCalibration is hello's ?work= calibration in units of work per
// microsecond of CPU time, 0 if its ready line did not say.
func (s *Server) WorkCalibration() float64 { return s.info.WorkUnitsPerMicrosecond }

// Done is closed when hello has exited.
func (s *Server) Done() <-chan struct{} { return s.p.Done() }

// Exited reports whether hello has exited (on its own or by Stop).
func (s *Server) Exited() bool { return s.p.Exited() }

// Wait waits for hello to exit and returns nil only for exit status 0;
// otherwise the error carries the tail of its stderr.
func (s *Server) Wait() error { return s.p.Wait() }

// Tail returns the last lines hello wrote to stderr.
func (s *Server) Tail() string { return s.p.Tail() }

// Stop sends SIGTERM, waits for hello to exit (killing it after its grace
// period and a margin), and checks that its unix sockets are gone; any left
// behind with nobody listening are removed, and all are reported. Calling Stop again returns the same
// result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		err := s.p.Stop(syscall.SIGTERM, s.grace+2*time.Second)
		var errs []error
		if err != nil {
			errs = append(errs, fmt.Errorf("stopping cmd/hello: %w", err))
		}
		for _, path := range s.socks {
			if !s.ready {
				break // hello may have refused a socket that is someone else's
			}
			if _, serr := os.Lstat(path); serr != nil {
				continue
			}
			errs = append(errs, fmt.Errorf("cmd/hello left its socket %s behind", path))
			if live, _ := unixsock.Live(path); !live {
				if rerr := unixsock.Remove(path); rerr != nil {
					errs = append(errs, rerr)
				}
			}
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// Name is what messages call it.
func (s *Server) Name() string { return "cmd/hello" }

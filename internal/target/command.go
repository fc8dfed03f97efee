package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-shellwords"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/internal/unixsock"
)

// CommandPrefix starts a -targets name that is the user's own HTTP
// server: "cmd:PATH ARGS", e.g. cmd:'./jsonapi -listen {addr}'.
const CommandPrefix = "cmd:"

// Placeholders in a command target's arguments, replaced wherever they
// appear (also inside an argument, as in --bind={addr}).
const (
	// PlaceAddr is the TCP host:port to listen on (Config.Addr): the
	// address standalone's load and nginx-http's upstream reach.
	PlaceAddr = "{addr}"
	// PlaceHost and PlacePort are its two halves, for servers that take
	// them apart.
	PlaceHost = "{host}"
	PlacePort = "{port}"
	// PlaceUnix is the unix socket path to listen on (Config.Unix), where
	// nginx-http-unix's upstream connects; for servers that support one.
	PlaceUnix = "{unix}"
	// PlaceProcs is the sweep's processor value (Config.Procs); it is also
	// in the environment as GOMAXPROCS, which a Go server obeys unasked.
	PlaceProcs = "{procs}"
)

// CommandStartTimeout bounds a command target's start when ctx has no
// earlier deadline: it must answer an HTTP request by then.
const CommandStartTimeout = 30 * time.Second

// IsCommand reports whether a -targets name is a command target.
func IsCommand(name string) bool { return strings.HasPrefix(name, CommandPrefix) }

var placeholder = regexp.MustCompile(`\{[a-z]+\}`)

// ParseCommand turns "cmd:PATH ARGS" into a Target of Runtime Cmd. The
// command line is split as a POSIX shell would split it (quotes and
// backslashes; no variables, globs or pipes), and must say where to
// listen: PlaceAddr (or PlacePort) or PlaceUnix. Its name is spec itself.
func ParseCommand(spec string) (Target, error) {
	line, ok := strings.CutPrefix(spec, CommandPrefix)
	if !ok {
		return Target{}, fmt.Errorf("target %q: a command target starts with %q", spec, CommandPrefix)
	}
	p := shellwords.NewParser()
	argv, err := p.Parse(line)
	if err != nil {
		return Target{}, fmt.Errorf("target %q: %w", spec, err)
	}
	if len(argv) == 0 {
		return Target{}, fmt.Errorf("target %q: no command after %q", spec, CommandPrefix)
	}
	t := Target{Name: spec, Runtime: Cmd, Argv: argv, Model: "your own service: " + strings.TrimSpace(line)}
	for _, a := range argv {
		for _, ph := range placeholder.FindAllString(a, -1) {
			switch ph {
			case PlaceAddr, PlaceHost, PlacePort, PlaceUnix, PlaceProcs:
			default:
				return Target{}, fmt.Errorf("target %q: unknown placeholder %s (known: %s %s %s %s %s)",
					spec, ph, PlaceAddr, PlaceHost, PlacePort, PlaceUnix, PlaceProcs)
			}
		}
	}
	if len(argv) == 1 && strings.ContainsAny(argv[0], " \t") {
		return Target{}, fmt.Errorf("target %q: the whole command is one quoted word; quote it for your shell only (cmd:'./api -listen {addr}' in a shell gives cmd:./api -listen {addr})", spec)
	}
	if placeholder.MatchString(argv[0]) {
		return Target{}, fmt.Errorf("target %q: the program itself cannot be a placeholder", spec)
	}
	if !t.ListensTCP() && !t.ListensUnix() {
		return Target{}, fmt.Errorf("target %q: the command must say where to listen: put %s (TCP host:port), %s or %s (a unix socket path) in it",
			spec, PlaceAddr, PlacePort, PlaceUnix)
	}
	return t, nil
}

func (t Target) uses(ph string) bool {
	for _, a := range t.Argv {
		if strings.Contains(a, ph) {
			return true
		}
	}
	return false
}

// ListensTCP reports whether t serves HTTP on TCP at Config.Addr: every
// seed target does; a command target does when it names PlaceAddr or
// PlacePort, a running target when it is at IP:PORT.
func (t Target) ListensTCP() bool {
	if t.Runtime == Running {
		return t.listen.network == "tcp"
	}
	if t.Runtime != Cmd {
		return true
	}
	return t.uses(PlaceAddr) || t.uses(PlacePort)
}

// ListensUnix reports whether t serves HTTP on a unix socket at
// Config.Unix: a command target that names PlaceUnix; a running target
// at listen:unix:PATH listens there.
func (t Target) ListensUnix() bool {
	if t.Runtime == Running {
		return t.listen.network == "unix"
	}
	return t.Runtime == Cmd && t.uses(PlaceUnix)
}

// Serves reports whether t can stand behind a topology's backend:
// HTTPTCP when it listens on TCP, HTTPUnix when it listens on a unix
// socket, and NoBackend (nginx alone) always. The FastCGI backends are
// cmd/hello's.
func (t Target) Serves(b topology.Backend) bool {
	switch b {
	case topology.NoBackend:
		return true
	case topology.HTTPTCP:
		return t.ListensTCP()
	case topology.HTTPUnix:
		return t.ListensUnix()
	}
	return false
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Slug is t's name made fit for a file name: the name itself for the seed
// targets, "cmd-PROGRAM" (the program's base name) for a command target.
func (t Target) Slug() string {
	if t.Runtime == Running {
		return t.runningSlug()
	}
	if t.Runtime != Cmd || len(t.Argv) == 0 {
		return t.Name
	}
	base := unsafeName.ReplaceAllString(filepath.Base(t.Argv[0]), "_")
	return "cmd-" + strings.Trim(base, "._")
}

// checkCommand finds a command target's program: a path (with a '/') must
// be an executable file, a bare name must be in PATH.
func (t Target) checkCommand() (string, error) {
	path, err := exec.LookPath(t.Argv[0])
	if err != nil {
		return "", fmt.Errorf("target %s: program %s: %w", t.Name, t.Argv[0], err)
	}
	return filepath.Abs(path)
}

// buildCommand resolves the program of a command target; it runs in the
// harness's working directory, as it would from the user's shell.
func (t Target) buildCommand() (*Program, error) {
	path, err := t.checkCommand()
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	t.Argv = append([]string{path}, t.Argv[1:]...)
	return &Program{Target: t, Dir: wd}, nil
}

// commandLine is a command target's argv with the placeholders replaced.
func (p *Program) commandLine(cfg Config) []string {
	host, port, _ := net.SplitHostPort(cfg.Addr)
	r := strings.NewReplacer(PlaceAddr, cfg.Addr, PlaceHost, host, PlacePort, port,
		PlaceUnix, cfg.Unix, PlaceProcs, strconv.Itoa(cfg.Procs))
	argv := make([]string, len(p.Target.Argv))
	for i, a := range p.Target.Argv {
		if i == 0 {
			argv[i] = a
			continue
		}
		argv[i] = r.Replace(a)
	}
	return argv
}

// endpoint is one place a command target listens.
type endpoint struct{ network, addr string }

func (e endpoint) String() string {
	if e.network == "unix" {
		return "unix socket " + e.addr
	}
	return e.addr
}

func (p *Program) endpoints(cfg Config) []endpoint {
	var es []endpoint
	if p.Target.ListensTCP() {
		es = append(es, endpoint{"tcp", cfg.Addr})
	}
	if p.Target.ListensUnix() {
		es = append(es, endpoint{"unix", cfg.Unix})
	}
	return es
}

// startCommand runs a command target and returns once an HTTP GET of
// cfg.Path has been answered (any status below 500) at every endpoint.
func (p *Program) startCommand(ctx context.Context, cfg Config) (*Server, error) {
	t := p.Target
	es := p.endpoints(cfg)
	var where []string
	for _, e := range es {
		where = append(where, e.String())
	}
	prefix := fmt.Sprintf("starting %s on %s", t.Name, strings.Join(where, " and "))
	for _, e := range es {
		if err := checkEndpoint(e, cfg.NetNS); err != nil {
			return nil, fmt.Errorf("%s: %w", prefix, err)
		}
	}
	path := cfg.Path
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("%s: readiness path %q does not start with /", prefix, path)
	}
	child, err := p.spawnCommand(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", prefix, err)
	}
	s := &Server{Program: p, Addr: cfg.Addr, Unix: cfg.Unix, p: child, grace: cfg.Grace}

	sctx, cancel := context.WithTimeout(ctx, CommandStartTimeout)
	defer cancel()
	for _, e := range es {
		if err := awaitAnswer(ctx, sctx, child, cfg, e, path); err != nil {
			err = fmt.Errorf("%s: %w", prefix, err)
			_ = s.Stop()
			if tail := strings.TrimSpace(child.Tail()); tail != "" {
				err = fmt.Errorf("%w\n%s", err, proc.Indent(proc.LastLines(tail, 10), "    "))
			}
			return nil, err
		}
	}
	return s, nil
}

// spawnCommand starts the target's command line in its own process
// group, with GOMAXPROCS set when cfg.Procs is.
func (p *Program) spawnCommand(ctx context.Context, cfg Config) (*proc.Proc, error) {
	argv := p.commandLine(cfg)
	var env []string
	if cfg.Procs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(cfg.Procs))
	}
	var stderr io.Writer = io.Discard
	if cfg.Stderr != nil {
		stderr = cfg.Stderr
	}
	child, err := proc.Start(ctx, argv[0], argv[1:], proc.Options{
		Stderr: stderr, Grace: cfg.Grace, NetNS: cfg.NetNS, CPUs: cfg.CPUs, Dir: p.Dir, Env: env,
		// A script or a server with workers leaves nothing behind, and
		// if the harness dies the command gets SIGTERM.
		Group: true, DeathSignal: syscall.SIGTERM,
	})
	if err != nil {
		return nil, err
	}
	child.Name = p.Target.Name
	return child, nil
}

// awaitAnswer asks e for path, backing off, until a status below 500
// comes back, the child exits, or sctx (the start's deadline) or ctx ends.
func awaitAnswer(ctx, sctx context.Context, child *proc.Proc, cfg Config, e endpoint, path string) error {
	backoff := 5 * time.Millisecond
	var last error
	for {
		status, err := ProbeHTTP(sctx, cfg.Dial, e.network, probeAddr(e.addr), path, cfg.Header)
		if err == nil && status >= 500 {
			err = fmt.Errorf("status %d", status)
		}
		if err == nil {
			return nil
		}
		if last == nil || sctx.Err() == nil {
			last = err
		}
		select {
		case <-child.Done():
			// The end of ctx also ends the child: say what ran out,
			// not how the child was stopped.
			if ctx.Err() == nil {
				return fmt.Errorf("it exited before it answered (%s); last request: %w", exitReason(child), last)
			}
			return fmt.Errorf("no answer to GET %s on %s: %w; last request: %w", path, e, ctx.Err(), last)
		case <-sctx.Done():
			return fmt.Errorf("no answer to GET %s on %s: %w; last request: %w", path, e, sctx.Err(), last)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 200*time.Millisecond)
	}
}

// exitReason is how the child ended, without its name (the error names it
// already): "exit status 2", "signal: killed".
func exitReason(p *proc.Proc) string {
	var ee *exec.ExitError
	if err := p.Wait(); errors.As(err, &ee) {
		return ee.Error()
	}
	return exitStatus(p)
}

// checkEndpoint refuses an address someone else listens on (the readiness
// request would reach them) and clears a stale socket file; inside a
// namespace of the run's own nothing else listens.
func checkEndpoint(e endpoint, netns string) error {
	if e.network == "unix" {
		if e.addr == "" {
			return errors.New("the command listens on {unix} but no socket path was given")
		}
		fi, err := os.Lstat(e.addr)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case fi.Mode().Type() != fs.ModeSocket:
			return fmt.Errorf("%s exists and is not a socket", e.addr)
		}
		if live, _ := unixsock.Live(e.addr); live {
			return fmt.Errorf("another server is listening on %s", e.addr)
		}
		return unixsock.Remove(e.addr)
	}
	if err := checkAddr(e.addr); err != nil {
		return err
	}
	if netns != "" {
		return nil
	}
	l, err := net.Listen("tcp", e.addr)
	if err != nil {
		return fmt.Errorf("address %s is not free: %w", e.addr, err)
	}
	return l.Close()
}

// ProbeHTTP sends one GET of path, with header's fields added, to an HTTP
// server on a fresh connection made by dial (nil: net.Dialer) and returns
// the response's status. Any answer is an answer: whether it is the right
// one is parity's to say.
func ProbeHTTP(ctx context.Context, dial hellorun.DialFunc, network, addr, path string, header http.Header) (int, error) {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	tr := &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx, network, addr) }}
	defer tr.CloseIdleConnections()
	host := addr
	if network == "unix" {
		host = "localhost"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return 0, err
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if h := header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, err
}

// SplitNames splits a -targets list at its commas, except for commas
// inside quotes, so that -targets "go,cmd:'./api -tags a,b -listen {addr}'"
// is two targets. The quotes stay in the names (ParseCommand removes
// them); an unclosed quote is an error.
func SplitNames(list string) ([]string, error) {
	var names []string
	var cur strings.Builder
	var quote rune
	escaped := false
	for _, r := range list {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ',':
			names = append(names, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	if quote != 0 {
		return nil, fmt.Errorf("targets %q: unclosed %c quote", list, quote)
	}
	names = append(names, strings.TrimSpace(cur.String()))
	for _, n := range names {
		if n == "" {
			return nil, fmt.Errorf("targets %q: an empty name", list)
		}
	}
	return names, nil
}

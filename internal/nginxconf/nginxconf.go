// Package nginxconf renders the nginx configuration in nginx/ (package
// nginxfiles) for one run: nginx.conf, the vhost file of each topology that
// goes through nginx, fastcgi_params, and the body nginx-static serves.
// Addresses come from a topology.Layout, so the rendered files always agree
// with where cmd/hello listens. The TLS vhosts (TLSVhosts, of
// topology.TLS) are rendered only when Params.Vhosts names them, from
// Params.TLS: the run's certificate and the tlscert.Settings Go's HTTPS
// listener is given too. Params.Fit sizes nginx for a load: every
// vhost's listen backlog holds all its clients connecting at once, and
// worker_connections holds, in one worker, every client, an upstream
// connection for each and the other vhosts' idle upstream pools, within
// the open-files limit.
package nginxconf

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"text/template"

	"github.com/topobench/topobench/internal/topology"
	nginxfiles "github.com/topobench/topobench/nginx"
)

// MaxRlimitNofile is the reference run's worker_rlimit_nofile.
const MaxRlimitNofile = 200000

// maxUnixPath is the room in sockaddr_un.sun_path, less the trailing NUL.
const maxUnixPath = 107

// Params says what to render.
type Params struct {
	// Layout gives the port of each vhost and the cmd/hello address behind it.
	Layout topology.Layout
	// Prefix is the absolute run directory where nginx keeps its pid file,
	// error log and temp files, and where the static body lives. Empty means
	// the directory Render writes into.
	Prefix string
	// WorkerProcesses is nginx's worker_processes; 0 means "auto".
	WorkerProcesses int
	// WorkerRlimitNofile is nginx's worker_rlimit_nofile; it must not exceed
	// the hard open-files limit of the user nginx runs as (FitRlimitNofile).
	WorkerRlimitNofile int
	// Vhosts are the vhost files to render and include, as topology.Vhost
	// names; nil means every plain topology that goes through nginx
	// (AllVhosts), never a TLS one.
	Vhosts []string
	// User, when set, renders a "user" directive. Needed only when the
	// master runs as root: its workers would otherwise drop to "nobody" and
	// lose access to the sockets and files in a private run directory.
	User string
	// Backlog is every vhost's listen backlog and WorkerConnections the
	// events block's worker_connections; Fit sets both from the load.
	// Zero fits them to the reference load (DefaultConnections).
	Backlog, WorkerConnections int
	// Keepalive is each upstream block's keepalive: the idle connections
	// to cmd/hello a worker keeps for reuse. Zero is DefaultKeepalive.
	Keepalive int
	// TLS is what the TLS vhosts (topology.TLS) are rendered with; only
	// a Vhosts that names one needs it.
	TLS TLS
}

// DefaultConnections is the reference run's load (wrk -c5000), which a
// rendering without Fit holds; DefaultKeepalive its upstream keepalive.
const (
	DefaultConnections = 5000
	DefaultKeepalive   = 300
)

// MinBacklog is nginx's own listen backlog on Linux: no vhost gets less.
const MinBacklog = 511

// Backlog is the listen backlog for a load of at most connections
// clients: all of them may connect at once (wrk opens its connections in
// one burst), and the kernel caps it at net.core.somaxconn, which the
// preflight checks against it.
func Backlog(connections int) int { return max(connections, MinBacklog) }

// connReserve is what a worker holds besides clients and upstreams: its
// listening sockets, epoll, the error log, channels to the master, and
// slack (the preflight's open-files rule counts the same).
const connReserve = 64

// ErrNoRoom is Fit's error when a worker's clients and upstream
// connections exceed what its open-files limit allows.
var ErrNoRoom = errors.New("nginx worker cannot hold the connections")

// Fit sizes p for a load of at most connections clients through nginx,
// with p's Keepalive, Vhosts and WorkerRlimitNofile set: the backlog
// holds them all at once, and worker_connections holds, in any one
// worker (nginx does not spread accepts evenly), every client, an
// upstream connection for each, and the idle pools the other upstream
// vhosts kept from earlier cells (their Keepalive each). The stale pools
// are what gives way first: worker_connections is then the most the
// open-files limit allows. A worker that cannot hold a client and its
// upstream connection each is ErrNoRoom.
func (p *Params) Fit(connections int) error {
	if connections < 1 {
		return fmt.Errorf("fitting nginx to %d connections: want at least 1", connections)
	}
	p.Backlog = Backlog(connections)
	least, need := p.workerNeed(connections)
	room := p.WorkerRlimitNofile
	if least > room {
		return fmt.Errorf("%w: %d connections through nginx need %d in a worker (a client and an upstream connection each), over its open-files limit of %d: lower -connections to %d or raise the hard open-files limit (limits.conf)",
			ErrNoRoom, connections, least, room, max(0, (room-connReserve)/2))
	}
	p.WorkerConnections = min(withDrainRoom(need), room)
	return nil
}

// withDrainRoom is worker_connections for n connections in use: once
// no more than a sixteenth of them is free, nginx closes its idle
// kept-alive client connections to make room ("worker_connections are
// not enough, reusing connections", ngx_drain_connections), which a
// load generator sees as read errors and reconnects.
func withDrainRoom(n int) int { return n*16/15 + 1 }

// WorkerNeed is the connections one worker may hold under a load of
// connections clients: every client, an upstream connection for each,
// and the idle pools of the other upstream vhosts. Fit renders at most
// the open-files limit; a need above it is what the idle pools of
// earlier cells may run short of.
func (p Params) WorkerNeed(connections int) int {
	_, need := p.workerNeed(connections)
	return need
}

// workerNeed is what one worker needs for connections clients: least is
// the clients and their upstream connections, need adds the other
// upstream vhosts' idle pools.
func (p Params) workerNeed(connections int) (least, need int) {
	pools := 0
	for _, v := range p.vhosts() {
		if t, ok := topologyOf(v); ok && t.Backend != topology.NoBackend {
			pools++
		}
	}
	least = connections + connReserve
	if pools > 0 {
		// Open upstream connections, busy and idle, never outnumber the
		// clients: an idle one is taken before a new one is opened.
		least += connections
	}
	need = least + max(pools-1, 0)*min(p.keepalive(), connections)
	return least, need
}

func (p Params) keepalive() int {
	if p.Keepalive == 0 {
		return DefaultKeepalive
	}
	return p.Keepalive
}

func (p Params) vhosts() []string {
	if p.Vhosts == nil {
		return AllVhosts()
	}
	return p.Vhosts
}

func topologyOf(vhost string) (topology.Topology, bool) {
	for _, c := range topology.Known() {
		if c.Vhost == vhost {
			return c, true
		}
	}
	return topology.Topology{}, false
}

// DefaultParams is what a run on this machine uses: every vhost, worker
// processes "auto", worker_rlimit_nofile fitted to the hard open-files limit,
// and, under root, workers that keep the invoking user.
func DefaultParams(l topology.Layout) (Params, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return Params{}, fmt.Errorf("reading the open-files limit: %w", err)
	}
	p := Params{Layout: l, WorkerRlimitNofile: FitRlimitNofile(rl.Max)}
	if os.Geteuid() == 0 {
		u, err := user.Current()
		if err != nil {
			return Params{}, fmt.Errorf("looking up the current user: %w", err)
		}
		p.User = u.Username
	}
	return p, nil
}

// FitRlimitNofile caps the reference run's worker_rlimit_nofile at the hard
// open-files limit, which an unprivileged nginx cannot exceed.
func FitRlimitNofile(hard uint64) int {
	if hard >= MaxRlimitNofile {
		return MaxRlimitNofile
	}
	return int(hard)
}

// AllVhosts returns the vhost file names of every plain topology through
// nginx, in report order: what a Params without Vhosts renders.
func AllVhosts() []string { return Vhosts(topology.All()) }

// TLSVhosts returns the vhost file names of the TLS topologies through
// nginx (topology.TLS), rendered only when Vhosts names them.
func TLSVhosts() []string { return Vhosts(topology.TLS()) }

// Vhosts returns the vhost file names of the given topologies, skipping
// those nginx does not see.
func Vhosts(ts []topology.Topology) []string {
	var vs []string
	for _, t := range ts {
		if t.ViaNginx() {
			vs = append(vs, t.Vhost)
		}
	}
	return vs
}

// File is one rendered file, named relative to the run directory.
type File struct {
	Name string
	Data []byte
}

// StaticBody is where the nginx-static body lives, relative to the prefix.
const StaticBody = "static/hello"

// Render writes the configuration for p into dir (created if missing):
// nginx.conf, fastcgi_params, the chosen vhost files and static/hello, plus
// an empty tmp/ for nginx's temp paths.
func Render(dir string, p Params) error {
	if p.Prefix == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("rendering nginx config: %w", err)
		}
		p.Prefix = abs
	}
	files, err := Files(p)
	if err != nil {
		return err
	}
	for _, sub := range []string{"static", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return fmt.Errorf("rendering nginx config: %w", err)
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return fmt.Errorf("rendering nginx config: %w", err)
		}
	}
	return nil
}

// Files renders the configuration for p without writing it. p.Prefix must
// be set.
func Files(p Params) ([]File, error) {
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("rendering nginx config: %w", err)
	}
	vhosts := p.vhosts()
	p.Keepalive = p.keepalive()
	if p.Backlog == 0 || p.WorkerConnections == 0 {
		// Not fitted: the reference load, as far as the limit allows.
		def := p
		if err := def.Fit(DefaultConnections); err != nil {
			_, need := def.workerNeed(DefaultConnections)
			def.WorkerConnections = max(1, min(need, p.WorkerRlimitNofile))
		}
		if p.Backlog == 0 {
			p.Backlog = def.Backlog
		}
		if p.WorkerConnections == 0 {
			p.WorkerConnections = def.WorkerConnections
		}
	}
	workers := "auto"
	if p.WorkerProcesses > 0 {
		workers = strconv.Itoa(p.WorkerProcesses)
	}
	main := struct {
		Params
		WorkerProcesses string
		Vhosts          []string
	}{p, workers, vhosts}

	var files []File
	add := func(src, name string, data any) error {
		b, err := execute(src, data)
		if err != nil {
			return err
		}
		files = append(files, File{Name: name, Data: b})
		return nil
	}
	if err := add("nginx.conf", "nginx.conf", main); err != nil {
		return nil, err
	}
	if err := add("fastcgi_params", "fastcgi_params", nil); err != nil {
		return nil, err
	}
	for _, v := range vhosts {
		data, err := vhostData(p, v)
		if err != nil {
			return nil, fmt.Errorf("rendering nginx config: %w", err)
		}
		if err := add(v, v, data); err != nil {
			return nil, err
		}
	}
	if err := add("hello", StaticBody, nil); err != nil {
		return nil, err
	}
	return files, nil
}

// vhost is what a vhost template sees.
type vhost struct {
	// Listen is the host the vhost binds (topology.Layout.ListenHost).
	Listen   string
	Port     int
	Upstream string // host:port or unix:PATH; empty for the references
	Prefix   string
	// Backlog is the listen backlog, Keepalive the upstream pool.
	Backlog, Keepalive int
	// TLS is what a TLS vhost's tls.tmpl renders.
	TLS tlsVhost
}

func vhostData(p Params, name string) (vhost, error) {
	t, found := topologyOf(name)
	if !found {
		return vhost{}, fmt.Errorf("unknown vhost %q (known: %v)", name, append(AllVhosts(), TLSVhosts()...))
	}
	port, ok := p.Layout.NginxPorts[name]
	if !ok || port <= 0 || port > 65535 {
		return vhost{}, fmt.Errorf("vhost %s: no valid port in the layout (have %d)", name, port)
	}
	v := vhost{Listen: p.Layout.ListenHost(), Port: port, Prefix: p.Prefix, Backlog: p.Backlog, Keepalive: p.Keepalive}
	if t.TLS {
		var err error
		if v.TLS, err = p.TLS.vhost(p.Prefix, name); err != nil {
			return vhost{}, fmt.Errorf("vhost %s: %w", name, err)
		}
	}
	network, addr, ok := p.Layout.BackendAddr(t)
	if !ok {
		return v, nil
	}
	switch network {
	case "unix":
		if addr == "" || !filepath.IsAbs(addr) {
			return vhost{}, fmt.Errorf("vhost %s: unix socket path %q must be absolute", name, addr)
		}
		if len(addr) > maxUnixPath {
			return vhost{}, fmt.Errorf("vhost %s: unix socket path %s is %d bytes, over the %d the kernel allows", name, addr, len(addr), maxUnixPath)
		}
		v.Upstream = "unix:" + addr
	default:
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return vhost{}, fmt.Errorf("vhost %s: backend address %q: %w", name, addr, err)
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return vhost{}, fmt.Errorf("vhost %s: backend address %q is not a loopback IP", name, addr)
		}
		v.Upstream = addr
	}
	return v, nil
}

func (p Params) validate() error {
	if p.Prefix == "" || !filepath.IsAbs(p.Prefix) {
		return fmt.Errorf("prefix %q must be an absolute path", p.Prefix)
	}
	if p.WorkerRlimitNofile <= 0 {
		return errors.New("worker_rlimit_nofile must be positive")
	}
	if p.WorkerProcesses < 0 {
		return fmt.Errorf("worker_processes %d is negative", p.WorkerProcesses)
	}
	switch {
	case p.Backlog < 0:
		return fmt.Errorf("listen backlog %d is negative", p.Backlog)
	case p.WorkerConnections < 0:
		return fmt.Errorf("worker_connections %d is negative", p.WorkerConnections)
	case p.WorkerConnections > p.WorkerRlimitNofile:
		return fmt.Errorf("worker_connections %d exceeds worker_rlimit_nofile %d", p.WorkerConnections, p.WorkerRlimitNofile)
	case p.Keepalive < 0:
		return fmt.Errorf("upstream keepalive %d is negative", p.Keepalive)
	}
	if p.Vhosts != nil && len(p.Vhosts) == 0 {
		return errors.New("no vhosts to render")
	}
	seen := map[string]bool{}
	for _, v := range p.Vhosts {
		if seen[v] {
			return fmt.Errorf("vhost %s listed twice", v)
		}
		seen[v] = true
	}
	return nil
}

// partials are the templates a file may call ({{template "tls" .}}),
// each defined in a file of nginx/ of its own.
var partials = []string{"tls.tmpl"}

func execute(name string, data any) ([]byte, error) {
	t := template.New(name).Option("missingkey=error")
	for _, f := range append([]string{name}, partials...) {
		src, err := nginxfiles.FS.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("rendering nginx config: %w", err)
		}
		into := t
		if f != name {
			into = t.New(f)
		}
		if _, err := into.Parse(string(src)); err != nil {
			return nil, fmt.Errorf("rendering nginx config: nginx/%s: %w", f, err)
		}
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("rendering nginx config: nginx/%s: %w", name, err)
	}
	return b.Bytes(), nil
}

// Package nginxconf renders the nginx configuration in nginx/ (package
// nginxfiles) for one run: nginx.conf, the vhost file of each topology that
// goes through nginx, fastcgi_params, and the body nginx-static serves.
// Addresses come from a topology.Layout, so the rendered files always agree
// with where cmd/hello listens.
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
	// names; nil means every topology that goes through nginx.
	Vhosts []string
	// User, when set, renders a "user" directive. Needed only when the
	// master runs as root: its workers would otherwise drop to "nobody" and
	// lose access to the sockets and files in a private run directory.
	User string
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

// AllVhosts returns the vhost file names of every topology through nginx,
// in report order.
func AllVhosts() []string {
	var vs []string
	for _, t := range topology.All() {
		if t.ViaNginx() {
			vs = append(vs, t.Vhost)
		}
	}
	return vs
}

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
	vhosts := p.Vhosts
	if vhosts == nil {
		vhosts = AllVhosts()
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
}

func vhostData(p Params, name string) (vhost, error) {
	var t topology.Topology
	found := false
	for _, c := range topology.All() {
		if c.Vhost == name {
			t, found = c, true
			break
		}
	}
	if !found {
		return vhost{}, fmt.Errorf("unknown vhost %q (known: %v)", name, AllVhosts())
	}
	port, ok := p.Layout.NginxPorts[name]
	if !ok || port <= 0 || port > 65535 {
		return vhost{}, fmt.Errorf("vhost %s: no valid port in the layout (have %d)", name, port)
	}
	v := vhost{Listen: p.Layout.ListenHost(), Port: port, Prefix: p.Prefix}
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

func execute(name string, data any) ([]byte, error) {
	src, err := nginxfiles.FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("rendering nginx config: %w", err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("rendering nginx config: nginx/%s: %w", name, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("rendering nginx config: nginx/%s: %w", name, err)
	}
	return b.Bytes(), nil
}

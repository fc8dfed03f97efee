// Package topology names the ways a request can reach the Go service (or
// nginx alone) and where each of them listens during a run. Every other
// package — config rendering, parity, the sweep, the report — takes its
// names, vhost files and URLs from here, so they cannot drift apart.
//
// The topologies whose client side speaks TLS (standalone-tls,
// nginx-tls-http, nginx-tls-http-unix) are a list of their own, TLS():
// All, Names and Seed, and so every default and "all" made of them, are
// the plain ones; Lookup, Parse and DefaultLayout know both.
package topology

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
)

// Backend is the cmd/hello listener a topology ends at.
type Backend int

const (
	// NoBackend: nginx answers by itself (the reference ceilings).
	NoBackend Backend = iota
	// HTTPTCP is net/http on TCP (-http).
	HTTPTCP
	// FCGITCP is net/http/fcgi on TCP (-fcgi-tcp).
	FCGITCP
	// FCGIUnix is net/http/fcgi on a unix socket (-fcgi-unix).
	FCGIUnix
	// FastTCP is internal/fastcgi on TCP (-fcgi-fast-tcp).
	FastTCP
	// FastUnix is internal/fastcgi on a unix socket (-fcgi-fast-unix).
	FastUnix
	// HTTPUnix is net/http on a unix socket (-http-unix).
	HTTPUnix
	// HTTPSTCP is net/http with crypto/tls on TCP, cmd/hello's HTTPS
	// listener.
	HTTPSTCP
)

// Topology is one path of a request.
type Topology struct {
	Name string
	// Vhost is the file under nginx/ that fronts this topology; empty for
	// standalone, which nginx does not see.
	Vhost string
	// Backend is the cmd/hello listener nginx (or wrk) talks to.
	Backend Backend
	// Reference marks ceilings with no Go behind them.
	Reference bool
	// Summary is one line for tables and help text.
	Summary string
	// TLS marks topologies whose client side speaks HTTPS (TLS()); what
	// nginx says to Go behind it stays plain.
	TLS bool
	// Baseline names the topology this one's ratios are to when it is
	// not Standalone: the paths over TLS are compared with Go's own TLS
	// (StandaloneTLS), not with plaintext.
	Baseline string
}

// BaselineName is the topology t's ratios are to: Standalone, or t's
// Baseline.
func (t Topology) BaselineName() string {
	if t.Baseline != "" {
		return t.Baseline
	}
	return Standalone
}

// BaselineOf is BaselineName of the topology called name; Standalone for a
// name Lookup does not know (an older sweep's).
func BaselineOf(name string) string {
	t, err := Lookup(name)
	if err != nil {
		return Standalone
	}
	return t.BaselineName()
}

// IsBaseline reports whether name is a topology others' ratios are to:
// standalone, or standalone-tls.
func IsBaseline(name string) bool { return BaselineOf(name) == name }

// ViaNginx reports whether requests pass through nginx.
func (t Topology) ViaNginx() bool { return t.Vhost != "" }

// Standalone is the topology without nginx, the one every plain ratio is
// to; StandaloneTLS is its TLS twin, which the paths over TLS are to.
const (
	Standalone    = "standalone"
	StandaloneTLS = "standalone-tls"
)

// The topologies, in report order. The first four are the 2013 seed; the
// reference rows follow; the last three separate protocol from implementation.
var all = []Topology{
	{Name: Standalone, Backend: HTTPTCP, Summary: "wrk -> Go net/http on TCP"},
	{Name: "nginx-http", Vhost: "go.http", Backend: HTTPTCP, Summary: "nginx proxy_pass -> Go net/http on TCP, keepalive"},
	{Name: "nginx-fcgi-tcp", Vhost: "go.fcgi.tcp", Backend: FCGITCP, Summary: "nginx fastcgi_pass -> Go net/http/fcgi on TCP, keepalive"},
	{Name: "nginx-fcgi-unix", Vhost: "go.fcgi.unix", Backend: FCGIUnix, Summary: "nginx fastcgi_pass -> Go net/http/fcgi on a unix socket, keepalive"},
	{Name: "nginx-return", Vhost: "nginx.return", Reference: true, Summary: "nginx answers itself with return 200 (ceiling)"},
	{Name: "nginx-static", Vhost: "nginx.static", Reference: true, Summary: "nginx serves the body from a file (ceiling)"},
	{Name: "nginx-fcgi-fast-tcp", Vhost: "go.fcgi.fast.tcp", Backend: FastTCP, Summary: "nginx fastcgi_pass -> Go internal/fastcgi on TCP, keepalive"},
	{Name: "nginx-fcgi-fast-unix", Vhost: "go.fcgi.fast.unix", Backend: FastUnix, Summary: "nginx fastcgi_pass -> Go internal/fastcgi on a unix socket, keepalive"},
	{Name: "nginx-http-unix", Vhost: "go.http.unix", Backend: HTTPUnix, Summary: "nginx proxy_pass -> Go net/http on a unix socket, keepalive"},
}

// tlsTops are the topologies whose client side speaks TLS, kept apart from
// all: every default, "all" list and reference table is the plain ones'.
var tlsTops = []Topology{
	{Name: StandaloneTLS, Backend: HTTPSTCP, TLS: true, Baseline: StandaloneTLS, Summary: "client -> Go net/http + crypto/tls on TCP"},
	{Name: "nginx-tls-http", Vhost: "go.tls.http", Backend: HTTPTCP, TLS: true, Baseline: StandaloneTLS, Summary: "nginx terminates TLS, proxy_pass -> Go net/http on TCP, keepalive"},
	{Name: "nginx-tls-http-unix", Vhost: "go.tls.http.unix", Backend: HTTPUnix, TLS: true, Baseline: StandaloneTLS, Summary: "nginx terminates TLS, proxy_pass -> Go net/http on a unix socket, keepalive"},
}

// All returns every plain (non-TLS) topology in report order; the TLS
// ones are TLS()'s.
func All() []Topology { return append([]Topology(nil), all...) }

// TLS returns the topologies whose client side speaks TLS, in report
// order. Lookup knows them; All, Names and Seed leave them out.
func TLS() []Topology { return append([]Topology(nil), tlsTops...) }

// TLSNames returns the names of TLS().
func TLSNames() []string { return names(tlsTops) }

// Known returns every topology Lookup knows: All(), then TLS().
func Known() []Topology { return append(All(), tlsTops...) }

// Seed returns the names of the 2013 reference run's topologies.
func Seed() []string {
	return []string{Standalone, "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"}
}

// Names returns the names of all plain topologies (All).
func Names() []string { return names(all) }

func names(ts []Topology) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// Lookup finds a topology by name, plain or TLS.
func Lookup(name string) (Topology, error) {
	for _, ts := range [][]Topology{all, tlsTops} {
		for _, t := range ts {
			if t.Name == name {
				return t, nil
			}
		}
	}
	return Topology{}, fmt.Errorf("unknown topology %q (known: %s; over TLS: %s)", name, strings.Join(Names(), ", "), strings.Join(TLSNames(), ", "))
}

// Parse turns a comma-separated list into topologies, rejecting unknown
// names and duplicates.
func Parse(list string) ([]Topology, error) {
	return LookupAll(strings.Split(list, ","))
}

// LookupAll turns names into topologies, rejecting unknown names and
// duplicates; blank names are skipped.
func LookupAll(names []string) ([]Topology, error) {
	var out []Topology
	seen := map[string]bool{}
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if seen[name] {
			return nil, fmt.Errorf("topology %q listed twice", name)
		}
		seen[name] = true
		t, err := Lookup(name)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no topologies in %q", strings.Join(names, ","))
	}
	return out, nil
}

// Layout is where everything listens during one run. Go listeners and nginx
// vhosts bind to loopback only, unless Host names the server end of a veth
// pair the run created.
type Layout struct {
	// Host is the address clients dial for the load-facing listeners
	// (cmd/hello's HTTP listener for standalone, nginx's vhosts); empty
	// means 127.0.0.1. When it is not loopback, the servers run in a
	// network namespace of their own that holds only loopback and the
	// veth, and those listeners bind every address of it (0.0.0.0);
	// nginx's upstream hop still goes to the loopback addresses below.
	Host string
	// cmd/hello listeners.
	HTTP     string // host:port
	FCGITCP  string // host:port
	FCGIUnix string // socket path
	FastTCP  string // host:port
	FastUnix string // socket path
	HTTPUnix string // socket path
	HTTPS    string // host:port of the HTTPS listener (standalone-tls)
	// NginxPorts maps a vhost file name to the loopback port nginx
	// listens on, the TLS vhosts' among them.
	NginxPorts map[string]int
}

// DefaultLayout is the reference run's addresses (HTTP :8080, FastCGI :9001,
// FastCGI unix /tmp/go.sock) with nginx vhosts on 8081 and up, the TLS
// vhosts after the plain ones, and HTTPS on :8443. sockDir holds the unix
// sockets; "/tmp" reproduces the reference paths.
func DefaultLayout(sockDir string) Layout {
	l := Layout{
		HTTP:       "127.0.0.1:8080",
		FCGITCP:    "127.0.0.1:9001",
		FCGIUnix:   filepath.Join(sockDir, "go.sock"),
		FastTCP:    "127.0.0.1:9002",
		FastUnix:   filepath.Join(sockDir, "go-fast.sock"),
		HTTPUnix:   filepath.Join(sockDir, "go-http.sock"),
		HTTPS:      "127.0.0.1:8443",
		NginxPorts: map[string]int{},
	}
	port := 8081
	for _, t := range Known() {
		if t.ViaNginx() {
			l.NginxPorts[t.Vhost] = port
			port++
		}
	}
	return l
}

// FreeLayout is DefaultLayout with every TCP port replaced by one the kernel
// reports free, for tests and for runs beside other services. A port can be
// taken again between this call and its use; callers report that clearly.
func FreeLayout(sockDir string) (Layout, error) {
	l := DefaultLayout(sockDir)
	var err error
	// Every listener stays open until all are picked: a port closed at
	// once can be handed out again by the next pick.
	var held []net.Listener
	defer func() {
		for _, ln := range held {
			ln.Close()
		}
	}()
	pick := func() string {
		if err != nil {
			return ""
		}
		var ln net.Listener
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ""
		}
		held = append(held, ln)
		return ln.Addr().String()
	}
	l.HTTP, l.FCGITCP, l.FastTCP, l.HTTPS = pick(), pick(), pick(), pick()
	for vhost := range l.NginxPorts {
		addr := pick()
		if err != nil {
			break
		}
		_, p, _ := net.SplitHostPort(addr)
		l.NginxPorts[vhost], _ = strconv.Atoi(p)
	}
	if err != nil {
		return Layout{}, fmt.Errorf("finding free loopback ports: %w", err)
	}
	return l, nil
}

// BackendAddr returns the network and address of the cmd/hello listener a
// topology ends at; ok is false for the nginx-only references.
func (l Layout) BackendAddr(t Topology) (network, addr string, ok bool) {
	switch t.Backend {
	case HTTPTCP:
		return "tcp", l.HTTP, true
	case FCGITCP:
		return "tcp", l.FCGITCP, true
	case FCGIUnix:
		return "unix", l.FCGIUnix, true
	case FastTCP:
		return "tcp", l.FastTCP, true
	case FastUnix:
		return "unix", l.FastUnix, true
	case HTTPUnix:
		return "unix", l.HTTPUnix, true
	case HTTPSTCP:
		return "tcp", l.HTTPS, true
	}
	return "", "", false
}

// DialHost is the host clients dial for the load-facing listeners.
func (l Layout) DialHost() string {
	if l.Host == "" {
		return "127.0.0.1"
	}
	return l.Host
}

// ListenHost is the host the load-facing listeners bind: loopback, or
// every address of the servers' own namespace when clients come over a
// veth (see Host).
func (l Layout) ListenHost() string {
	if ip := net.ParseIP(l.DialHost()); ip != nil && ip.IsLoopback() {
		return "127.0.0.1"
	}
	return "0.0.0.0"
}

// URL is what the load generator requests for a topology: https:// for
// the TLS ones.
func (l Layout) URL(t Topology) string {
	scheme := "http://"
	if t.TLS {
		scheme = "https://"
	}
	if !t.ViaNginx() {
		addr := l.HTTP
		if t.Backend == HTTPSTCP {
			addr = l.HTTPS
		}
		if l.Host == "" {
			return scheme + addr + "/"
		}
		_, port, _ := net.SplitHostPort(addr)
		return scheme + net.JoinHostPort(l.Host, port) + "/"
	}
	return scheme + net.JoinHostPort(l.DialHost(), strconv.Itoa(l.NginxPorts[t.Vhost])) + "/"
}

// HTTPListen is where the HTTP server of standalone and nginx-http binds
// (cmd/hello's -http, or another target's address): l.HTTP, or its port
// on every address when clients come over a veth (standalone is
// load-facing; the nginx-http upstream still dials l.HTTP on loopback).
func (l Layout) HTTPListen() string { return l.loadFacing(l.HTTP) }

// HTTPSListen is where the HTTPS server of standalone-tls binds, as
// HTTPListen.
func (l Layout) HTTPSListen() string { return l.loadFacing(l.HTTPS) }

func (l Layout) loadFacing(addr string) string {
	if l.ListenHost() == "127.0.0.1" {
		return addr
	}
	_, port, _ := net.SplitHostPort(addr)
	return net.JoinHostPort(l.ListenHost(), port)
}

// HelloArgs returns cmd/hello flags that open exactly the listeners the
// given topologies need. The HTTPS listener (HTTPSTCP, at HTTPSListen)
// needs the run's certificate besides: its caller adds -tls-cert and
// -tls-key (internal/hellorun).
func (l Layout) HelloArgs(ts []Topology) []string {
	need := map[Backend]bool{}
	for _, t := range ts {
		need[t.Backend] = true
	}
	flag := func(b Backend, name, val string) string {
		if need[b] {
			return "-" + name + "=" + val
		}
		return "-" + name + "="
	}
	return []string{
		flag(HTTPTCP, "http", l.HTTPListen()),
		flag(FCGITCP, "fcgi-tcp", l.FCGITCP),
		flag(FCGIUnix, "fcgi-unix", l.FCGIUnix),
		flag(FastTCP, "fcgi-fast-tcp", l.FastTCP),
		flag(FastUnix, "fcgi-fast-unix", l.FastUnix),
		flag(HTTPUnix, "http-unix", l.HTTPUnix),
		flag(HTTPSTCP, "https", l.HTTPSListen()),
	}
}

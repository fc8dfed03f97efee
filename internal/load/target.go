package load

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// ErrNotLoopback is returned for a target outside 127.0.0.0/8 and ::1: the
// engine sends load only to this machine.
var ErrNotLoopback = errors.New("not a loopback address")

// Target is where requests go: a TCP address on the loopback or a unix
// socket, and the request path (with its query string).
type Target struct {
	Network string // "tcp" or "unix"
	Address string // host:port or the socket path
	Host    string // the Host header
	Path    string // request target, from "/"
}

// ParseTarget reads http://127.0.0.1:PORT/path (any 127.0.0.0/8 address,
// [::1] or localhost) or unix:/path/to.sock:/path (the request path after
// the first ":/"; socket paths holding ":/" are not supported; an absent
// path is "/"). Any other host is refused with ErrNotLoopback.
func ParseTarget(s string) (Target, error) { return ParseTargetAllow(s, netip.Addr{}) }

// ParseTargetAllow is ParseTarget that also accepts the one address allow,
// which must be link-local (169.254.0.0/16, fe80::/10): the server end of
// a veth inside network namespaces the caller created, an address that
// never leaves that link.
func ParseTargetAllow(s string, allow netip.Addr) (Target, error) {
	if allow.IsValid() && !allow.IsLinkLocalUnicast() {
		return Target{}, fmt.Errorf("allowed address %s: %w (only a link-local address, the far end of a namespace's veth, may be allowed)", allow, ErrNotLoopback)
	}
	if rest, ok := strings.CutPrefix(s, "unix:"); ok {
		sock, path := rest, "/"
		if i := strings.Index(rest, ":/"); i >= 0 {
			sock, path = rest[:i], rest[i+1:]
		}
		if sock == "" {
			return Target{}, fmt.Errorf("target %q: no socket path after unix:", s)
		}
		return Target{Network: "unix", Address: sock, Host: "localhost", Path: path}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return Target{}, fmt.Errorf("target: %w", err)
	}
	if u.Scheme != "http" {
		return Target{}, fmt.Errorf("target %q: want http://HOST:PORT/path or unix:/socket:/path", s)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		a, _ := netip.ParseAddr(host)
		if (ip == nil || !ip.IsLoopback()) && !(allow.IsValid() && a == allow) {
			return Target{}, fmt.Errorf("target %q: host %q: %w (load goes only to 127.0.0.0/8, ::1 or a unix socket)", s, host, ErrNotLoopback)
		}
	} else {
		host = "127.0.0.1" // no resolver, no IPv6 surprise
	}
	path := u.RequestURI()
	return Target{Network: "tcp", Address: net.JoinHostPort(host, port), Host: u.Host, Path: path}, nil
}

// WithQuery returns t with key=value added to its query string.
func (t Target) WithQuery(key, value string) Target {
	sep := "?"
	if strings.Contains(t.Path, "?") {
		sep = "&"
	}
	t.Path += sep + url.QueryEscape(key) + "=" + url.QueryEscape(value)
	return t
}

func (t Target) String() string {
	if t.Network == "unix" {
		return "unix:" + t.Address + ":" + t.Path
	}
	return "http://" + t.Host + t.Path
}

// request returns the bytes of one GET, sent unchanged on every request:
// the same two lines wrk sends.
func (t Target) request() []byte {
	return []byte("GET " + t.Path + " HTTP/1.1\r\nHost: " + t.Host + "\r\n\r\n")
}

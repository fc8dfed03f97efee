package load

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
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
	// TLS says the target is https://: the connections speak TLS
	// (Options.TLS says how).
	TLS bool
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
	t, err := ParseURL(s)
	if err != nil {
		return Target{}, fmt.Errorf("target %w", err)
	}
	if err := t.check(allow, false); err != nil {
		return Target{}, fmt.Errorf("target %q: %w", s, err)
	}
	return t, nil
}

// ParseURL reads the forms ParseTarget accepts, and https://HOST:PORT/path
// (port 443 by default; Options.TLS says how to speak it), without asking
// where they lead; Run and Probe refuse a target off this machine (see
// Options.Allow), ParseTarget refuses it at once.
func ParseURL(s string) (Target, error) {
	if rest, ok := strings.CutPrefix(s, "unix:"); ok {
		sock, path := rest, "/"
		if i := strings.Index(rest, ":/"); i >= 0 {
			sock, path = rest[:i], rest[i+1:]
		}
		if sock == "" {
			return Target{}, fmt.Errorf("%q: no socket path after unix:", s)
		}
		return Target{Network: "unix", Address: sock, Host: "localhost", Path: path}, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without url's own quoting of s
		}
		return Target{}, fmt.Errorf("%q: %w", s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return Target{}, fmt.Errorf("%q: want http://HOST:PORT/path, https://HOST:PORT/path or unix:/socket:/path", s)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Target{}, fmt.Errorf("%q: port %s: want 1 to 65535", s, port)
	}
	if host == "localhost" {
		host = "127.0.0.1" // no resolver, no IPv6 surprise
	}
	return Target{Network: "tcp", Address: net.JoinHostPort(host, port), Host: u.Host, Path: u.RequestURI(), TLS: u.Scheme == "https"}, nil
}

// ErrRemote is returned for an allowed address that is neither
// link-local nor, with the remote opt-in (Options.AllowRemote), the
// unicast address of another machine.
var ErrRemote = errors.New("not an address load may go to")

// CheckAllow checks the one address besides loopback that load may go
// to. Without remote it must be link-local (169.254.0.0/16, fe80::/10):
// the far end of a veth the caller created, which never leaves that
// link. With remote it may also be a routable unicast address: another
// machine's, named on purpose (compare -swarm-allow, load -allow-remote).
// Errors are *FieldError naming "allow" or "allow-remote".
func CheckAllow(allow netip.Addr, remote bool) error {
	switch {
	case !allow.IsValid():
		if remote {
			return fieldErr("allow-remote", "needs -allow, the one address it lets the load go to")
		}
		return nil
	case allow.IsLinkLocalUnicast():
		return nil
	case !remote:
		return fieldErr("allow", "%s: %w (only a link-local address, the far end of a namespace's veth, may be allowed; another machine's address needs -allow-remote as well)", allow, ErrNotLoopback)
	case !allow.IsGlobalUnicast():
		// Loopback needs no allowing; unspecified, multicast and
		// broadcast addresses are no one machine's.
		return fieldErr("allow", "%s: %w (with -allow-remote: the unicast address of another machine)", allow, ErrRemote)
	}
	return nil
}

// check refuses a target that leaves this machine: a TCP address must be
// a loopback one or allow, which CheckAllow(allow, remote) must accept.
func (t Target) check(allow netip.Addr, remote bool) error {
	if err := CheckAllow(allow, remote); err != nil {
		return err
	}
	switch t.Network {
	case "unix":
		return nil
	case "tcp":
	default:
		return fmt.Errorf("network %q: want tcp or unix", t.Network)
	}
	host, _, err := net.SplitHostPort(t.Address)
	if err != nil {
		return fmt.Errorf("address %q: %w", t.Address, err)
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !(a.IsLoopback() || (allow.IsValid() && a == allow)) {
		return fmt.Errorf("host %q: %w (load goes only to 127.0.0.0/8, ::1 or a unix socket)", host, ErrNotLoopback)
	}
	return nil
}

// onLink refuses a target at the allowed address unless that address is
// on a link of this network namespace: the far end of the veth the caller
// set up. A spec recorded inside a run's namespaces and run again after
// they are gone would otherwise send its connects to a link-local address
// outside them. Run and Probe check it as they start, not Validate: a
// spec is checked in one namespace and run in another. A routable address
// (allowed with -allow-remote) is not checked: it may lie behind a router
// (a cloud's /32 interfaces), and naming it was the opt-in.
func (t Target) onLink(allow netip.Addr) error {
	if !allow.IsValid() || !allow.IsLinkLocalUnicast() || t.Network != "tcp" {
		return nil
	}
	host, _, err := net.SplitHostPort(t.Address)
	if err != nil {
		return nil // check refused it already
	}
	if a, err := netip.ParseAddr(host); err != nil || a != allow {
		return nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return fmt.Errorf("listing this namespace's addresses: %w", err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.Contains(net.IP(allow.AsSlice())) {
			return nil
		}
	}
	return fieldErr("allow", "%s: on no link of this network namespace (its namespaces gone?): %w", allow, ErrNotLoopback)
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
	if t.TLS {
		return "https://" + t.Host + t.Path
	}
	return "http://" + t.Host + t.Path
}

// request returns the bytes of one GET, sent unchanged on every request:
// the same two lines wrk sends, and with closing the header that asks
// the server to close the connection after its answer (wrk's -H).
func (t Target) request(closing bool) []byte {
	if closing {
		return []byte("GET " + t.Path + " HTTP/1.1\r\nHost: " + t.Host + "\r\nConnection: close\r\n\r\n")
	}
	return []byte("GET " + t.Path + " HTTP/1.1\r\nHost: " + t.Host + "\r\n\r\n")
}

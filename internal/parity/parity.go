// Package parity checks that every topology answers with the same bytes, so
// that a comparison of their speed compares only the path a request takes.
// It speaks raw HTTP/1.1 over TCP, as wrk does (keep-alive, a GET then a HEAD
// on one connection), over TLS for the TLS topologies (Via.TLS), and keeps
// the exact header block a client receives: through nginx the Server value
// is "nginx" rather than "gophr" — the same length — and the block must be
// HeaderBlockSize bytes everywhere.
//
// Check holds every topology to cmd/hello's bytes; CheckPath (CheckWait)
// asks again with a query — a handler wait, handler work (WorkPath,
// WaitWorkPath) — and wants the same answer. FetchRequest asks for a path
// and headers of the caller's choosing, for a service of the user's own
// (a command target of internal/target), whose answers are its own:
// CheckSameAs compares every topology with that service's standalone
// answer — status, body, header names — instead of cmd/hello's bytes.
package parity

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/topology"
)

// HeaderBlockSize is the length of cmd/hello's header block — status line,
// headers and the blank line — on every topology (`curl -sI URL | wc -c`).
const HeaderBlockSize = hello.HeaderBlockLen

// maxBody bounds what is read of a body; the real one is 12 bytes.
const maxBody = 1 << 20

// Response is one response exactly as the client saw it.
type Response struct {
	// Status is the status code; StatusLine the line without CRLF.
	Status     int
	StatusLine string
	// Header is the header block: status line, headers, CRLF CRLF.
	Header []byte
	// HeaderNames are the header field names, canonical and sorted.
	HeaderNames []string
	// Fields maps each canonical name to its values.
	Fields http.Header
	// Body is the body (empty for HEAD) and BodySHA256 its hex digest.
	Body       []byte
	BodySHA256 string
}

// Result is what one topology returned.
type Result struct {
	Topology topology.Topology
	// Addr is the host:port requested.
	Addr string
	GET  Response
	HEAD Response
	// Err is set when the exchange failed; GET and HEAD may be partial.
	Err error
}

// Fetch requests every topology in ts at its address in l: a GET, then a
// HEAD on the same kept-alive connection. Each exchange is bounded by
// timeout (5s if zero) and by ctx. Failures land in Result.Err so that a
// table can show every row; Check reports them.
func Fetch(ctx context.Context, l topology.Layout, ts []topology.Topology, timeout time.Duration) []Result {
	return FetchVia(ctx, Via{}, l, ts, timeout)
}

// Via is how FetchVia reaches the servers.
type Via struct {
	// Dial makes the connections (nil: net.Dialer); from the client's
	// network namespace, so parity crosses the veth as the load does.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Allow is the one address besides loopback the layout may name: the
	// server end of a veth pair the run created itself, link-local.
	Allow netip.Addr
	// Remote lets Allow be a routable address, another machine's (a
	// cluster's server node, named with compare -swarm-allow): the same
	// rule as the load's (load.CheckAllow).
	Remote bool
	// TLS is the client's configuration for the topologies that speak
	// TLS (topology.TLS): the same raw HTTP/1.1 exchange, over TLS with
	// ALPN http/1.1. Nil refuses those topologies.
	TLS *tls.Config
}

// dialer is how t is reached: via.Dial, and a TLS handshake over it for
// the topologies that speak TLS.
func (via Via) dialer(t topology.Topology) (func(context.Context, string, string) (net.Conn, error), error) {
	if !t.TLS {
		return via.Dial, nil
	}
	if via.TLS == nil {
		return nil, errors.New("speaks TLS, and no client TLS configuration was given (Via.TLS)")
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := via.Dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := via.TLS.Clone()
		cfg.NextProtos = []string{"http/1.1"}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(c, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		return tc, nil
	}, nil
}

// Request is what FetchRequest asks every topology for.
type Request struct {
	// Path is the request target, path and query ("/" if empty); it must
	// start with '/'.
	Path string
	// Header holds request headers sent after Host, in sorted order (a
	// Host here replaces the default, the address dialled).
	Header http.Header
}

func (r Request) path() string {
	if r.Path == "" {
		return "/"
	}
	return r.Path
}

// check refuses what would not make a well-formed request line or
// header: a request smuggled into the path would not be the one compared.
func (r Request) check() error {
	p := r.path()
	if p[0] != '/' || strings.ContainsAny(p, " \r\n\t") {
		return fmt.Errorf("request path %q: want /PATH with no spaces or line breaks", p)
	}
	for k, vs := range r.Header {
		if k == "" || strings.ContainsAny(k, " :\r\n\t") {
			return fmt.Errorf("request header name %q is not a token", k)
		}
		for _, v := range vs {
			if strings.ContainsAny(v, "\r\n") {
				return fmt.Errorf("request header %s: value %q has a line break", k, v)
			}
		}
	}
	return nil
}

// line is the request as wrk sends it: HTTP/1.1, Host, the extra
// headers, keep-alive.
func (r Request) line(method, addr string) string {
	var b strings.Builder
	b.WriteString(method + " " + r.path() + " HTTP/1.1\r\n")
	host := addr
	if h := r.Header.Get("Host"); h != "" {
		host = h
	}
	b.WriteString("Host: " + host + "\r\n")
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		if textproto.CanonicalMIMEHeaderKey(k) != "Host" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return b.String()
}

// FetchVia is Fetch with the connections made as via says.
func FetchVia(ctx context.Context, via Via, l topology.Layout, ts []topology.Topology, timeout time.Duration) []Result {
	return FetchRequest(ctx, via, l, ts, Request{}, timeout)
}

// FetchRequest is FetchVia asking for req instead of "GET /" (and "HEAD
// /"): a service's own path and headers.
func FetchRequest(ctx context.Context, via Via, l topology.Layout, ts []topology.Topology, req Request, timeout time.Duration) []Result {
	if via.Dial == nil {
		var d net.Dialer
		via.Dial = d.DialContext
	}
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	out := make([]Result, 0, len(ts))
	for _, t := range ts {
		r := Result{Topology: t}
		r.Addr, r.Err = via.addr(l, t)
		if r.Err == nil {
			r.Err = req.check()
		}
		var dial func(context.Context, string, string) (net.Conn, error)
		if r.Err == nil {
			dial, r.Err = via.dialer(t)
		}
		if r.Err == nil {
			r.GET, r.HEAD, r.Err = exchange(ctx, dial, r.Addr, req, timeout)
		}
		switch {
		case r.Err != nil && r.Addr == "":
			r.Err = fmt.Errorf("%s: %w", t.Name, r.Err)
		case r.Err != nil:
			r.Err = fmt.Errorf("%s (%s): %w", t.Name, r.Addr, r.Err)
		}
		out = append(out, r)
	}
	return out
}

// addr is t's host:port in l, refused unless it is loopback or the
// address via allows.
func (via Via) addr(l topology.Layout, t topology.Topology) (string, error) {
	if err := load.CheckAllow(via.Allow, via.Remote); err != nil {
		return "", err
	}
	allow := via.Allow
	u, err := url.Parse(l.URL(t))
	if err != nil {
		return "", err
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", u.Host, err)
	}
	// The check below is the loopback-only rule for load: parity is the
	// first thing to touch an address before a run.
	ip := net.ParseIP(host)
	a, _ := netip.ParseAddr(host)
	if (ip == nil || !ip.IsLoopback()) && !(allow.IsValid() && a == allow) {
		return "", fmt.Errorf("address %q is not loopback", u.Host)
	}
	if port == "0" || port == "" {
		return "", fmt.Errorf("address %q has no port", u.Host)
	}
	return u.Host, nil
}

func exchange(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr string, r Request, timeout time.Duration) (get, head Response, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return get, head, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	br := bufio.NewReader(c)
	req := func(method string) string { return r.line(method, addr) }
	if _, err := io.WriteString(c, req("GET")); err != nil {
		return get, head, fmt.Errorf("sending GET: %w", err)
	}
	if get, err = ReadResponse(br, false); err != nil {
		return get, head, fmt.Errorf("GET: %w", err)
	}
	if _, err := io.WriteString(c, req("HEAD")); err != nil {
		return get, head, fmt.Errorf("sending HEAD on the kept-alive connection: %w", err)
	}
	if head, err = ReadResponse(br, true); err != nil {
		return get, head, fmt.Errorf("HEAD on the kept-alive connection: %w", err)
	}
	return get, head, nil
}

// ReadResponse reads one HTTP/1.1 response, keeping its header block
// byte for byte. A body is read by Content-Length or chunked encoding; a
// response to HEAD has none.
func ReadResponse(br *bufio.Reader, isHead bool) (Response, error) {
	var r Response
	var block bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		block.WriteString(line)
		if err != nil {
			r.Header = block.Bytes()
			return r, fmt.Errorf("reading header block after %d bytes: %w", block.Len(), err)
		}
		if line == "\r\n" || line == "\n" {
			break
		}
		if block.Len() > 64<<10 {
			return r, errors.New("header block over 64 KiB")
		}
	}
	r.Header = block.Bytes()
	lines := strings.Split(strings.TrimSuffix(block.String(), "\r\n\r\n"), "\r\n")
	r.StatusLine = lines[0]
	proto, rest, _ := strings.Cut(r.StatusLine, " ")
	code, _, _ := strings.Cut(rest, " ")
	if !strings.HasPrefix(proto, "HTTP/1.") || len(code) != 3 {
		return r, fmt.Errorf("malformed status line %q", r.StatusLine)
	}
	r.Status, _ = strconv.Atoi(code)
	r.Fields = http.Header{}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return r, fmt.Errorf("malformed header line %q", l)
		}
		r.Fields.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	for name := range r.Fields {
		r.HeaderNames = append(r.HeaderNames, name)
	}
	slices.Sort(r.HeaderNames)

	var body []byte
	var err error
	switch {
	case isHead || r.Status == 204 || r.Status == 304 || r.Status/100 == 1:
	case strings.EqualFold(r.Fields.Get("Transfer-Encoding"), "chunked"):
		body, err = io.ReadAll(io.LimitReader(httputil.NewChunkedReader(br), maxBody))
	case r.Fields.Get("Content-Length") != "":
		n, perr := strconv.ParseInt(r.Fields.Get("Content-Length"), 10, 64)
		if perr != nil || n < 0 || n > maxBody {
			return r, fmt.Errorf("bad Content-Length %q", r.Fields.Get("Content-Length"))
		}
		body = make([]byte, n)
		_, err = io.ReadFull(br, body)
	default:
		// Neither length nor chunking: the body runs to the close.
		body, err = io.ReadAll(io.LimitReader(br, maxBody))
	}
	if err != nil {
		return r, fmt.Errorf("reading body: %w", err)
	}
	r.Body = body
	sum := sha256.Sum256(body)
	r.BodySHA256 = hex.EncodeToString(sum[:])
	return r, nil
}

// Check returns nil only when every result has status 200 to GET and HEAD,
// a HeaderBlockSize-byte header block to both, the same header names, a
// Content-Length that matches, and the same GET body (and none to HEAD).
// Header names and bodies are compared among the results that are right on
// their own, with the first of them, so a broken topology is named once
// rather than blamed on the others. The error names each topology that
// differs and how.
func Check(rs []Result) error {
	if len(rs) == 0 {
		return errors.New("parity: no topologies checked")
	}
	var errs []error
	var ref *Result
	for i := range rs {
		r := &rs[i]
		name := r.Topology.Name
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		before := len(errs)
		for _, m := range []struct {
			method string
			resp   Response
		}{{"GET", r.GET}, {"HEAD", r.HEAD}} {
			if m.resp.Status != http.StatusOK {
				errs = append(errs, fmt.Errorf("%s: %s status %q, want 200", name, m.method, m.resp.StatusLine))
			}
			if len(m.resp.Header) != HeaderBlockSize {
				errs = append(errs, fmt.Errorf("%s: %s header block is %d bytes, want %d: %q", name, m.method, len(m.resp.Header), HeaderBlockSize, m.resp.Header))
			}
			if cl := m.resp.Fields.Get("Content-Length"); cl != strconv.Itoa(len(r.GET.Body)) {
				errs = append(errs, fmt.Errorf("%s: %s Content-Length %q, but the GET body is %d bytes", name, m.method, cl, len(r.GET.Body)))
			}
		}
		if len(r.HEAD.Body) != 0 {
			errs = append(errs, fmt.Errorf("%s: HEAD returned a %d-byte body", name, len(r.HEAD.Body)))
		}
		if !slices.Equal(r.GET.HeaderNames, r.HEAD.HeaderNames) {
			errs = append(errs, fmt.Errorf("%s: HEAD header names %v differ from GET's %v", name, r.HEAD.HeaderNames, r.GET.HeaderNames))
		}
		if len(errs) > before {
			continue // wrong on its own: comparing it would only add noise
		}
		if ref == nil {
			ref = r
			continue
		}
		if !slices.Equal(r.GET.HeaderNames, ref.GET.HeaderNames) {
			errs = append(errs, fmt.Errorf("%s: header names differ from %s's: %s", name, ref.Topology.Name, nameDiff(r.GET.HeaderNames, ref.GET.HeaderNames)))
		}
		if r.GET.BodySHA256 != ref.GET.BodySHA256 {
			errs = append(errs, fmt.Errorf("%s: body %q differs from %s's %q", name, clip(r.GET.Body), ref.Topology.Name, clip(ref.GET.Body)))
		}
	}
	return errors.Join(errs...)
}

func nameDiff(got, want []string) string {
	var parts []string
	for _, n := range got {
		if !slices.Contains(want, n) {
			parts = append(parts, "extra "+n)
		}
	}
	for _, n := range want {
		if !slices.Contains(got, n) {
			parts = append(parts, "missing "+n)
		}
	}
	return strings.Join(parts, ", ")
}

func clip(b []byte) []byte {
	if len(b) > 64 {
		return append(b[:64:64], "..."...)
	}
	return b
}

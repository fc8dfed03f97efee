package parity

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/topology"
)

// captured reads testdata/NAME.http — a GET response then a HEAD response
// as a client received them on one connection (saved by the integration
// test with -update) — into a Result.
func captured(t *testing.T, name string) Result {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".http"))
	require.NoError(t, err)
	br := bufio.NewReader(bytes.NewReader(b))
	r := Result{Topology: topology.Topology{Name: name}, Addr: "127.0.0.1:1"}
	r.GET, err = ReadResponse(br, false)
	require.NoError(t, err)
	r.HEAD, err = ReadResponse(br, true)
	require.NoError(t, err)
	_, err = br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "nothing after the HEAD response")
	return r
}

func TestReadResponseCaptured(t *testing.T) {
	for _, tp := range topology.All() {
		t.Run(tp.Name, func(t *testing.T) {
			r := captured(t, tp.Name)
			for _, resp := range []Response{r.GET, r.HEAD} {
				assert.Equal(t, 200, resp.Status)
				assert.Equal(t, "HTTP/1.1 200 OK", resp.StatusLine)
				assert.Len(t, resp.Header, HeaderBlockSize)
				assert.True(t, bytes.HasSuffix(resp.Header, []byte("\r\n\r\n")))
				assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, resp.HeaderNames)
			}
			assert.Equal(t, "Hello World\n", string(r.GET.Body))
			assert.Equal(t, "d2a84f4b8b650937ec8f73cd8be2c74add5a911ba64df27458ed8229da804a26", r.GET.BodySHA256)
			assert.Empty(t, r.HEAD.Body)
		})
	}
}

func TestCheckCaptured(t *testing.T) {
	var all []Result
	for _, tp := range topology.All() {
		all = append(all, captured(t, tp.Name))
	}
	require.NoError(t, Check(all))
	assert.EqualError(t, Check(nil), "parity: no topologies checked")

	// nginx serving a file with its defaults adds Last-Modified, ETag and
	// Accept-Ranges: 229 bytes, not 141.
	untuned := captured(t, "nginx-static-untuned")
	err := Check([]Result{all[0], untuned})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nginx-static-untuned: GET header block is 229 bytes, want 141")
	assert.Contains(t, err.Error(), "nginx-static-untuned: HEAD header block is 229 bytes, want 141")

	// nginx with no upstream behind it answers 502 with its own page.
	bad := captured(t, "nginx-http-502")
	err = Check([]Result{all[0], bad, all[4]})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `nginx-http-502: GET status "HTTP/1.1 502 Bad Gateway", want 200`)
	assert.NotContains(t, err.Error(), "nginx-return", "the reference is compared with standalone, not the 502")
}

func TestCheckNamesTheDifference(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *Result)
		want string
	}{
		{"exchange failed", func(r *Result) { r.Err = errors.New("nginx-http (127.0.0.1:1): connection refused") }, "nginx-http (127.0.0.1:1): connection refused"},
		{"status", func(r *Result) { r.HEAD.Status, r.HEAD.StatusLine = 404, "HTTP/1.1 404 Not Found" }, `nginx-http: HEAD status "HTTP/1.1 404 Not Found", want 200`},
		{"longer header block", func(r *Result) { r.GET.Header = append([]byte("X"), r.GET.Header...) }, "nginx-http: GET header block is 142 bytes, want 141"},
		{"other header names", func(r *Result) {
			r.GET.HeaderNames = []string{"Connection", "Content-Length", "Content-Type", "Date", "Etag"}
		}, "nginx-http: HEAD header names [Connection Content-Length Content-Type Date Server] differ from GET's"},
		{"other header names on both", func(r *Result) {
			names := []string{"Connection", "Content-Length", "Content-Type", "Date", "Etag"}
			r.GET.HeaderNames, r.HEAD.HeaderNames = names, names
		}, "nginx-http: header names differ from standalone's: extra Etag, missing Server"},
		{"other body", func(r *Result) {
			r.GET.Body, r.GET.BodySHA256 = []byte("Hello World!"), "x"
		}, `nginx-http: body "Hello World!" differs from standalone's "Hello World\n"`},
		{"body to HEAD", func(r *Result) { r.HEAD.Body = []byte("Hello World\n") }, "nginx-http: HEAD returned a 12-byte body"},
		{"Content-Length off", func(r *Result) {
			r.GET.Body, r.GET.BodySHA256 = []byte("Hello World\n!"), "y"
		}, `nginx-http: GET Content-Length "12", but the GET body is 13 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := []Result{captured(t, "standalone"), captured(t, "nginx-http"), captured(t, "nginx-return")}
			tc.edit(&rs[1])
			err := Check(rs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "nginx-return", "only the changed topology is named")
		})
	}
}

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		in     string
		head   bool
		status int
		body   string
		err    string
	}{
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n7\r\n World\n\r\n0\r\n\r\n", status: 200, body: "Hello World\n"},
		{name: "to the close", in: "HTTP/1.0 200 OK\r\n\r\nHello World\n", status: 200, body: "Hello World\n"},
		{name: "HEAD has no body", in: "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", head: true, status: 200},
		{name: "204", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "truncated header", in: "HTTP/1.1 200 OK\r\nServer: x\r\n", err: "reading header block after 28 bytes"},
		{name: "not HTTP", in: "SSH-2.0-OpenSSH\r\n\r\n", err: `malformed status line "SSH-2.0-OpenSSH"`},
		{name: "bad header", in: "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", err: `malformed header line "no colon"`},
		{name: "bad length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: `bad Content-Length "-1"`},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello", err: "reading body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ReadResponse(bufio.NewReader(strings.NewReader(tc.in)), tc.head)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, r.Status)
			assert.Equal(t, tc.body, string(r.Body))
		})
	}
}

func TestFetchRefusesNonLoopback(t *testing.T) {
	l := topology.DefaultLayout("/tmp")
	l.HTTP = "10.1.2.3:8080"
	sa, err := topology.Lookup("standalone")
	require.NoError(t, err)
	rs := Fetch(context.Background(), l, []topology.Topology{sa}, 0)
	require.Len(t, rs, 1)
	require.Error(t, rs[0].Err)
	assert.Contains(t, rs[0].Err.Error(), `standalone: address "10.1.2.3:8080" is not loopback`)
}

// TestFetchVia checks that the one allowed address is fetched through the
// given dialer, and that any other non-loopback host still is refused.
func TestFetchVia(t *testing.T) {
	sa, err := topology.Lookup("standalone")
	require.NoError(t, err)
	l := topology.DefaultLayout("/tmp")
	l.Host = "169.254.77.1"
	var dialled []string
	via := Via{
		Allow: netip.MustParseAddr("169.254.77.1"),
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			return nil, errors.New("no veth in a unit test")
		},
	}
	rs := FetchVia(context.Background(), via, l, []topology.Topology{sa}, 0)
	require.Len(t, rs, 1)
	assert.ErrorContains(t, rs[0].Err, "no veth in a unit test")
	assert.Equal(t, []string{"169.254.77.1:8080"}, dialled)

	l.Host = "169.254.77.2"
	rs = FetchVia(context.Background(), via, l, []topology.Topology{sa}, 0)
	assert.ErrorContains(t, rs[0].Err, "is not loopback")
	assert.Len(t, dialled, 1, "a host other than the allowed one is never dialled")
}

// TestFetchViaRemote: a routable address is fetched only when Via names
// it and says Remote, as the load's -allow-remote; the unit test's dialer
// records the address and sends nothing.
func TestFetchViaRemote(t *testing.T) {
	sa, err := topology.Lookup("standalone")
	require.NoError(t, err)
	l := topology.DefaultLayout("/tmp")
	l.Host = "10.0.0.2"
	for _, tc := range []struct {
		name   string
		allow  string
		remote bool
		err    string // "" when dialled
	}{
		{"named and remote", "10.0.0.2", true, ""},
		{"named, not remote", "10.0.0.2", false, "allow: 10.0.0.2: not a loopback address"},
		{"remote, another address", "10.0.0.3", true, `address "10.0.0.2:8080" is not loopback`},
		{"remote, none named", "", true, "allow-remote: needs -allow"},
		{"remote, multicast", "224.0.0.1", true, "not an address load may go to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dialled []string
			via := Via{Remote: tc.remote, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialled = append(dialled, addr)
				return nil, errors.New("nothing is sent in a unit test")
			}}
			if tc.allow != "" {
				via.Allow = netip.MustParseAddr(tc.allow)
			}
			rs := FetchVia(context.Background(), via, l, []topology.Topology{sa}, 0)
			require.Len(t, rs, 1)
			werr := CheckPath(context.Background(), via, l, Result{Topology: sa}, WaitPath, 0)
			if tc.err == "" {
				assert.ErrorContains(t, rs[0].Err, "nothing is sent in a unit test")
				assert.ErrorContains(t, werr, "nothing is sent in a unit test")
				assert.Equal(t, []string{"10.0.0.2:8080", "10.0.0.2:8080"}, dialled)
				return
			}
			assert.ErrorContains(t, rs[0].Err, tc.err)
			assert.ErrorContains(t, werr, tc.err)
			assert.Empty(t, dialled, "a refused address is never dialled")
		})
	}
}

func TestRequestLine(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
		err  string
	}{
		{"default", Request{}, "GET / HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", ""},
		{"path and query", Request{Path: "/api/x?work=200us"}, "GET /api/x?work=200us HTTP/1.1\r\nHost: 127.0.0.1:1\r\n\r\n", ""},
		{"headers sorted, Host replaced", Request{Path: "/a", Header: map[string][]string{
			"X-B": {"2"}, "Accept": {"application/json"}, "Host": {"api.test"}}},
			"GET /a HTTP/1.1\r\nHost: api.test\r\nAccept: application/json\r\nX-B: 2\r\n\r\n", ""},
		{"relative path", Request{Path: "api"}, "", `request path "api"`},
		{"space in path", Request{Path: "/a b"}, "", "no spaces"},
		{"smuggled request", Request{Path: "/ HTTP/1.1\r\n\r\nGET /x"}, "", "line breaks"},
		{"bad header name", Request{Header: map[string][]string{"X Y": {"1"}}}, "", `header name "X Y"`},
		{"header value with a line break", Request{Header: map[string][]string{"X": {"1\r\nY: 2"}}}, "", "has a line break"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.check()
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, tt.req.line("GET", "127.0.0.1:1"))
		})
	}
}

// TestFetchOverTLS: a TLS topology gets the same raw HTTP/1.1 exchange
// over a TLS handshake with ALPN http/1.1, verified against the server's
// certificate; without a client configuration it is refused undialled.
func TestFetchOverTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "Hello World\n")
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	st, err := topology.Lookup("standalone-tls")
	require.NoError(t, err)
	l := topology.DefaultLayout("/tmp")
	l.HTTPS = srv.Listener.Addr().String()

	for _, tc := range []struct {
		name string
		via  Via
		err  string
	}{
		{"verified", Via{TLS: &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}}, ""},
		{"unknown authority", Via{TLS: &tls.Config{}}, "TLS handshake: tls: failed to verify certificate"},
		{"no client configuration", Via{}, "speaks TLS, and no client TLS configuration was given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := FetchVia(context.Background(), tc.via, l, []topology.Topology{st}, 0)
			require.Len(t, rs, 1)
			if tc.err != "" {
				assert.ErrorContains(t, rs[0].Err, tc.err)
				return
			}
			require.NoError(t, rs[0].Err)
			assert.Equal(t, 200, rs[0].GET.Status)
			assert.Equal(t, "Hello World\n", string(rs[0].GET.Body))
			assert.Equal(t, "HTTP/1.1", rs[0].GET.Fields.Get("X-Proto"), "ALPN http/1.1 even where the server offers h2")
			assert.Equal(t, 200, rs[0].HEAD.Status, "the HEAD on the kept-alive TLS connection")
			assert.NoError(t, CheckPath(context.Background(), tc.via, l, rs[0], WaitPath, 0), "GET with a query, over TLS too")
		})
	}
}

package fastcgi

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/fcgi"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

// serveStdlib runs net/http/fcgi on a loopback listener.
func serveStdlib(t testing.TB, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fcgi.Serve(l, h)
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}

// serveFast runs s on l until the test ends.
func serveFast(t testing.TB, s *Server, l net.Listener) string {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
			s.Close()
		}
		if err := <-done; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return l.Addr().String()
}

func listenTCP(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	return l
}

func listenUnix(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(testenv.ShortDir(t), "s"))
	require.NoError(t, err)
	return l
}

// clientConn is one kept-alive connection.
type clientConn struct {
	c  net.Conn
	rr *recordReader
}

func dial(t testing.TB, network, addr string) *clientConn {
	t.Helper()
	c, err := net.Dial(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &clientConn{c: c, rr: newRecordReader(c)}
}

func (cc *clientConn) do(t testing.TB, req []byte, id uint16) result {
	t.Helper()
	cc.c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := cc.c.Write(req)
	require.NoError(t, err)
	var res result
	require.NoError(t, cc.rr.readResult(id, &res))
	return res
}

type conformanceCase struct {
	name   string
	params []pair
	body   []byte
}

// with replaces or adds parameters.
func with(base []pair, extra ...pair) []pair {
	out := append([]pair(nil), base...)
	for _, e := range extra {
		found := false
		for i := range out {
			if out[i].name == e.name {
				out[i].value = e.value
				found = true
			}
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

func without(base []pair, names ...string) []pair {
	var out []pair
	for _, p := range base {
		keep := true
		for _, n := range names {
			if p.name == n {
				keep = false
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}

func conformanceCorpus() []conformanceCase {
	get := func(uri string) []pair { return nginxParams("GET", uri) }
	post := func(uri, ctype string, body []byte) []pair {
		return with(nginxParams("POST", uri),
			pair{"CONTENT_TYPE", ctype}, pair{"CONTENT_LENGTH", strconv.Itoa(len(body))})
	}
	form := []byte("a=1&b=two&c=%20three")
	big := bytes.Repeat([]byte("upload-"), 30000) // 210 KB: streamed
	return []conformanceCase{
		{name: "hello", params: get("/hello")},
		{name: "echo", params: get("/")},
		{name: "query", params: get("/search?q=go+fcgi&lang=en&empty=")},
		{name: "force query", params: get("/p?")},
		{name: "escaped path", params: get("/a%20b/c%2Fd")},
		{name: "path with space", params: get("/a b")},
		{name: "path with parens", params: get("/wiki/Go_(language)")},
		{name: "double slash", params: get("//x//y")},
		{name: "fragment", params: get("/p#frag")},
		{name: "bad escape", params: get("/%zz")},
		{name: "asterisk", params: with(nginxParams("OPTIONS", "*"), pair{"REQUEST_URI", "*"})},
		{name: "head", params: nginxParams("HEAD", "/")},
		{name: "head hello", params: nginxParams("HEAD", "/hello")},
		{name: "post form", params: post("/form", "application/x-www-form-urlencoded", form), body: form},
		{name: "post big", params: post("/upload", "application/octet-stream", big), body: big},
		{name: "post no length", params: without(nginxParams("POST", "/"), "CONTENT_LENGTH"), body: []byte("abc")},
		{name: "headers", params: with(get("/"),
			pair{"HTTP_COOKIE", "a=1; b=2"},
			pair{"HTTP_X_FORWARDED_FOR", "10.0.0.1, 10.0.0.2"},
			pair{"HTTP_X_CUSTOM_THING", "v"},
			pair{"HTTP_ACCEPT_ENCODING", "gzip"},
			pair{"HTTP_CONTENT_TYPE", "text/x-dup"},
			pair{"CONTENT_TYPE", "text/plain"},
			pair{"HTTP_", "empty name"},
			pair{"HTTP_lower_case", "x"},
		)},
		{name: "large params", params: with(get("/"),
			pair{"HTTP_X_LARGE", strings.Repeat("L", 40000)},
			pair{"HTTP_X_LARGE_2", strings.Repeat("M", 300)},
		)},
		{name: "https", params: with(get("/secure"), pair{"HTTPS", "on"}, pair{"REQUEST_SCHEME", "https"})},
		{name: "https 1", params: with(get("/secure"), pair{"HTTPS", "1"})},
		{name: "https off", params: with(get("/secure"), pair{"HTTPS", "off"})},
		{name: "no host", params: without(get("/nohost?x=1"), "HTTP_HOST")},
		{name: "host with port", params: with(get("/"), pair{"HTTP_HOST", "Example.COM:8080"})},
		{name: "ipv6 host", params: with(get("/"), pair{"HTTP_HOST", "[::1]:8080"})},
		{name: "bad host", params: with(get("/"), pair{"HTTP_HOST", "a b"})},
		{name: "ipv6 remote", params: with(get("/"), pair{"REMOTE_ADDR", "::1"}, pair{"REMOTE_PORT", "5"})},
		{name: "bad remote port", params: with(get("/"), pair{"REMOTE_PORT", "x"})},
		{name: "no remote", params: without(get("/"), "REMOTE_ADDR", "REMOTE_PORT")},
		{name: "script name uri", params: with(without(get("/"), "REQUEST_URI"),
			pair{"SCRIPT_NAME", "/app"}, pair{"PATH_INFO", "/x/y"}, pair{"QUERY_STRING", "k=v"})},
		{name: "http 1.0", params: with(get("/"), pair{"SERVER_PROTOCOL", "HTTP/1.0"})},
		{name: "included", params: with(get("/"), pair{"SERVER_PROTOCOL", "INCLUDED"})},
		{name: "no method", params: without(get("/"), "REQUEST_METHOD")},
		{name: "bad protocol", params: with(get("/"), pair{"SERVER_PROTOCOL", "SPDY/3"})},
		{name: "bad content length", params: with(get("/"), pair{"CONTENT_LENGTH", "12x"})},
		{name: "html sniff", params: get("/html")},
		{name: "empty response", params: get("/empty")},
		{name: "not found", params: get("/notfound")},
		{name: "not modified", params: get("/notmodified")},
		{name: "teapot", params: get("/teapot")},
		{name: "odd code", params: get("/oddcode")},
		{name: "weird headers", params: get("/weird-headers")},
		{name: "flush", params: get("/flush")},
		{name: "big response", params: get("/big?n=300000")},
		{name: "duplicate params", params: append(get("/"), pair{"HTTP_USER_AGENT", "second"}, pair{"REQUEST_METHOD", "PUT"})},
	}
}

// TestConformance sends the same requests to net/http/fcgi and to this
// package, over TCP and a unix socket, and wants the same responses.
func TestConformance(t *testing.T) {
	h := http.HandlerFunc(echoHandler)
	std := dial(t, "tcp", serveStdlib(t, h))
	fastTCP := dial(t, "tcp", serveFast(t, &Server{Handler: h}, listenTCP(t)))
	fastUnix := dial(t, "unix", serveFast(t, &Server{Handler: h}, listenUnix(t)))
	for _, tc := range conformanceCorpus() {
		t.Run(tc.name, func(t *testing.T) {
			req := encodeRequest(1, true, tc.params, tc.body)
			want := std.do(t, req, 1)
			for _, fast := range []*clientConn{fastTCP, fastUnix} {
				got := fast.do(t, req, 1)
				assert.Equal(t, want.protocolStatus, got.protocolStatus)
				assert.Equal(t, string(want.stderr), string(got.stderr), "stderr")
				wr, err := parseCGI(want.stdout)
				require.NoError(t, err)
				gr, err := parseCGI(got.stdout)
				require.NoError(t, err)
				assert.Equal(t, wr.status, gr.status)
				assert.Equal(t, wr.withoutDate(), gr.withoutDate())
				assert.Equal(t, len(wr.header["Date"]), len(gr.header["Date"]))
				for _, d := range gr.header["Date"] {
					_, err := http.ParseTime(d)
					assert.NoError(t, err, "Date %q", d)
				}
				assert.Equal(t, string(wr.body), string(gr.body))
			}
		})
	}
}

// TestHelloHeaderBlock pins the hello response: the header block nginx
// turns into the 141-byte one clients see.
func TestHelloHeaderBlock(t *testing.T) {
	fast := dial(t, "tcp", serveFast(t, &Server{Handler: http.HandlerFunc(helloHandler)}, listenTCP(t)))
	res := fast.do(t, encodeRequest(1, true, nginxParams("GET", "/"), nil), 1)
	r, err := parseCGI(res.stdout)
	require.NoError(t, err)
	assert.Equal(t, "200 OK", r.status)
	require.Len(t, r.lines, 5)
	assert.Equal(t, []string{"Connection: keep-alive", "Content-Length: 12", "Content-Type: text/plain"}, r.lines[:3])
	assert.True(t, strings.HasPrefix(r.lines[3], "Date: "))
	assert.Equal(t, "Server: gophr", r.lines[4])
	assert.Equal(t, "Hello World\n", string(r.body))
	assert.Empty(t, res.stderr)
	assert.Empty(t, res.others)
}

package fastcgi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startFast serves s on a loopback port for the test's duration.
func startFast(t *testing.T, s *Server) string {
	t.Helper()
	if s.Handler == nil {
		s.Handler = http.HandlerFunc(echoHandler)
	}
	return serveFast(t, s, listenTCP(t))
}

// expectClosed wants the server to close the connection without sending
// anything more.
func expectClosed(t *testing.T, cc *clientConn) {
	t.Helper()
	cc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, _, err := cc.rr.next()
	require.Error(t, err, "got a record %+v instead of a closed connection", h)
	assert.True(t, errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset"), "%v", err)
}

// expectHello sends a hello request on cc and wants the hello response.
func expectHello(t *testing.T, cc *clientConn, id uint16) {
	t.Helper()
	res := cc.do(t, encodeRequest(id, true, nginxParams("GET", "/hello"), nil), id)
	assert.Contains(t, string(res.stdout), "Hello World\n")
	assert.Equal(t, uint8(statusRequestComplete), res.protocolStatus)
}

func (cc *clientConn) send(t *testing.T, b []byte) {
	t.Helper()
	_, err := cc.c.Write(b)
	require.NoError(t, err)
}

// nextRecord reads one record with a deadline, copying its content.
func (cc *clientConn) nextRecord(t *testing.T) (header, []byte) {
	t.Helper()
	cc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, content, err := cc.rr.next()
	require.NoError(t, err)
	return h, append([]byte(nil), content...)
}

func TestProtocolErrorsCloseTheConnection(t *testing.T) {
	addr := startFast(t, &Server{})
	begin := appendBegin(nil, 1, true)
	cases := map[string][]byte{
		"bad version":            {2, typeBeginRequest, 0, 1, 0, 8, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0},
		"version zero":           make([]byte, 8),
		"short begin body":       appendRecord(nil, typeBeginRequest, 1, []byte{0, 1, 1}),
		"long begin body":        appendRecord(nil, typeBeginRequest, 1, make([]byte, 16)),
		"begin for an id in use": append(append([]byte(nil), begin...), begin...),
		"begin with id 0":        encodeRequest(0, true, nginxParams("GET", "/hello"), nil),
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			cc := dial(t, "tcp", addr)
			cc.send(t, b)
			expectClosed(t, cc)
		})
	}
	// The server goes on serving other connections.
	expectHello(t, dial(t, "tcp", addr), 1)
}

func TestTruncatedRecords(t *testing.T) {
	addr := startFast(t, &Server{})
	full := encodeRequest(1, true, nginxParams("GET", "/hello"), nil)
	for _, n := range []int{1, 7, 8, 9, 20, 30, len(full) - 1} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			cc := dial(t, "tcp", addr)
			cc.send(t, full[:n])
			require.NoError(t, cc.c.(*net.TCPConn).CloseWrite())
			expectClosed(t, cc)
		})
	}
}

func TestOversizedPairLengths(t *testing.T) {
	addr := startFast(t, &Server{})
	cc := dial(t, "tcp", addr)
	// A name claiming 2^31-1 bytes: the pair is malformed, parsing stops
	// there, and with no REQUEST_METHOD the answer is net/http/fcgi's 500.
	params := appendPair(nil, "REQUEST_METHOD", "GET")
	params = append([]byte{0xff, 0xff, 0xff, 0xff, 0x01}, params...)
	b := appendBegin(nil, 1, true)
	b = appendRecord(b, typeParams, 1, params)
	b = appendRecord(b, typeParams, 1, nil)
	b = appendStdin(b, 1, nil)
	res := cc.do(t, b, 1)
	r, err := parseCGI(res.stdout)
	require.NoError(t, err)
	assert.Equal(t, "500 Internal Server Error", r.status)
	assert.Equal(t, "cgi: no REQUEST_METHOD in environment", string(res.stderr))
	expectHello(t, cc, 1)
}

func TestLimits(t *testing.T) {
	s := &Server{MaxParamsBytes: 4096, MaxParams: 40}
	addr := startFast(t, s)
	cases := map[string][]pair{
		"params bytes": with(nginxParams("GET", "/"), pair{"HTTP_X_BIG", strings.Repeat("x", 5000)}),
		"param count": func() []pair {
			p := nginxParams("GET", "/")
			for i := range 40 {
				p = append(p, pair{"HTTP_X_" + strconv.Itoa(i), "v"})
			}
			return p
		}(),
	}
	for name, params := range cases {
		t.Run(name, func(t *testing.T) {
			cc := dial(t, "tcp", addr)
			res := cc.do(t, encodeRequest(1, true, params, []byte("body")), 1)
			r, err := parseCGI(res.stdout)
			require.NoError(t, err)
			assert.Equal(t, "431 Request Header Fields Too Large", r.status)
			assert.NotEmpty(t, res.stderr)
			if name == "params bytes" {
				// Closed: the peer may be flooding.
				expectClosed(t, cc)
				return
			}
			// The connection stays usable.
			expectHello(t, cc, 1)
		})
	}
}

func TestUnknownRole(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{}))
	cc.send(t, appendRecord(nil, typeBeginRequest, 7, []byte{0, 2, 1, 0, 0, 0, 0, 0}))
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint8(typeEndRequest), h.typ)
	assert.Equal(t, uint16(7), h.id)
	assert.Equal(t, []byte{0, 0, 0, 0, statusUnknownRole, 0, 0, 0}, content)
	// Records for the refused id are ignored.
	cc.send(t, appendParams(nil, 7, nginxParams("GET", "/")))
	expectHello(t, cc, 1)
}

func TestGetValues(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{MaxConns: 50, MaxRequestsPerConn: 1}))
	var q []byte
	for _, n := range []string{"FCGI_MAX_CONNS", "FCGI_MAX_REQS", "FCGI_MPXS_CONNS", "FCGI_UNKNOWN"} {
		q = appendPair(q, n, "")
	}
	cc.send(t, appendRecord(nil, typeGetValues, 0, q))
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint8(typeGetValuesResult), h.typ)
	assert.Equal(t, uint16(0), h.id)
	assert.Equal(t, map[string]string{"FCGI_MAX_CONNS": "50", "FCGI_MAX_REQS": "50", "FCGI_MPXS_CONNS": "0"}, stdlibParams(content))
	expectHello(t, cc, 1)
}

func TestUnknownType(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{}))
	for _, typ := range []uint8{0, 12, 200} {
		cc.send(t, appendRecord(nil, typ, 0, []byte("whatever")))
		h, content := cc.nextRecord(t)
		assert.Equal(t, uint8(typeUnknownType), h.typ)
		assert.Equal(t, []byte{typ, 0, 0, 0, 0, 0, 0, 0}, content)
	}
	// Types that only travel to the web server, and DATA, are ignored.
	for _, typ := range []uint8{typeEndRequest, typeStdout, typeStderr, typeData, typeGetValuesResult, typeUnknownType} {
		cc.send(t, appendRecord(nil, typ, 1, []byte("x")))
	}
	expectHello(t, cc, 1)
}

func TestCantMultiplex(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{}))
	cc.send(t, appendBegin(nil, 1, true))
	cc.send(t, appendBegin(nil, 2, true))
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint8(typeEndRequest), h.typ)
	assert.Equal(t, uint16(2), h.id)
	assert.Equal(t, uint8(statusCantMPXConn), content[4])
	// Request 1 is unaffected; stray records for 2 are ignored.
	b := appendParams(nil, 2, nginxParams("GET", "/"))
	b = appendParams(b, 1, nginxParams("GET", "/hello"))
	b = appendStdin(b, 2, nil)
	b = appendStdin(b, 1, nil)
	cc.send(t, b)
	var res result
	require.NoError(t, cc.rr.readResult(1, &res))
	assert.Contains(t, string(res.stdout), "Hello World\n")
	assert.Empty(t, res.others)
}

func TestMultiplexed(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{MaxRequestsPerConn: 2}))
	// Two requests interleaved record by record; the third is refused.
	body := []byte("second body")
	b := appendBegin(nil, 1, true)
	b = appendBegin(b, 2, true)
	b = appendBegin(b, 3, true)
	b = appendParams(b, 2, with(nginxParams("POST", "/two"), pair{"CONTENT_LENGTH", strconv.Itoa(len(body))}))
	b = appendParams(b, 1, nginxParams("GET", "/one"))
	b = appendRecord(b, typeStdin, 2, body)
	b = appendStdin(b, 1, nil)
	b = appendStdin(b, 2, nil)
	cc.send(t, b)
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint16(3), h.id)
	assert.Equal(t, uint8(statusOverloaded), content[4])
	var one, two result
	require.NoError(t, cc.rr.readResult(1, &one))
	require.NoError(t, cc.rr.readResult(2, &two))
	assert.Contains(t, string(one.stdout), `path="/one"`)
	assert.Contains(t, string(two.stdout), `path="/two"`)
	assert.Contains(t, string(two.stdout), "body=11 bytes")
}

func TestAbortBeforeStdinEnds(t *testing.T) {
	cc := dial(t, "tcp", startFast(t, &Server{}))
	b := appendBegin(nil, 1, true)
	b = appendParams(b, 1, nginxParams("POST", "/"))
	b = appendRecord(b, typeStdin, 1, []byte("partial"))
	b = appendRecord(b, typeAbortRequest, 1, nil)
	cc.send(t, b)
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint8(typeEndRequest), h.typ, "no output for an aborted request")
	assert.Equal(t, uint8(statusRequestComplete), content[4])
	// Abort for an unknown id is ignored.
	cc.send(t, appendRecord(nil, typeAbortRequest, 9, nil))
	expectHello(t, cc, 1)
}

func TestKeepConnOff(t *testing.T) {
	addr := startFast(t, &Server{})
	for _, body := range [][]byte{nil, bytes.Repeat([]byte("b"), 200<<10)} {
		cc := dial(t, "tcp", addr)
		p := with(nginxParams("POST", "/"), pair{"CONTENT_LENGTH", strconv.Itoa(len(body))})
		res := cc.do(t, encodeRequest(1, false, p, body), 1)
		assert.Contains(t, string(res.stdout), "body="+strconv.Itoa(len(body))+" bytes")
		expectClosed(t, cc)
	}
}

// TestKeepAliveRequestIDReuse is nginx's pattern with fastcgi_keep_conn
// on: request after request with id 1 on one connection.
func TestKeepAliveRequestIDReuse(t *testing.T) {
	n := 5000
	if testing.Short() {
		n = 500
	}
	var served int
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++ // one connection: requests are served one after another
		io.WriteString(w, r.URL.RawQuery)
	})}
	cc := dial(t, "tcp", startFast(t, s))
	var res result
	for i := range n {
		q := strconv.Itoa(i)
		cc.send(t, encodeRequest(1, true, nginxParams("GET", "/?"+q), nil))
		require.NoError(t, cc.rr.readResult(1, &res))
		r, err := parseCGI(res.stdout)
		require.NoError(t, err)
		require.Equal(t, q, string(r.body))
	}
	assert.Equal(t, n, served)
}

func TestStreamedBody(t *testing.T) {
	s := &Server{MaxBufferedBody: 1024}
	cc := dial(t, "tcp", startFast(t, s))
	for _, size := range []int{1024, 1025, 70000, 1 << 20} {
		body := bytes.Repeat([]byte("0123456789"), size/10+1)[:size]
		p := with(nginxParams("PUT", "/up"), pair{"CONTENT_LENGTH", strconv.Itoa(size)})
		res := cc.do(t, encodeRequest(1, true, p, body), 1)
		r, err := parseCGI(res.stdout)
		require.NoError(t, err)
		assert.Contains(t, string(r.body), "body="+strconv.Itoa(size)+" bytes err=<nil> sum="+strconv.FormatUint(uint64(sum(body)), 16))
	}
	// A handler that ignores a streamed body: the rest is discarded.
	body := bytes.Repeat([]byte("x"), 300<<10)
	res := cc.do(t, encodeRequest(1, true, nginxParams("POST", "/hello"), body), 1)
	assert.Contains(t, string(res.stdout), "Hello World\n")
	expectHello(t, cc, 1)
}

func TestStreamedAbort(t *testing.T) {
	started := make(chan struct{})
	gotErr := make(chan error, 2)
	s := &Server{MaxBufferedBody: 16, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hello" {
			helloHandler(w, r)
			return
		}
		close(started)
		<-r.Context().Done()
		_, err := io.ReadAll(r.Body)
		gotErr <- err
		_, err = w.Write([]byte("too late"))
		gotErr <- err
	})}
	cc := dial(t, "tcp", startFast(t, s))
	b := appendBegin(nil, 1, true)
	b = appendParams(b, 1, nginxParams("POST", "/"))
	b = appendRecord(b, typeStdin, 1, bytes.Repeat([]byte("y"), 100))
	cc.send(t, b)
	<-started
	cc.send(t, appendRecord(nil, typeAbortRequest, 1, nil))
	h, content := cc.nextRecord(t)
	assert.Equal(t, uint8(typeEndRequest), h.typ)
	assert.Equal(t, uint8(statusRequestComplete), content[4])
	assert.ErrorIs(t, <-gotErr, ErrRequestAborted)
	assert.Error(t, <-gotErr)
	expectHello(t, cc, 1)
}

func TestStdinBeforeParamsEnd(t *testing.T) {
	// net/http/fcgi serves such a request with no parameters: a 500.
	cc := dial(t, "tcp", startFast(t, &Server{}))
	b := appendBegin(nil, 1, true)
	var enc []byte
	for _, p := range nginxParams("GET", "/") {
		enc = appendPair(enc, p.name, p.value)
	}
	b = appendRecord(b, typeParams, 1, enc)
	b = appendStdin(b, 1, nil)
	res := cc.do(t, b, 1)
	r, err := parseCGI(res.stdout)
	require.NoError(t, err)
	assert.Equal(t, "500 Internal Server Error", r.status)
	assert.Equal(t, "cgi: no REQUEST_METHOD in environment", string(res.stderr))
}

func TestHandlerPanic(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	s := &Server{
		ErrorLog: log.New(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return logged.Write(p)
		}), "", 0),
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				w.Write([]byte("partial"))
				panic("boom")
			}
			helloHandler(w, r)
		}),
	}
	addr := startFast(t, s)
	cc := dial(t, "tcp", addr)
	cc.send(t, encodeRequest(1, true, nginxParams("GET", "/panic"), nil))
	expectClosed(t, cc)
	mu.Lock()
	assert.Contains(t, logged.String(), "boom")
	mu.Unlock()
	expectHello(t, dial(t, "tcp", addr), 1)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestShutdown(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(entered)
			<-release
		}
		helloHandler(w, r)
	})}
	l := listenTCP(t)
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	idle := dial(t, "tcp", l.Addr().String())
	expectHello(t, idle, 1)
	busy := dial(t, "tcp", l.Addr().String())
	busy.send(t, encodeRequest(1, true, nginxParams("GET", "/slow"), nil))
	<-entered

	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	expectClosed(t, idle) // idle connections go at once
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	var res result
	require.NoError(t, busy.rr.readResult(1, &res))
	assert.Contains(t, string(res.stdout), "Hello World\n")
	require.NoError(t, <-shut)
	expectClosed(t, busy)
	assert.ErrorIs(t, <-served, ErrServerClosed)
	assert.ErrorIs(t, <-served2(s), ErrServerClosed)
	_, err := net.Dial("tcp", l.Addr().String())
	assert.Error(t, err, "listener still open")
}

// served2 calls Serve on a closed server.
func served2(s *Server) chan error {
	ch := make(chan error, 1)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ch <- err
		return ch
	}
	ch <- s.Serve(l)
	return ch
}

func TestShutdownDeadline(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	})}
	l := listenTCP(t)
	go s.Serve(l)
	cc := dial(t, "tcp", l.Addr().String())
	cc.send(t, encodeRequest(1, true, nginxParams("GET", "/"), nil))
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, s.Shutdown(ctx), context.DeadlineExceeded)
	close(release)
	require.NoError(t, s.Close())
}

func TestMaxConns(t *testing.T) {
	addr := startFast(t, &Server{MaxConns: 1, Handler: http.HandlerFunc(helloHandler)})
	first := dial(t, "tcp", addr)
	expectHello(t, first, 1)
	second := dial(t, "tcp", addr) // sits in the backlog
	second.send(t, encodeRequest(1, true, nginxParams("GET", "/"), nil))
	second.c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	_, _, err := second.rr.next()
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "second connection served while the first is open: %v", err)
	first.c.Close()
	second.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var res result
	require.NoError(t, second.rr.readResult(1, &res))
	assert.Contains(t, string(res.stdout), "Hello World\n")
}

func TestPeerGoneMidResponse(t *testing.T) {
	addr := startFast(t, &Server{})
	for range 20 {
		cc := dial(t, "tcp", addr)
		cc.send(t, encodeRequest(1, true, nginxParams("GET", "/big?n=5000000"), nil))
		cc.c.Close()
	}
	expectHello(t, dial(t, "tcp", addr), 1)
}

// TestCgiFcgi uses libfcgi's cgi-fcgi, a FastCGI client written
// independently of Go, over TCP and a unix socket.
func TestCgiFcgi(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an external client")
	}
	bin, err := exec.LookPath("cgi-fcgi")
	require.NoError(t, err, "cgi-fcgi is in libfcgi-bin; .ci/install-tools --tests installs it")
	addrs := map[string]string{
		"tcp":  serveFast(t, &Server{Handler: http.HandlerFunc(echoHandler)}, listenTCP(t)),
		"unix": serveFast(t, &Server{Handler: http.HandlerFunc(echoHandler)}, listenUnix(t)),
	}
	for network, addr := range addrs {
		t.Run(network+"/hello", func(t *testing.T) {
			out := runCgiFcgi(t, bin, addr, []string{
				"REQUEST_METHOD=GET", "SERVER_PROTOCOL=HTTP/1.1", "REQUEST_URI=/hello",
				"HTTP_HOST=localhost", "REMOTE_ADDR=127.0.0.1", "REMOTE_PORT=1234",
			}, nil)
			r, err := parseCGI(out)
			require.NoError(t, err)
			assert.Equal(t, "200 OK", r.status)
			assert.Equal(t, "Hello World\n", string(r.body))
			assert.Equal(t, []string{"Connection: keep-alive", "Content-Length: 12", "Content-Type: text/plain"}, r.lines[:3])
			assert.Equal(t, "Server: gophr", r.lines[4])
		})
		t.Run(network+"/post", func(t *testing.T) {
			body := bytes.Repeat([]byte("cgi-fcgi body "), 10000) // streamed
			out := runCgiFcgi(t, bin, addr, []string{
				"REQUEST_METHOD=POST", "SERVER_PROTOCOL=HTTP/1.1", "REQUEST_URI=/post?x=1",
				"HTTP_HOST=localhost", "CONTENT_TYPE=text/plain", "CONTENT_LENGTH=" + strconv.Itoa(len(body)),
				"HTTP_X_FROM=cgi-fcgi",
			}, body)
			r, err := parseCGI(out)
			require.NoError(t, err)
			assert.Equal(t, "200 OK", r.status)
			assert.Contains(t, string(r.body), `url="http://localhost/post?x=1"`)
			assert.Contains(t, string(r.body), `header "X-From"=["cgi-fcgi"]`)
			assert.Contains(t, string(r.body), "body="+strconv.Itoa(len(body))+" bytes err=<nil> sum="+strconv.FormatUint(uint64(sum(body)), 16))
		})
	}
}

func runCgiFcgi(t *testing.T, bin, addr string, env []string, stdin []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-bind", "-connect", addr)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "cgi-fcgi: %s", stderr.String())
	return out
}

// TestBegunRequestsAreBounded is golang.org/issue/81548: a peer begins
// request after request and never ends one. Beyond MaxRequestsPerConn
// each is refused at once, so nothing accumulates.
func TestBegunRequestsAreBounded(t *testing.T) {
	for _, max := range []int{1, 4} {
		t.Run(strconv.Itoa(max), func(t *testing.T) {
			cc := dial(t, "tcp", startFast(t, &Server{MaxRequestsPerConn: max}))
			var b []byte
			n := 2000
			for id := 1; id <= n; id++ {
				b = appendBegin(b, uint16(id), true)
			}
			cc.send(t, b)
			want := uint8(statusCantMPXConn)
			if max > 1 {
				want = statusOverloaded
			}
			for id := max + 1; id <= n; id++ {
				h, content := cc.nextRecord(t)
				require.Equal(t, uint8(typeEndRequest), h.typ)
				require.Equal(t, uint16(id), h.id)
				require.Equal(t, want, content[4])
			}
			// The begun requests still work.
			for id := 1; id <= max; id++ {
				expectHelloBegun(t, cc, uint16(id))
			}
		})
	}
}

// expectHelloBegun completes a request whose BEGIN_REQUEST was sent.
func expectHelloBegun(t *testing.T, cc *clientConn, id uint16) {
	t.Helper()
	b := appendParams(nil, id, nginxParams("GET", "/hello"))
	res := cc.do(t, appendStdin(b, id, nil), id)
	assert.Contains(t, string(res.stdout), "Hello World\n")
}

package hello

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fcgiclient"
	"github.com/topobench/topobench/internal/testenv"
)

// target is one listener under test.
type target struct {
	name    string
	kind    Kind
	network string
}

var targets = []target{
	{"http-tcp", HTTP, "tcp"},
	{"http-unix", HTTP, "unix"},
	{"fcgi-tcp", FCGI, "tcp"},
	{"fcgi-unix", FCGI, "unix"},
	{"fast-tcp", FastCGI, "tcp"},
	{"fast-unix", FastCGI, "unix"},
}

func listen(tb testing.TB, tg target) Listener {
	tb.Helper()
	addr := "127.0.0.1:0"
	if tg.network == "unix" {
		addr = filepath.Join(testenv.ShortDir(tb), tg.name+".sock")
	}
	l, err := net.Listen(tg.network, addr)
	require.NoError(tb, err)
	return Listener{Kind: tg.kind, Listener: l}
}

// running is an in-process Serve.
type running struct {
	ls     []Listener
	cancel context.CancelFunc
	done   chan error
}

func start(tb testing.TB, ls []Listener, opt Options) *running {
	tb.Helper()
	if opt.ErrorLog == nil {
		opt.ErrorLog = log.New(io.Discard, "", 0)
	}
	ready := make(chan struct{})
	opt.Ready = func() { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{ls: ls, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Serve(ctx, ls, opt) }()
	<-ready
	tb.Cleanup(func() { r.stop(tb) })
	return r
}

// stop cancels Serve and returns its error (once; later calls return nil).
func (r *running) stop(tb testing.TB) error {
	tb.Helper()
	if r.cancel == nil {
		return nil
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		return err
	case <-time.After(20 * time.Second):
		tb.Fatal("Serve did not return after cancel")
		return nil
	}
}

func dial(tb testing.TB, l Listener) net.Conn {
	tb.Helper()
	c, err := net.Dial(l.Addr().Network(), l.Addr().String())
	require.NoError(tb, err)
	tb.Cleanup(func() { c.Close() })
	return c
}

// response is what a client saw, reduced to what must match across paths.
type response struct {
	status int
	names  []string // header names, sorted
	header http.Header
	body   string
}

func httpGet(t *testing.T, c net.Conn, br *bufio.Reader, method string) response {
	t.Helper()
	_, err := io.WriteString(c, method+" / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	var names []string
	for k := range resp.Header {
		names = append(names, k)
	}
	slices.Sort(names)
	return response{resp.StatusCode, names, resp.Header, string(body)}
}

func fcgiGet(t *testing.T, c *fcgiclient.Conn, method string) response {
	t.Helper()
	resp, err := c.Do(context.Background(), &fcgiclient.Request{Method: method})
	require.NoError(t, err)
	require.Equal(t, fcgiclient.StatusRequestComplete, resp.ProtocolStatus)
	names := slices.Clone(resp.HeaderNames)
	slices.Sort(names)
	return response{resp.Status, names, resp.Header, string(resp.Body)}
}

func TestServeEveryListener(t *testing.T) {
	var ls []Listener
	for _, tg := range targets {
		ls = append(ls, listen(t, tg))
	}
	start(t, ls, Options{Handler: fixedHandler()})

	want := map[string]response{
		"GET": {200, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, http.Header{
			"Connection": {"keep-alive"}, "Content-Length": {"12"}, "Content-Type": {"text/plain"},
			"Date": {fixedDate}, "Server": {"gophr"},
		}, Body},
		"POST": {405, []string{"Allow", "Connection", "Content-Length", "Content-Type", "Date", "Server"}, http.Header{
			"Allow": {"GET, HEAD"}, "Connection": {"keep-alive"}, "Content-Length": {"19"}, "Content-Type": {"text/plain"},
			"Date": {fixedDate}, "Server": {"gophr"},
		}, "Method Not Allowed\n"},
	}
	want["HEAD"] = want["GET"]
	head := want["HEAD"]
	head.body = ""
	want["HEAD"] = head

	for i, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			c := dial(t, ls[i])
			c.SetDeadline(time.Now().Add(20 * time.Second))
			var do func(method string) response
			if tg.kind == HTTP {
				br := bufio.NewReader(c)
				do = func(m string) response { return httpGet(t, c, br, m) }
			} else {
				fc := fcgiclient.NewConn(c)
				do = func(m string) response { return fcgiGet(t, fc, m) }
			}
			for _, m := range []string{"GET", "HEAD", "POST", "GET"} {
				got := do(m)
				if tg.kind != HTTP && m == "HEAD" {
					// A FastCGI responder cannot tell HEAD from GET on
					// the wire it writes; nginx drops the body.
					got.body = ""
				}
				assert.Equal(t, want[m], got, m)
			}
			// On one kept-alive connection, as nginx with keepalive and
			// wrk do; FastCGI reuses request id 1 every time.
			for i := range 1000 {
				got := do("GET")
				if got.status != 200 || got.body != Body {
					t.Fatalf("request %d: status %d body %q", i, got.status, got.body)
				}
			}
		})
	}
}

func TestServeClosesListenersAndSockets(t *testing.T) {
	var ls []Listener
	for _, tg := range targets {
		ls = append(ls, listen(t, tg))
	}
	r := start(t, ls, Options{})
	require.NoError(t, r.stop(t))
	for _, l := range ls {
		_, err := net.DialTimeout(l.Addr().Network(), l.Addr().String(), time.Second)
		assert.Error(t, err, "%s still accepts", l)
		if l.Addr().Network() == "unix" {
			_, err := os.Lstat(l.Addr().String())
			assert.True(t, os.IsNotExist(err), "%s: socket file left behind", l)
		}
	}
}

// gate is a handler whose requests block until released.
type gate struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate() *gate {
	return &gate{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.started <- struct{}{}
	<-g.release
	NewHandler().ServeHTTP(w, r)
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func TestServeGracefulShutdown(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			g := newGate()
			defer g.open()
			l := listen(t, tg)
			r := start(t, []Listener{l}, Options{Handler: g, Grace: 10 * time.Second})

			// An idle kept-alive connection (one finished request) and a
			// busy one (a request inside the handler).
			idle, busy := dial(t, l), dial(t, l)
			var roundTrip func(c net.Conn) (int, error)
			if tg.kind == HTTP {
				roundTrip = func(c net.Conn) (int, error) {
					if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
						return 0, err
					}
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err != nil {
						return 0, err
					}
					return resp.StatusCode, nil
				}
			} else {
				roundTrip = func(c net.Conn) (int, error) {
					resp, err := fcgiclient.NewConn(c).Do(context.Background(), &fcgiclient.Request{})
					if err != nil {
						return 0, err
					}
					return resp.Status, nil
				}
			}
			idleDone := make(chan error, 1)
			go func() { _, err := roundTrip(idle); idleDone <- err }()
			<-g.started
			g.release <- struct{}{} // let exactly this one through
			require.NoError(t, <-idleDone)

			type result struct {
				status int
				err    error
			}
			busyDone := make(chan result, 1)
			go func() { s, err := roundTrip(busy); busyDone <- result{s, err} }()
			<-g.started

			stopped := make(chan error, 1)
			go func() { stopped <- r.stop(t) }()

			// The idle connection is closed promptly, Serve keeps waiting
			// for the busy one, and new connections are refused.
			idle.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := idle.Read(make([]byte, 1))
			assert.ErrorIs(t, err, io.EOF, "idle connection should be closed by shutdown")
			select {
			case err := <-stopped:
				t.Fatalf("Serve returned while a request was in flight: %v", err)
			default:
			}
			require.Eventually(t, func() bool {
				c, err := net.Dial(l.Addr().Network(), l.Addr().String())
				if err == nil {
					c.Close()
				}
				return err != nil
			}, 5*time.Second, 10*time.Millisecond, "listener still accepting during shutdown")

			g.open()
			res := <-busyDone
			require.NoError(t, res.err, "the in-flight request must complete")
			assert.Equal(t, 200, res.status)
			assert.NoError(t, <-stopped)
		})
	}
}

func TestServeGraceExpires(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			g := newGate()
			defer g.open()
			l := listen(t, tg)
			r := start(t, []Listener{l}, Options{Handler: g, Grace: 200 * time.Millisecond})
			c := dial(t, l)
			if tg.kind == HTTP {
				_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				require.NoError(t, err)
			} else {
				_, err := c.Write((&fcgiclient.Request{}).Encode(nil))
				require.NoError(t, err)
			}
			<-g.started
			began := time.Now()
			err := r.stop(t)
			assert.Less(t, time.Since(began), 5*time.Second)
			require.Error(t, err, "a request stuck past the grace period is reported")
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			// And its connection is closed, not left to the handler.
			closedWithin(t, c, 5*time.Second)
		})
	}
}

func TestIdleTimeout(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{IdleTimeout: 100 * time.Millisecond})
			c := dial(t, l)
			if tg.kind == HTTP {
				_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
				require.NoError(t, err)
				_, err = http.ReadResponse(bufio.NewReader(c), nil)
				require.NoError(t, err)
			} else {
				_, err := fcgiclient.NewConn(c).Do(context.Background(), &fcgiclient.Request{})
				require.NoError(t, err)
			}
			began := time.Now()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := io.ReadAll(c)
			require.NoError(t, err, "the server should close the idle connection (EOF), not leave it to the deadline")
			assert.Less(t, time.Since(began), 2*time.Second)
		})
	}
}

func TestHTTPReadHeaderTimeout(t *testing.T) {
	l := listen(t, targets[0])
	start(t, []Listener{l}, Options{ReadHeaderTimeout: 100 * time.Millisecond})
	c := dial(t, l)
	_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost:") // and then nothing
	require.NoError(t, err)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a client stalling inside its header was not cut off")
	}
}

func TestServeErrors(t *testing.T) {
	assert.ErrorContains(t, Serve(context.Background(), nil, Options{}), "no listeners")

	l := listen(t, targets[0])
	err := Serve(context.Background(), []Listener{{Kind: Kind(42), Listener: l.Listener}}, Options{})
	assert.ErrorContains(t, err, "unknown kind")

	// A listener that fails (closed under Serve's feet) ends Serve with an
	// error naming it, and the others are shut down too.
	a, b := listen(t, targets[0]), listen(t, targets[2])
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		done <- Serve(context.Background(), []Listener{a, b}, Options{
			Ready: func() { close(ready) }, ErrorLog: log.New(io.Discard, "", 0)})
	}()
	<-ready
	a.Listener.Close()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.True(t, strings.Contains(err.Error(), "http on tcp:"+a.Addr().String()), "%v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after a listener failed")
	}
	_, err = net.DialTimeout("tcp", b.Addr().String(), time.Second)
	assert.Error(t, err, "the other listener is closed too")
}

func TestKindString(t *testing.T) {
	assert.Equal(t, "http", HTTP.String())
	assert.Equal(t, "fcgi", FCGI.String())
	assert.Equal(t, "fastcgi", FastCGI.String())
	assert.Equal(t, "Kind(9)", Kind(9).String())
}

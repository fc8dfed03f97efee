package hello

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/topobench/topobench/internal/fastcgi"
)

// Kind is the protocol a listener speaks.
type Kind int

const (
	// HTTP is net/http.
	HTTP Kind = iota + 1
	// FCGI is net/http/fcgi.
	FCGI
	// FastCGI is internal/fastcgi.
	FastCGI
	// HTTPS is net/http over crypto/tls: HTTP/1.1, and HTTP/2 when the
	// client asks for it by ALPN.
	HTTPS
)

func (k Kind) String() string {
	switch k {
	case HTTP:
		return "http"
	case FCGI:
		return "fcgi"
	case FastCGI:
		return "fastcgi"
	case HTTPS:
		return "https"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Listener is an open listener and the protocol to serve on it.
type Listener struct {
	Kind Kind
	net.Listener
	// TLS is the server configuration of an HTTPS listener (see
	// internal/tlscert.ServerConfig); its NextProtos decide whether
	// HTTP/2 is offered. Other kinds ignore it.
	TLS *tls.Config
}

func (l Listener) String() string {
	a := l.Addr()
	return fmt.Sprintf("%s on %s:%s", l.Kind, a.Network(), a.String())
}

// Defaults for Options.
const (
	DefaultGrace             = 5 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleTimeout matches nginx's keepalive_timeout 300 of the
	// reference run, so neither nginx's upstream keepalive nor wrk's
	// connections are cut by the server during a run.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultWriteTimeout bounds a write the peer does not drain: nginx
	// and wrk take every response at once, a peer that takes none for
	// this long is gone or hostile.
	DefaultWriteTimeout = 30 * time.Second
)

// Options tune Serve. Zero values take the defaults.
type Options struct {
	// Handler serves every listener (NewHandler() if nil).
	Handler http.Handler
	// Grace bounds how long in-flight requests may take to finish after
	// ctx is done; connections still busy then are closed.
	Grace time.Duration
	// ReadHeaderTimeout bounds reading an HTTP request's header, and a
	// FastCGI request's head (from BEGIN_REQUEST until its PARAMS end, for
	// net/http/fcgi until its first STDIN record), so a slow or half-sent
	// request cannot pin a connection. FastCGI connections go within 9/8
	// of it. It is also the limit for an HTTPS listener's TLS handshake,
	// from accept to its end, so a peer that never finishes one (or
	// trickles it) is closed when it passes.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes kept-alive connections (HTTP and FastCGI) that
	// carry no request for this long; net/http/fcgi ones go within 5/4
	// of it, internal/fastcgi ones within 9/8. On every kind it also
	// bounds a silence inside a request body (within 9/8 of it; for
	// net/http/fcgi 5/4). On HTTP it counts while a handler
	// runs too, so a handler that outlives it has its context cancelled.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection whose peer takes no byte of a
	// response for this long (within 9/8 of it), on every kind, so a peer
	// that stops reading cannot hold a handler and its buffers.
	WriteTimeout time.Duration
	// ErrorLog receives the servers' errors (accept failures, malformed
	// requests); never one line per request. nil uses the log package's
	// standard logger.
	ErrorLog *log.Logger
	// Ready, if set, is called once every listener is being served.
	Ready func()
	// Stopped, if set, is called once every listener has stopped, with
	// how many connections the shutdown closed without waiting: a
	// request not fully arrived, or a peer not reading its response.
	Stopped func(cut int)
}

func (o Options) withDefaults() Options {
	if o.Handler == nil {
		o.Handler = NewHandler()
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.ErrorLog == nil {
		o.ErrorLog = log.Default()
	}
	return o
}

// server is one listener's serving loop.
type server interface {
	// serve blocks until shutdown or failure; after shutdown it returns nil.
	serve() error
	// shutdown stops accepting, closes at once the connections with no
	// complete request and those blocked writing to a peer that does not
	// read (how many it closed with a request begun or a write blocked is
	// cut), and waits for requests being answered until ctx ends, then
	// closes what is left. The timeouts hold meanwhile.
	shutdown(ctx context.Context) (cut int, err error)
}

// Serve serves the handler on every listener until ctx is done or one of
// them fails, then shuts all of them down: no new connections; idle ones,
// ones whose request has not fully arrived and ones blocked writing to a
// peer that does not read (for fastcgi.StalledWrite) are closed at once;
// requests being answered get opt.Grace to finish, then remaining
// connections are closed.
// It returns nil after a clean shutdown. The listeners are closed on return
// (which removes unix socket files that net.Listen created).
func Serve(ctx context.Context, ls []Listener, opt Options) error {
	if len(ls) == 0 {
		return errors.New("no listeners to serve")
	}
	opt = opt.withDefaults()
	servers := make([]server, len(ls))
	for i, l := range ls {
		s, err := newServer(l, opt)
		if err != nil {
			for _, l := range ls {
				l.Close()
			}
			return err
		}
		servers[i] = s
	}

	type result struct {
		i   int
		err error
	}
	done := make(chan result, len(ls))
	for i, s := range servers {
		go func() { done <- result{i, s.serve()} }()
	}
	if opt.Ready != nil {
		opt.Ready()
	}

	var errs []error
	running := len(servers)
	select {
	case <-ctx.Done():
	case r := <-done:
		running--
		if r.err == nil {
			r.err = errors.New("stopped accepting")
		}
		errs = append(errs, fmt.Errorf("%s: %w", ls[r.i], r.err))
	}

	sctx, cancel := context.WithTimeout(context.Background(), opt.Grace)
	defer cancel()
	var wg sync.WaitGroup
	shutErrs := make([]error, len(servers))
	cuts := make([]int, len(servers))
	for i, s := range servers {
		wg.Go(func() {
			var err error
			if cuts[i], err = s.shutdown(sctx); err != nil {
				shutErrs[i] = fmt.Errorf("shutting down %s: %w", ls[i], err)
			}
		})
	}
	wg.Wait()
	for ; running > 0; running-- {
		if r := <-done; r.err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ls[r.i], r.err))
		}
	}
	for _, l := range ls {
		l.Close() // most are closed already; this makes sure
	}
	if opt.Stopped != nil {
		total := 0
		for _, n := range cuts {
			total += n
		}
		opt.Stopped(total)
	}
	return errors.Join(append(errs, shutErrs...)...)
}

func newServer(l Listener, opt Options) (server, error) {
	switch l.Kind {
	case HTTP:
		return newHTTPServer(l.Listener, nil, opt), nil
	case HTTPS:
		if l.TLS == nil {
			return nil, fmt.Errorf("listener %s: https without a tls config", l.Addr())
		}
		return newHTTPServer(l.Listener, l.TLS, opt), nil
	case FCGI:
		return newFCGIServer(l.Listener, opt), nil
	case FastCGI:
		return newFastServer(l.Listener, opt)
	}
	return nil, fmt.Errorf("listener %s: unknown kind %s", l.Addr(), l.Kind)
}

type httpServer struct {
	l   net.Listener
	srv *http.Server

	mu    sync.Mutex
	conns map[*httpConn]struct{}
}

// newHTTPServer serves net/http on l, over TLS if cfg is not nil. The
// bounds wrap the TCP connection under crypto/tls: net/http's handshake
// deadline (ReadHeaderTimeout, the shortest of its timeouts set) and
// every later silence apply to the bytes on the wire.
func newHTTPServer(l net.Listener, cfg *tls.Config, opt Options) *httpServer {
	s := &httpServer{conns: map[*httpConn]struct{}{}}
	s.l = httpListener{l, opt.IdleTimeout, opt.WriteTimeout, s}
	errorLog := opt.ErrorLog
	if cfg != nil {
		// net/http's Serve speaks HTTP/2 on a *tls.Conn that chose h2.
		s.l = tls.NewListener(s.l, cfg)
		errorLog = log.New(quietHandshakes{errorLog.Writer()}, errorLog.Prefix(), errorLog.Flags())
	}
	s.srv = &http.Server{
		Handler:           opt.Handler,
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		IdleTimeout:       opt.IdleTimeout,
		ErrorLog:          errorLog,
		ConnState: func(nc net.Conn, st http.ConnState) {
			if tc, ok := nc.(*tls.Conn); ok {
				nc = tc.NetConn()
			}
			c, ok := nc.(*httpConn)
			if !ok {
				return
			}
			c.state.Store(int32(st))
			if st == http.StateClosed || st == http.StateHijacked {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
			}
		},
	}
	return s
}

func (s *httpServer) serve() error {
	err := s.srv.Serve(s.l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *httpServer) shutdown(ctx context.Context) (int, error) {
	done := make(chan error, 1)
	go func() { done <- s.srv.Shutdown(ctx) }()
	// net/http's Shutdown closes idle connections (a request begun on a
	// kept-alive one included: net/http counts it idle until its header
	// is read) and waits for the others, a new connection for 5 s even if
	// it has not sent its first header yet: close those, and the ones
	// whose write is stalled, as it goes.
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	cut := 0
	for {
		cut += s.cutWaiting()
		select {
		case err := <-done:
			if err != nil {
				s.srv.Close()
				return cut, fmt.Errorf("requests still in flight after the grace period; connections closed: %w", err)
			}
			return cut, nil
		case <-t.C:
		}
	}
}

// cutWaiting closes the connections that have not completed a first
// request header and those whose write has waited fastcgi.StalledWrite,
// and returns how many it closed.
func (s *httpServer) cutWaiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UnixNano()
	n := 0
	for c := range s.conns {
		ws := c.writeSince.Load()
		stalled := ws != 0 && now-ws >= int64(fastcgi.StalledWrite)
		if (c.state.Load() == int32(http.StateNew) || stalled) && c.cut.CompareAndSwap(false, true) {
			c.Conn.Close()
			n++
		}
	}
	return n
}

// httpListener gives net/http's connections the bounds it lacks with
// ReadTimeout and WriteTimeout unset (which would bound whole requests and
// handlers, not silences): once net/http clears the read deadline (after
// a request header), a read waits at most idle, so a body that stops
// arriving ends; and a write waits at most write. Deadlines are rearmed
// coarsely, at most eight times per limit, so a silence ends between the
// limit and 9/8 of it; no system call is added (deadlines are the
// runtime poller's timers).
type httpListener struct {
	net.Listener
	idle, write time.Duration
	s           *httpServer
}

func (l httpListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := &httpConn{Conn: nc, idle: l.idle, write: l.write}
	l.s.mu.Lock()
	l.s.conns[c] = struct{}{}
	l.s.mu.Unlock()
	return c, nil
}

type httpConn struct {
	net.Conn
	idle, write time.Duration

	// net/http sets read deadlines from its serving goroutine while its
	// background read may be in Read: mu orders them, so a deadline it
	// sets to abort that read is never overwritten by ours.
	mu        sync.Mutex
	theirs    bool      // net/http's read deadline is in force
	readArmed time.Time // when ours was set; zero: not set
	expired   bool      // ours expired: the peer fell silent for good

	writeArmed  atomic.Int64 // UnixNano when the write deadline was set
	writeSince  atomic.Int64 // UnixNano when the Write in progress began; 0: none
	writeTheirs atomic.Bool  // a deadline was set through SetWriteDeadline
	writeFailed atomic.Bool  // a Write timed out: the peer does not read

	state atomic.Int32 // http.ConnState
	cut   atomic.Bool  // closed by shutdown
}

func (c *httpConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	ours := !c.theirs
	if ours && !c.expired {
		if now := time.Now(); now.Sub(c.readArmed) > c.idle/8 {
			c.readArmed = now
			c.Conn.SetReadDeadline(now.Add(c.idle + c.idle/8))
		}
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(p)
	if ours && errors.Is(err, os.ErrDeadlineExceeded) {
		// Not rearmed by a later Read (net/http discarding the rest of
		// a body it answered), which would keep the connection open for
		// another idle period.
		c.mu.Lock()
		// Ours, not the deadline in the past net/http sets to abort
		// its background read.
		if !c.theirs && !c.readArmed.IsZero() && time.Since(c.readArmed) >= c.idle {
			c.expired = true
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *httpConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.theirs, c.readArmed = !t.IsZero(), time.Time{}
	return c.Conn.SetReadDeadline(t)
}

func (c *httpConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetWriteDeadline ignores a cleared deadline: with WriteTimeout unset
// net/http only clears it (after every request), which would lift ours.
// Clearing a deadline set through here (the TLS handshake's) makes the
// next Write arm ours again instead of waiting for that one to pass.
func (c *httpConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		if c.writeTheirs.Swap(false) {
			c.writeArmed.Store(0)
		}
		return nil
	}
	c.writeTheirs.Store(true)
	c.writeArmed.Store(t.UnixNano()) // not rearmed before it
	return c.Conn.SetWriteDeadline(t)
}

func (c *httpConn) Write(p []byte) (int, error) {
	if c.writeFailed.Load() {
		// What follows a timed-out write (crypto/tls's close_notify on
		// Close) would wait for the same peer again.
		return 0, os.ErrDeadlineExceeded
	}
	now := time.Now()
	if now.UnixNano()-c.writeArmed.Load() > int64(c.write/8) {
		c.writeArmed.Store(now.UnixNano())
		c.Conn.SetWriteDeadline(now.Add(c.write + c.write/8))
	}
	c.writeSince.Store(now.UnixNano()) // for shutdown
	n, err := c.Conn.Write(p)
	c.writeSince.Store(0)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.writeFailed.Store(true)
	}
	return n, err
}

// CloseWrite lets net/http half-close before it closes (closeWriteAndWait).
func (c *httpConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// quietHandshakes drops net/http's log lines for TLS handshakes that a
// peer left unfinished (timed out, closed, reset, cut at shutdown): like a
// half-sent plain request, they are the peer's doing and would be one line
// per hostile connection. Other handshake failures (no common version or
// suite) are logged.
type quietHandshakes struct{ w io.Writer }

func (q quietHandshakes) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("http: TLS handshake error")) {
		for _, s := range []string{": EOF", "i/o timeout", "connection reset by peer", "use of closed network connection", "broken pipe"} {
			if bytes.Contains(p, []byte(s)) {
				return len(p), nil
			}
		}
	}
	return q.w.Write(p)
}

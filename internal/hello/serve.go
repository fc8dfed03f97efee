package hello

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
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
)

func (k Kind) String() string {
	switch k {
	case HTTP:
		return "http"
	case FCGI:
		return "fcgi"
	case FastCGI:
		return "fastcgi"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Listener is an open listener and the protocol to serve on it.
type Listener struct {
	Kind Kind
	net.Listener
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
	// of it.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes kept-alive connections (HTTP and FastCGI) that
	// carry no request for this long; net/http/fcgi ones go within one to
	// two times this, internal/fastcgi ones within 9/8. On every kind it
	// also bounds a silence inside a request body (within 9/8 of it; for
	// net/http/fcgi one to two times). On HTTP it counts while a handler
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
	// shutdown stops accepting and waits for in-flight requests until ctx
	// ends, then closes what is left.
	shutdown(ctx context.Context) error
}

// Serve serves the handler on every listener until ctx is done or one of
// them fails, then shuts all of them down: no new connections, in-flight
// requests get opt.Grace to finish, then remaining connections are closed.
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
	for i, s := range servers {
		wg.Go(func() {
			if err := s.shutdown(sctx); err != nil {
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
	return errors.Join(append(errs, shutErrs...)...)
}

func newServer(l Listener, opt Options) (server, error) {
	switch l.Kind {
	case HTTP:
		return newHTTPServer(l.Listener, opt), nil
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
}

func newHTTPServer(l net.Listener, opt Options) *httpServer {
	return &httpServer{l: httpListener{l, opt.IdleTimeout, opt.WriteTimeout}, srv: &http.Server{
		Handler:           opt.Handler,
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		IdleTimeout:       opt.IdleTimeout,
		ErrorLog:          opt.ErrorLog,
	}}
}

func (s *httpServer) serve() error {
	err := s.srv.Serve(s.l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (s *httpServer) shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
		return fmt.Errorf("requests still in flight after the grace period; connections closed: %w", err)
	}
	return nil
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
}

func (l httpListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &httpConn{Conn: c, idle: l.idle, write: l.write}, nil
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

	writeArmed atomic.Int64 // UnixNano when the write deadline was set
}

func (c *httpConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	if !c.theirs {
		if now := time.Now(); now.Sub(c.readArmed) > c.idle/8 {
			c.readArmed = now
			c.Conn.SetReadDeadline(now.Add(c.idle + c.idle/8))
		}
	}
	c.mu.Unlock()
	return c.Conn.Read(p)
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
func (c *httpConn) SetWriteDeadline(t time.Time) error {
	if t.IsZero() {
		return nil
	}
	c.writeArmed.Store(t.UnixNano()) // not rearmed before it
	return c.Conn.SetWriteDeadline(t)
}

func (c *httpConn) Write(p []byte) (int, error) {
	now := time.Now()
	if now.UnixNano()-c.writeArmed.Load() > int64(c.write/8) {
		c.writeArmed.Store(now.UnixNano())
		c.Conn.SetWriteDeadline(now.Add(c.write + c.write/8))
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close before it closes (closeWriteAndWait).
func (c *httpConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

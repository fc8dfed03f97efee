package hello

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/fcgi"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// fcgiServer runs net/http/fcgi, which has no shutdown and no timeouts of its
// own, on a listener that tracks every connection. A connection is busy
// from the moment request bytes arrive until net/http/fcgi writes the
// request's END_REQUEST record (it writes each record with one Write), so
// shutdown can close idle connections at once and let busy ones finish, and
// a reaper can close connections idle for IdleTimeout.
type fcgiServer struct {
	l       net.Listener
	handler http.Handler
	idle    time.Duration
	log     *log.Logger

	mu      sync.Mutex
	conns   map[*fcgiConn]struct{}
	closing atomic.Bool
	stop    chan struct{} // ends the reaper
}

func newFCGIServer(l net.Listener, opt Options) *fcgiServer {
	return &fcgiServer{
		l:       l,
		handler: opt.Handler,
		idle:    opt.IdleTimeout,
		log:     opt.ErrorLog,
		conns:   map[*fcgiConn]struct{}{},
		stop:    make(chan struct{}),
	}
}

func (s *fcgiServer) serve() error {
	go s.reap()
	err := fcgi.Serve(fcgiListener{s}, s.handler)
	if s.closing.Load() {
		return nil
	}
	return err
}

// reap closes connections that neither carried a request nor received a
// byte during a whole IdleTimeout period.
func (s *fcgiServer) reap() {
	t := time.NewTicker(s.idle)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		for c := range s.conns {
			if !c.seen.Swap(false) && !c.busy.Load() {
				c.closeLocked()
			}
		}
		s.mu.Unlock()
	}
}

func (s *fcgiServer) shutdown(ctx context.Context) error {
	if s.closing.Swap(true) {
		return nil
	}
	close(s.stop)
	s.l.Close()
	// Poll, as net/http's Shutdown does: close idle connections, wait for
	// busy ones to become idle.
	wait := time.Millisecond
	for {
		if s.closeIdle() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			n := s.closeAll()
			return fmt.Errorf("%d connections still busy after the grace period; closed: %w", n, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// closeIdle closes idle connections and returns how many remain open.
func (s *fcgiServer) closeIdle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if !c.busy.Load() {
			c.closeLocked()
		}
	}
	return len(s.conns)
}

func (s *fcgiServer) closeAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.conns)
	for c := range s.conns {
		c.closeLocked()
	}
	return n
}

// fcgiListener registers accepted connections and retries temporary accept
// failures (net/http/fcgi's Serve returns on the first error, which under
// descriptor exhaustion would end the listener for good).
type fcgiListener struct{ s *fcgiServer }

func (l fcgiListener) Accept() (net.Conn, error) {
	var backoff time.Duration
	for {
		nc, err := l.s.l.Accept()
		if err != nil {
			if l.s.closing.Load() || !temporary(err) {
				return nil, err
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			l.s.log.Printf("fcgi: accept on %s: %v; retrying in %v", l.s.l.Addr(), err, backoff)
			time.Sleep(backoff)
			continue
		}
		c := &fcgiConn{Conn: nc, s: l.s}
		l.s.mu.Lock()
		if l.s.closing.Load() {
			l.s.mu.Unlock()
			nc.Close()
			return nil, net.ErrClosed
		}
		l.s.conns[c] = struct{}{}
		l.s.mu.Unlock()
		return c, nil
	}
}

func (l fcgiListener) Close() error   { return l.s.l.Close() }
func (l fcgiListener) Addr() net.Addr { return l.s.l.Addr() }

func temporary(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) ||
		errors.Is(err, syscall.ECONNABORTED)
}

// fcgiConn is a tracked FastCGI connection.
type fcgiConn struct {
	net.Conn
	s    *fcgiServer
	busy atomic.Bool // a request is between its first byte and END_REQUEST
	seen atomic.Bool // bytes arrived since the reaper last looked
	once sync.Once
}

const (
	recEndRequest      = 3
	recGetValuesResult = 10
)

func (c *fcgiConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		if !c.busy.Load() {
			c.busy.Store(true)
		}
		if !c.seen.Load() {
			c.seen.Store(true)
		}
	}
	return n, err
}

func (c *fcgiConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	// One Write is one record: version, type, ...
	if len(p) >= 8 && p[0] == 1 && (p[1] == recEndRequest || p[1] == recGetValuesResult) {
		c.busy.Store(false)
	}
	return n, err
}

func (c *fcgiConn) Close() error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.closeLocked()
}

func (c *fcgiConn) closeLocked() error {
	var err error
	c.once.Do(func() {
		delete(c.s.conns, c)
		err = c.Conn.Close()
	})
	return err
}

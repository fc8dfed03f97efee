package hello

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/fcgi"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// fcgiServer runs net/http/fcgi, which has no shutdown and no timeouts of its
// own, on a listener that tracks every connection. A connection is busy
// from the moment request bytes arrive until net/http/fcgi writes the
// request's END_REQUEST record (it writes each record with one Write), so
// shutdown can close idle connections at once and let busy ones finish.
//
// Each connection follows the record headers it passes on (net/http/fcgi
// reads one record at a time), which lets a reaper close connections
// idle for IdleTimeout, a request head (BEGIN_REQUEST until its first STDIN,
// when net/http/fcgi starts the handler) older than ReadHeaderTimeout, and a
// Write blocked for IdleTimeout by a peer that does not read. Reading stops
// while maxInService requests are being served whose STDIN has ended, so a
// peer that never reads cannot make net/http/fcgi start handlers (and their
// 64 KiB buffers) without end. (A request whose body is still arriving
// needs reading to finish; net/http/fcgi blocks its reader on such a body
// until the handler takes it.) None of this costs a system call per
// request: the reaper looks at timestamps.
type fcgiServer struct {
	l       net.Listener
	handler http.Handler
	idle    time.Duration
	head    time.Duration
	log     *log.Logger
	epoch   time.Time // the clock of the timestamps below

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
		head:    opt.ReadHeaderTimeout,
		log:     opt.ErrorLog,
		epoch:   time.Now(),
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

// now is a monotonic timestamp, never 0.
func (s *fcgiServer) now() int64 { return int64(time.Since(s.epoch)) + 1 }

// reap closes connections that neither carried a request nor received a
// byte during a whole IdleTimeout period, whose request head is older than
// ReadHeaderTimeout, or whose Write has been blocked for IdleTimeout. It
// looks eight times per limit, so a limit is enforced within 9/8 of itself.
func (s *fcgiServer) reap() {
	t := time.NewTicker(max(min(s.head, s.idle)/8, 10*time.Millisecond))
	defer t.Stop()
	nextIdle := time.Now().Add(s.idle)
	for {
		var now time.Time
		select {
		case <-s.stop:
			return
		case now = <-t.C:
		}
		idleCheck := !now.Before(nextIdle)
		if idleCheck {
			nextIdle = now.Add(s.idle)
		}
		ts := s.now()
		expired := func(since *atomic.Int64, limit time.Duration) bool {
			v := since.Load()
			return v != 0 && time.Duration(ts-v) > limit
		}
		s.mu.Lock()
		for c := range s.conns {
			switch {
			case idleCheck && !c.seen.Swap(false) && !c.busy.Load(),
				expired(&c.headSince, s.head),
				expired(&c.writeSince, s.idle):
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
		c.cond.L = &c.mu
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

// maxInService is how many requests one connection may have in net/http/fcgi's
// hands (handler started, END_REQUEST not yet written) before reading stops.
// nginx sends one at a time.
const maxInService = 8

var errManagementID = errors.New("fcgi: BEGIN_REQUEST with the management request id 0")

// fcgiConn is a tracked FastCGI connection.
type fcgiConn struct {
	net.Conn
	s    *fcgiServer
	busy atomic.Bool // a request is between its first byte and END_REQUEST
	seen atomic.Bool // bytes arrived since the reaper last looked
	once sync.Once

	// Record scanning, by net/http/fcgi's reading goroutine only.
	hdr  [8]byte
	nh   int   // bytes of hdr collected
	skip int   // content and padding of the current record still to pass
	rerr error // a protocol error: the connection ends

	headSince  atomic.Int64 // s.now() when a request head began; 0: none
	writeSince atomic.Int64 // s.now() when the Write in progress began; 0: none
	inService  atomic.Int32 // len(served)
	openStdin  atomic.Int32 // served with stdinOpen
	closed     atomic.Bool

	mu     sync.Mutex // guards begun and served; cond.L
	cond   sync.Cond  // signalled when a request ends and on close
	begun  []uint16   // BEGIN_REQUEST seen, no STDIN yet
	served []served   // handler started, END_REQUEST not written
}

type served struct {
	id        uint16
	stdinOpen bool // net/http/fcgi still has the request in its map
	extraEnd  bool // aborted while served: two END_REQUESTs will come
}

const (
	recBeginRequest    = 1
	recAbortRequest    = 2
	recEndRequest      = 3
	recStdin           = 5
	recGetValuesResult = 10
)

func (c *fcgiConn) Read(p []byte) (int, error) {
	if c.rerr != nil {
		return 0, c.rerr
	}
	if c.inService.Load() >= maxInService && c.openStdin.Load() == 0 {
		c.waitEnd()
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if !c.busy.Load() {
			c.busy.Store(true)
		}
		if !c.seen.Load() {
			c.seen.Store(true)
		}
		if c.rerr = c.scan(p[:n]); c.rerr != nil {
			return 0, c.rerr
		}
	}
	return n, err
}

// waitEnd waits while the connection has maxInService requests in service,
// none of them waiting for its body; their responses may be blocked by a
// peer that does not read (the reaper closes it after IdleTimeout).
func (c *fcgiConn) waitEnd() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.inService.Load() >= maxInService && c.openStdin.Load() == 0 && !c.closed.Load() {
		c.cond.Wait()
	}
}

// scan follows the record headers in b, which continues the stream.
func (c *fcgiConn) scan(b []byte) error {
	for len(b) > 0 {
		if c.skip > 0 {
			k := min(c.skip, len(b))
			c.skip -= k
			b = b[k:]
			continue
		}
		k := copy(c.hdr[c.nh:], b)
		c.nh += k
		b = b[k:]
		if c.nh < len(c.hdr) {
			break
		}
		c.nh = 0
		h := c.hdr
		c.skip = int(h[4])<<8 | int(h[5]) + int(h[6])
		if err := c.record(h[1], uint16(h[2])<<8|uint16(h[3]), c.skip == int(h[6])); err != nil {
			return err
		}
	}
	if c.nh > 0 || len(c.begun) > 0 { // begun is only changed by this goroutine's calls
		if c.headSince.Load() == 0 {
			c.headSince.Store(c.s.now())
		}
	} else if c.headSince.Load() != 0 {
		c.headSince.Store(0)
	}
	return nil
}

// record notes one record header; empty is whether it has no content.
func (c *fcgiConn) record(typ uint8, id uint16, empty bool) error {
	switch typ {
	case recBeginRequest, recStdin, recAbortRequest:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch typ {
	case recBeginRequest:
		if id == 0 {
			// net/http/fcgi would serve it as a request.
			return errManagementID
		}
		c.begun = append(c.begun, id)
	case recStdin:
		if i := slices.Index(c.begun, id); i >= 0 {
			// net/http/fcgi starts the handler on the first STDIN.
			c.begun = slices.Delete(c.begun, i, i+1)
			c.served = append(c.served, served{id: id, stdinOpen: !empty})
			c.inService.Add(1)
			if !empty {
				c.openStdin.Add(1)
			}
		} else if i := c.servedIndex(id); i >= 0 && empty && c.served[i].stdinOpen {
			c.served[i].stdinOpen = false
			c.openStdin.Add(-1)
		}
	case recAbortRequest:
		// net/http/fcgi answers an abort of a request it still holds with
		// END_REQUEST, and the handler, if started, writes its own.
		if i := c.servedIndex(id); i >= 0 && c.served[i].stdinOpen {
			c.served[i].stdinOpen = false
			c.served[i].extraEnd = true
			c.openStdin.Add(-1)
		}
	}
	return nil
}

func (c *fcgiConn) servedIndex(id uint16) int {
	return slices.IndexFunc(c.served, func(s served) bool { return s.id == id })
}

// ended notes an END_REQUEST written for id.
func (c *fcgiConn) ended(id uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := c.servedIndex(id); i >= 0 {
		if c.served[i].extraEnd {
			c.served[i].extraEnd = false
			return
		}
		if c.served[i].stdinOpen {
			c.openStdin.Add(-1)
		}
		c.served = slices.Delete(c.served, i, i+1)
		c.inService.Add(-1)
		c.cond.Broadcast()
		return
	}
	// A request refused (unknown role) or aborted before its handler
	// started: net/http/fcgi answers from the reading goroutine.
	if i := slices.Index(c.begun, id); i >= 0 {
		c.begun = slices.Delete(c.begun, i, i+1)
		if len(c.begun) == 0 {
			c.headSince.Store(0)
		}
	}
}

func (c *fcgiConn) Write(p []byte) (int, error) {
	c.writeSince.Store(c.s.now())
	n, err := c.Conn.Write(p)
	c.writeSince.Store(0)
	// One Write is one record: version, type, request id, ...
	if len(p) >= 8 && p[0] == 1 {
		switch p[1] {
		case recEndRequest:
			c.ended(uint16(p[2])<<8 | uint16(p[3]))
			c.busy.Store(false)
		case recGetValuesResult:
			c.busy.Store(false)
		}
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
		c.closed.Store(true)
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	return err
}

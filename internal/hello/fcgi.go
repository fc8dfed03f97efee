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
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/fastcgi"
)

// fcgiServer runs net/http/fcgi, which has no shutdown, no timeouts and no
// limits of its own, on a listener that tracks every connection.
//
// Each connection follows the record headers it passes on (net/http/fcgi
// reads one record at a time) and the END_REQUEST records net/http/fcgi
// writes (each record is one Write), and so knows every request
// net/http/fcgi holds: its head being read, its handler running, its STDIN
// still open. From that it
//
//   - bounds what a peer can make net/http/fcgi hold, in bytes: at most
//     maxInService requests per connection, each with at most
//     fastcgi.DefaultMaxParamsBytes of PARAMS (a request over it is answered
//     431 and its connection closed). A further BEGIN_REQUEST waits for a
//     request to end while none of them needs the peer's bytes (a pipelining
//     peer that does not read its responses stalls until WriteTimeout);
//     otherwise it closes the connection;
//   - closes connections that carried no byte for IdleTimeout while no
//     handler was at work or while a request owed its head or STDIN, a
//     request head (BEGIN_REQUEST until its first STDIN, when net/http/fcgi
//     starts the handler) older than ReadHeaderTimeout, and a Write blocked
//     for WriteTimeout by a peer that does not read;
//   - lets shutdown close at once the connections with no handler at work
//     (idle, or only request heads) and those whose Write has been blocked
//     for fastcgi.StalledWrite, and wait for the others, the limits above
//     still enforced.
//
// None of this costs a system call per request: a reaper looks at
// timestamps.
type fcgiServer struct {
	l       net.Listener
	handler http.Handler
	idle    time.Duration
	head    time.Duration
	write   time.Duration
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
		write:   opt.WriteTimeout,
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

// reap closes connections that received no byte for IdleTimeout while
// idle or owing bytes, whose request head is older than
// ReadHeaderTimeout, or whose Write has been blocked for WriteTimeout. It
// looks eight times per limit and notes when a connection was last seen
// at that grain, so each limit is enforced within 5/4 of itself (the head
// and write ones within 9/8).
func (s *fcgiServer) reap() {
	tick := max(min(s.head, s.idle, s.write)/8, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ts := s.now()
		expired := func(since *atomic.Int64, limit time.Duration) bool {
			v := since.Load()
			return v != 0 && time.Duration(ts-v) > limit
		}
		s.mu.Lock()
		for c := range s.conns {
			if c.seen.Swap(false) {
				c.lastSeen = ts
			}
			switch {
			case time.Duration(ts-c.lastSeen) > s.idle && (c.running.Load() == 0 || c.owing.Load() > 0),
				expired(&c.headSince, s.head),
				expired(&c.writeSince, s.write):
				c.closeLocked()
			}
		}
		s.mu.Unlock()
	}
}

func (s *fcgiServer) shutdown(ctx context.Context) (int, error) {
	if s.closing.Swap(true) {
		return 0, nil
	}
	defer close(s.stop) // the reaper enforces the limits until then
	s.l.Close()
	// Poll, as net/http's Shutdown does: close the connections with
	// nothing being answered, wait for busy ones to become idle.
	wait := time.Millisecond
	cut := 0
	for {
		left, n := s.closeIdle()
		cut += n
		if left == 0 {
			return cut, nil
		}
		select {
		case <-ctx.Done():
			n := s.closeAll()
			return cut, fmt.Errorf("%d connections still busy after the grace period; closed: %w", n, ctx.Err())
		case <-time.After(wait):
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// closeIdle closes the connections without a handler at work (idle, or
// only request heads) and those whose Write has been blocked for
// fastcgi.StalledWrite; it returns how many remain open and how many of
// those it closed had a request begun or a write blocked.
func (s *fcgiServer) closeIdle() (left, cut int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts := s.now()
	for c := range s.conns {
		ws := c.writeSince.Load()
		stalled := ws != 0 && time.Duration(ts-ws) >= fastcgi.StalledWrite
		if c.running.Load() == 0 || stalled {
			if c.pending.Load() > 0 || stalled {
				cut++
			}
			c.closeLocked()
		}
	}
	return len(s.conns), cut
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
		c := &fcgiConn{Conn: nc, s: l.s, lastSeen: l.s.now()}
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

// maxInService is how many requests one connection may have in
// net/http/fcgi's hands at once (begun and not both answered and with its
// STDIN ended). nginx sends one at a time.
const maxInService = 8

// maxParamsBytes bounds one request's PARAMS stream, as internal/fastcgi's
// default does.
const maxParamsBytes = fastcgi.DefaultMaxParamsBytes

var (
	errManagementID    = errors.New("fcgi: BEGIN_REQUEST with the management request id 0")
	errTooManyRequests = fmt.Errorf("fcgi: more than %d requests on one connection while one still owes bytes", maxInService)
)

// paramsTooLarge ends a connection whose request id sent more than
// maxParamsBytes of PARAMS; Read answers the request 431 first.
type paramsTooLarge struct{ id uint16 }

func (e paramsTooLarge) Error() string {
	return "fcgi: request " + strconv.Itoa(int(e.id)) + ": params exceed " + strconv.Itoa(maxParamsBytes) + " bytes"
}

// fcgiConn is a tracked FastCGI connection.
type fcgiConn struct {
	net.Conn
	s        *fcgiServer
	seen     atomic.Bool // bytes arrived since the reaper last looked
	lastSeen int64       // s.now() when the reaper last saw bytes or accepted it; guarded by s.mu
	once     sync.Once

	// Record scanning, by net/http/fcgi's reading goroutine only.
	hdr  [8]byte
	nh   int   // bytes of hdr collected
	skip int   // content and padding of the current record still to pass
	rerr error // a protocol error: the connection ends

	headSince  atomic.Int64 // s.now() when a request head began; 0: none
	writeSince atomic.Int64 // s.now() when the Write in progress began; 0: none
	closed     atomic.Bool

	// Tallies of reqs, for the reaper and shutdown.
	pending atomic.Int32 // begun or running: not yet answered
	running atomic.Int32 // handler at work
	owing   atomic.Int32 // begun or STDIN open: the peer owes bytes

	mu   sync.Mutex // guards reqs; cond.L
	cond sync.Cond  // signalled when a request ends and on close
	reqs []reqState
}

// reqState is one request net/http/fcgi holds for a connection.
type reqState struct {
	id       uint16
	begun    bool // BEGIN_REQUEST seen, no STDIN yet: its head is being read
	stdin    bool // handler started, STDIN not ended
	running  bool // handler started, its END_REQUEST not written
	extraEnd bool // aborted while running: net/http/fcgi writes an END_REQUEST first
	params   int  // PARAMS bytes passed on
}

// held reports whether net/http/fcgi keeps the request in its map, where
// PARAMS and STDIN records reach it.
func (r reqState) held() bool { return r.begun || r.stdin }

const (
	recBeginRequest    = 1
	recAbortRequest    = 2
	recEndRequest      = 3
	recParams          = 4
	recStdin           = 5
	recStdout          = 6
	recGetValuesResult = 10
)

func (c *fcgiConn) Read(p []byte) (int, error) {
	if c.rerr != nil {
		return 0, c.rerr
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		if !c.seen.Load() {
			c.seen.Store(true)
		}
		if c.rerr = c.scan(p[:n]); c.rerr != nil {
			if e, ok := c.rerr.(paramsTooLarge); ok {
				c.refuse(e.id)
			}
			return 0, c.rerr
		}
	}
	return n, err
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
		n := int(h[4])<<8 | int(h[5])
		c.skip = n + int(h[6])
		if err := c.record(h[1], uint16(h[2])<<8|uint16(h[3]), n); err != nil {
			return err
		}
	}
	if c.nh > 0 || c.begunAny() {
		if c.headSince.Load() == 0 {
			c.headSince.Store(c.s.now())
		}
	} else if c.headSince.Load() != 0 {
		c.headSince.Store(0)
	}
	return nil
}

// begunAny reports whether a request head is being read. Only the reading
// goroutine adds begun requests, so a false answer stays true for it.
func (c *fcgiConn) begunAny() bool {
	if c.owing.Load() == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.reqs, func(r reqState) bool { return r.begun })
}

// record notes one record header before net/http/fcgi reads its n bytes
// of content.
func (c *fcgiConn) record(typ uint8, id uint16, n int) error {
	switch typ {
	case recBeginRequest, recParams, recStdin, recAbortRequest:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.tally()
	switch typ {
	case recBeginRequest:
		if id == 0 {
			// net/http/fcgi would serve it as a request.
			return errManagementID
		}
		for len(c.reqs) >= maxInService {
			if slices.ContainsFunc(c.reqs, reqState.held) {
				// Waiting would starve the request that needs reading.
				return errTooManyRequests
			}
			if c.closed.Load() {
				return net.ErrClosed
			}
			c.cond.Wait()
		}
		c.reqs = append(c.reqs, reqState{id: id, begun: true})
	case recParams:
		// net/http/fcgi appends PARAMS to any request it holds, parsed
		// or not.
		if i := c.heldIndex(id); i >= 0 {
			c.reqs[i].params += n
			if c.reqs[i].params > maxParamsBytes {
				return paramsTooLarge{id}
			}
		}
	case recStdin:
		i := c.heldIndex(id)
		switch {
		case i < 0:
		case c.reqs[i].begun:
			// net/http/fcgi starts the handler on the first STDIN.
			c.reqs[i].begun, c.reqs[i].running, c.reqs[i].stdin = false, true, n > 0
		case n == 0:
			c.reqs[i].stdin = false
			c.drop(i)
		}
	case recAbortRequest:
		// net/http/fcgi answers an abort of a request it holds with
		// END_REQUEST and forgets it; a running handler writes its own.
		if i := c.heldIndex(id); i >= 0 && c.reqs[i].stdin {
			c.reqs[i].stdin = false
			if c.reqs[i].running {
				c.reqs[i].extraEnd = true
			} else {
				c.drop(i)
			}
		}
	}
	return nil
}

// heldIndex finds the request net/http/fcgi holds under id; it holds at
// most one (a second BEGIN_REQUEST for it ends the connection).
func (c *fcgiConn) heldIndex(id uint16) int {
	return slices.IndexFunc(c.reqs, func(r reqState) bool { return r.id == id && r.held() })
}

// drop forgets request i once it is neither held nor running.
func (c *fcgiConn) drop(i int) {
	if r := c.reqs[i]; !r.held() && !r.running {
		c.reqs = slices.Delete(c.reqs, i, i+1)
		c.cond.Broadcast()
	}
}

// tally publishes the counts of reqs; c.mu is held.
func (c *fcgiConn) tally() {
	var pending, running, owing int32
	for _, r := range c.reqs {
		if r.begun || r.running {
			pending++
		}
		if r.running {
			running++
		}
		if r.held() {
			owing++
		}
	}
	c.pending.Store(pending)
	c.running.Store(running)
	c.owing.Store(owing)
}

// ended notes an END_REQUEST written for id.
func (c *fcgiConn) ended(id uint16) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.tally()
	if i := slices.IndexFunc(c.reqs, func(r reqState) bool { return r.id == id && r.running }); i >= 0 {
		if c.reqs[i].extraEnd {
			c.reqs[i].extraEnd = false
			return
		}
		c.reqs[i].running = false
		c.drop(i)
		return
	}
	// A request refused (unknown role) or aborted before its handler
	// started: net/http/fcgi answers from the reading goroutine.
	if i := slices.IndexFunc(c.reqs, func(r reqState) bool { return r.id == id && r.begun }); i >= 0 {
		c.reqs[i].begun = false
		c.drop(i)
	}
}

func (c *fcgiConn) Write(p []byte) (int, error) {
	c.writeSince.Store(c.s.now())
	n, err := c.Conn.Write(p)
	c.writeSince.Store(0)
	// One Write is one record: version, type, request id, ...
	if len(p) >= 8 && p[0] == 1 && p[1] == recEndRequest {
		c.ended(uint16(p[2])<<8 | uint16(p[3]))
	}
	return n, err
}

// tooLarge431 is the response internal/fastcgi gives a request whose PARAMS
// exceed the limit.
const tooLarge431 = "Status: 431 Request Header Fields Too Large\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
	"Request Header Fields Too Large\n"

// refuse answers request id 431 on the wire, in one Write so that it does
// not interleave with net/http/fcgi's records; the connection closes after.
func (c *fcgiConn) refuse(id uint16) {
	rec := func(b []byte, typ uint8, content string) []byte {
		pad := -len(content) & 7
		b = append(b, 1, typ, byte(id>>8), byte(id), byte(len(content)>>8), byte(len(content)), byte(pad), 0)
		b = append(b, content...)
		return append(b, make([]byte, pad)...)
	}
	b := rec(nil, recStdout, tooLarge431)
	b = rec(b, recStdout, "")
	b = rec(b, recEndRequest, "\x00\x00\x00\x00\x00\x00\x00\x00") // app status 0, FCGI_REQUEST_COMPLETE
	c.writeSince.Store(c.s.now())
	c.Conn.Write(b)
	c.writeSince.Store(0)
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

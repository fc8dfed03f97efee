// Package fastcgi is a FastCGI responder written for throughput. It serves
// an http.Handler to a web server such as nginx (fastcgi_pass, with
// fastcgi_keep_conn on) and answers byte for byte what net/http/fcgi
// answers, at a fraction of the cost per request.
//
// What it does differently from net/http/fcgi:
//
//   - A request whose body is complete when STDIN ends (nginx buffers
//     request bodies, so that is every request it sends, up to
//     MaxBufferedBody) is served on the connection's goroutine: no
//     goroutine, pipe or channel per request.
//   - The *http.Request, its Header, Trailer, URL and body reader, and the
//     ResponseWriter with its Header, belong to a per-connection slot and
//     are reset between requests. All request strings are cut from one
//     string per request, reused when the next request has the same bytes.
//     Common header names are interned, the Date value is formatted once a
//     second.
//   - Records are framed by hand into a pooled buffer: the CGI header
//     block, the body, the closing empty STDOUT record and END_REQUEST
//     usually leave in a single Write. net/http/fcgi allocates a 64 KiB
//     bufio.Writer per request and writes each record separately.
//   - Everything a peer sends is bounded: the PARAMS stream (MaxParamsBytes:
//     a request over it is answered 431 and its connection closed at once;
//     MaxParams), the buffered body (larger bodies are streamed to the
//     handler with backpressure), requests per connection
//     (MaxRequestsPerConn; beyond it BEGIN_REQUEST is answered with
//     FCGI_CANT_MPX_CONN or FCGI_OVERLOADED) and connections (MaxConns). A
//     request id cannot be begun twice. net/http/fcgi appends PARAMS
//     without limit and keeps every request a peer begins and never ends
//     (https://github.com/golang/go/issues/81548, "net/http/fcgi:
//     incomplete multiplexed requests can exhaust server memory").
//   - Memory per connection is small while it waits: the 8 KiB read
//     buffer is pooled and held only while read bytes are unconsumed, so a
//     connection waiting for its peer (idle, or between the pieces of a
//     request) holds none; PARAMS and STDIN records larger than it are
//     handed on in pieces, never collected whole. What a connection can
//     hold at worst is its request: MaxParamsBytes of PARAMS, MaxBufferedBody
//     of body and one read buffer (136 KiB with the defaults, 1.4 GB at
//     MaxConns), plus about 4 KiB of goroutine and state.
//   - Time is bounded too, when the Server's timeouts are set: a request's
//     head (ReadHeaderTimeout), silence while idle or owed STDIN
//     (IdleTimeout), a write the peer does not drain (WriteTimeout). The
//     deadlines change with the connection's phase, not per request.
//     BEGIN_REQUEST with the management id 0 closes the connection.
//   - A handler panic is logged and closes the connection instead of
//     crashing the process.
//
// Handlers must not keep the *http.Request, its Header, URL or Body, nor
// the ResponseWriter, after ServeHTTP returns: the next request on the
// connection reuses them. The request context is the connection's: it is
// cancelled when the connection closes (for a streamed body also when the
// request is aborted or its handler returns), not when an inline handler
// returns. Like net/http/fcgi the request has Close set, no RequestURI,
// and a 304 response loses its Content-Type and Content-Length. Unlike it,
// the CGI variables are not available through fcgi.ProcessEnv.
package fastcgi

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ErrServerClosed is returned by Serve after Shutdown or Close.
var ErrServerClosed = fmt.Errorf("fastcgi: server closed: %w", net.ErrClosed)

// Defaults for the zero limits of a Server.
const (
	DefaultMaxConns           = 10000
	DefaultMaxRequestsPerConn = 1
	DefaultMaxParamsBytes     = 64 << 10
	DefaultMaxParams          = 1000
	DefaultMaxBufferedBody    = 64 << 10
)

// readBufSize is the read buffer, pooled: it covers a typical nginx
// request (BEGIN_REQUEST, about 1 KiB of PARAMS, the end of STDIN) in one
// read. PARAMS and STDIN records larger than it are handed on in pieces.
const readBufSize = 8 << 10

// StalledWrite is how long a write to the web server must have waited
// for Shutdown to count it blocked by a peer that does not read, and
// close its connection at once rather than give it the grace. A peer
// that reads takes a response on loopback in microseconds.
const StalledWrite = 250 * time.Millisecond

// Server serves FastCGI connections. The zero value serves
// http.DefaultServeMux with the default limits.
type Server struct {
	// Handler answers requests; nil means http.DefaultServeMux.
	Handler http.Handler

	// MaxConns is how many connections are served at once; further
	// ones wait in the listener's backlog. Set IdleTimeout, or idle
	// connections holding every slot keep the others waiting for good.
	MaxConns int
	// MaxRequestsPerConn is how many requests one connection may have
	// in progress at once (multiplexing). With 1, the default, a second
	// BEGIN_REQUEST is answered with FCGI_CANT_MPX_CONN.
	MaxRequestsPerConn int
	// MaxParamsBytes bounds the PARAMS stream of one request; a request
	// over it is answered 431 without reaching the handler.
	MaxParamsBytes int
	// MaxParams bounds the number of name-value pairs, likewise.
	MaxParams int
	// MaxBufferedBody is the largest body collected before the handler
	// runs; a larger one is streamed to a handler on its own goroutine.
	MaxBufferedBody int

	// ReadHeaderTimeout bounds the reading of a request's head, like
	// net/http's: from the first byte of BEGIN_REQUEST until the PARAMS
	// stream ends. A peer that sends half a request and stops is
	// disconnected when it expires.
	ReadHeaderTimeout time.Duration
	// IdleTimeout bounds how long a connection may stay silent while it
	// owes the server bytes or carries no request: waiting for the next
	// request (the first one included) or for more of a request's STDIN.
	// It is rearmed coarsely, so a connection goes between IdleTimeout
	// and 9/8 of it after its last byte. It does not run while only
	// handlers are at work.
	IdleTimeout time.Duration
	// WriteTimeout bounds how long one write to the web server may block
	// (likewise between WriteTimeout and 9/8 of it), so a peer that stops
	// reading loses its connection instead of holding a handler.
	//
	// Zero means no limit for all three. The deadlines are set when a
	// connection changes phase, not per record or request: the hot path
	// costs a clock read per request and per write.
	WriteTimeout time.Duration

	// ErrorLog receives handler panics; nil means the log package's
	// standard logger.
	ErrorLog *log.Logger

	mu        sync.Mutex
	listeners map[*net.Listener]struct{}
	conns     map[*conn]struct{}
	sem       chan struct{} // MaxConns tokens
	done      chan struct{} // closed by Shutdown and Close
	inShut    atomic.Bool
	cut       int // connections Shutdown closed for the peer; guarded by mu

	dateCache atomic.Pointer[dateValue]

	readBufs sync.Pool // *[]byte of readBufSize
	outBufs  sync.Pool // *[]byte output
	slots    sync.Pool // *slot
}

func (s *Server) handler() http.Handler {
	if s.Handler != nil {
		return s.Handler
	}
	return http.DefaultServeMux
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

func (s *Server) maxConns() int { return orDefault(s.MaxConns, DefaultMaxConns) }
func (s *Server) maxReqs() int {
	return min(orDefault(s.MaxRequestsPerConn, DefaultMaxRequestsPerConn), 65535)
}
func (s *Server) maxParamsBytes() int {
	return orDefault(s.MaxParamsBytes, DefaultMaxParamsBytes)
}
func (s *Server) maxParams() int { return orDefault(s.MaxParams, DefaultMaxParams) }
func (s *Server) maxBufferedBody() int {
	return orDefault(s.MaxBufferedBody, DefaultMaxBufferedBody)
}

func (s *Server) init() {
	if s.done == nil {
		s.done = make(chan struct{})
		s.sem = make(chan struct{}, s.maxConns())
		s.listeners = make(map[*net.Listener]struct{})
		s.conns = make(map[*conn]struct{})
	}
}

func (s *Server) shuttingDown() bool { return s.inShut.Load() }

// Serve accepts connections on l and serves each on its own goroutine.
// It returns ErrServerClosed after Shutdown or Close, or the listener's
// error. Serve closes l when it returns.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	s.init()
	if s.shuttingDown() {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[&l] = struct{}{}
	sem, done := s.sem, s.done
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, &l)
		s.mu.Unlock()
		l.Close()
	}()

	var backoff time.Duration
	for {
		select {
		case sem <- struct{}{}:
		case <-done:
			return ErrServerClosed
		}
		rw, err := l.Accept()
		if err != nil {
			<-sem
			if s.shuttingDown() {
				return ErrServerClosed
			}
			if temporary(err) {
				// Out of file descriptors or buffers: wait for
				// connections to end rather than spin or give up.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(backoff):
				case <-done:
					return ErrServerClosed
				}
				continue
			}
			return err
		}
		backoff = 0
		c := newConn(s, rw)
		s.mu.Lock()
		if s.shuttingDown() {
			s.mu.Unlock()
			rw.Close()
			<-sem
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		go func() {
			c.serve()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			<-sem
		}()
	}
}

func temporary(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// Shutdown stops accepting connections and closes at once the ones with
// nothing being answered: idle, waiting for the rest of a request (its
// head or its STDIN) with no handler at work, or with a write blocked for
// StalledWrite by a peer that does not read. It waits for the others to
// finish their requests until ctx is done; it then returns ctx.Err() and
// leaves the rest to Close. The timeouts keep running meanwhile.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.init()
	if !s.inShut.Swap(true) {
		close(s.done)
	}
	for l := range s.listeners {
		(*l).Close()
	}
	s.mu.Unlock()

	wait := time.Millisecond
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		if s.closeIdle() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			wait = min(2*wait, 50*time.Millisecond)
			timer.Reset(wait)
		}
	}
}

// closeIdle closes the connections Shutdown need not wait for and
// reports whether none are left.
func (s *Server) closeIdle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UnixNano()
	for c := range s.conns {
		switch {
		case c.state.CompareAndSwap(stateIdle, stateClosed):
		case c.state.CompareAndSwap(stateWaiting, stateClosed):
			s.cut++
		default:
			ws := c.writeSince.Load()
			if ws == 0 || now-ws < int64(StalledWrite) || !c.cutWrite.CompareAndSwap(false, true) {
				continue
			}
			// The write fails, and the handler's response with it.
			s.cut++
		}
		c.rwc.Close()
	}
	return len(s.conns) == 0
}

// Cut is how many connections Shutdown closed without waiting because
// their request had not fully arrived or their peer did not read.
func (s *Server) Cut() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

// Close closes the listeners and every connection at once.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.init()
	if !s.inShut.Swap(true) {
		close(s.done)
	}
	for l := range s.listeners {
		(*l).Close()
	}
	for c := range s.conns {
		c.state.Store(stateClosed)
		c.rwc.Close()
	}
	return nil
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

type dateValue struct {
	sec int64
	s   string
}

// date is the current time in http.TimeFormat, formatted once a second.
func (s *Server) date() string {
	now := time.Now()
	sec := now.Unix()
	if d := s.dateCache.Load(); d != nil && d.sec == sec {
		return d.s
	}
	d := &dateValue{sec: sec, s: now.UTC().Format(http.TimeFormat)}
	s.dateCache.Store(d)
	return d.s
}

func (s *Server) getReadBuf() *[]byte {
	if b, ok := s.readBufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, readBufSize)
	return &b
}

func (s *Server) putReadBuf(b *[]byte) { s.readBufs.Put(b) }

func (s *Server) getBuf() *[]byte {
	if b, ok := s.outBufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4<<10)
	return &b
}

func (s *Server) putBuf(b *[]byte) {
	if cap(*b) <= 2*flushSize {
		s.outBufs.Put(b)
	}
}

func (s *Server) getSlot() *slot {
	if sl, ok := s.slots.Get().(*slot); ok {
		return sl
	}
	return new(slot)
}

// putSlot resets sl for its next request and pools it.
func (s *Server) putSlot(sl *slot) {
	sl.id, sl.keepConn, sl.paramsDone = 0, false, false
	sl.reject, sl.rejectMsg = 0, ""
	sl.params = sl.params[:0]
	if cap(sl.body) > s.maxBufferedBody() {
		sl.body = nil
	}
	sl.body = sl.body[:0]
	// A slot waiting in a connection for a request's head holds at most
	// what that request may send: the arena copy of a large request
	// before it does not ride along.
	if sl.b != nil && cap(sl.b.arena) > readBufSize {
		sl.b.arena, sl.b.prev = nil, ""
	}
	sl.read.reset(nil)
	sl.streaming, sl.pipe, sl.cancel = false, nil, nil
	sl.aborted.Store(false)
	sl.handlerDone, sl.stdinDone = false, false
	sl.rw.c, sl.rw.s = nil, nil
	if sl.b != nil {
		sl.b.req = http.Request{}
	}
	s.slots.Put(sl)
}

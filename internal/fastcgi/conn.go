package fastcgi

// This file is one FastCGI connection: it reads records from a pooled
// buffer, collects each request's PARAMS and STDIN in its slot, and when
// STDIN ends — nginx's normal flow, a body of at most MaxBufferedBody —
// serves the request inline on the connection's goroutine. Only a larger
// body starts a goroutine, which gets the body through a pipe while this
// goroutine keeps reading STDIN.

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ErrRequestAborted is what the body of a streamed request returns after
// the web server sent FCGI_ABORT_REQUEST.
var ErrRequestAborted = errors.New("fastcgi: request aborted by web server")

// ErrConnClosed is what the body of a streamed request returns after the
// connection to the web server closed.
var ErrConnClosed = errors.New("fastcgi: connection to web server closed")

var (
	errIDInUse   = errors.New("fastcgi: BEGIN_REQUEST for a request id in use")
	errIDZero    = errors.New("fastcgi: BEGIN_REQUEST with the management request id 0")
	errDone      = errors.New("fastcgi: connection done") // keep-conn off
	errShutdown  = errors.New("fastcgi: server shutting down")
	errPanicked  = errors.New("fastcgi: handler panicked")
	errStateLost = errors.New("fastcgi: connection closed by Shutdown")
)

// Connection states, for Shutdown.
const (
	stateActive int32 = iota
	stateIdle
	stateClosed
)

// rwc is what a connection needs from a net.Conn; tests and fuzzing use
// in-memory implementations.
type rwc interface {
	io.ReadWriteCloser
}

// deadliner is the part of a net.Conn the timeouts need; a connection
// without it runs without them.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// What the read deadline currently set on a connection is for.
const (
	readNoDeadline = iota
	readHeader     // ReadHeaderTimeout of request number hdrFor
	readQuiet      // IdleTimeout, rearmed before each read
)

type conn struct {
	srv *Server
	rwc rwc

	ctx    context.Context
	cancel context.CancelFunc
	base   *http.Request // zero except for its context

	rbuf   []byte  // rbuf[r:w] is read but not yet consumed
	small  *[]byte // the pooled read buffer
	large  *[]byte // a pooled maxRecord buffer while a big record is read
	r, w   int
	active []*slot // requests begun and not finished reading

	state    atomic.Int32
	inflight atomic.Int32 // streamed requests whose handler still runs

	wmu     sync.Mutex // serializes writes and guards writeErr
	writeEr error

	failed atomic.Bool // writeEr is set

	// Deadlines, when the Server has timeouts and rwc has deadlines.
	dl     deadliner
	rkind  int       // readNoDeadline, readHeader or readQuiet
	rdl    time.Time // the read deadline set
	hdrFor uint64    // with readHeader: the request it times
	begun  uint64    // BEGIN_REQUESTs accepted so far
	wdl    time.Time // the write deadline set; guarded by wmu

	mu      sync.Mutex // guards slot.handlerDone and slot.stdinDone
	streams sync.WaitGroup
}

// slot is one request's state; it is reused across requests.
type slot struct {
	id         uint16
	keepConn   bool
	paramsDone bool
	reject     int // HTTP status to answer with instead of serving, or 0
	rejectMsg  string
	params     []byte
	body       []byte

	b    *builder
	rw   response
	read bodyReader

	// Streamed requests only.
	streaming   bool
	pipe        *bodyPipe
	cancel      context.CancelFunc
	aborted     atomic.Bool
	handlerDone bool // guarded by conn.mu
	stdinDone   bool // guarded by conn.mu
	refs        atomic.Int32
}

func newConn(srv *Server, c rwc) *conn {
	cc := &conn{srv: srv, rwc: c}
	cc.ctx, cc.cancel = context.WithCancel(context.Background())
	cc.base = new(http.Request).WithContext(cc.ctx)
	if srv.ReadHeaderTimeout > 0 || srv.IdleTimeout > 0 || srv.WriteTimeout > 0 {
		cc.dl, _ = c.(deadliner)
	}
	return cc
}

// serve runs the connection until the peer closes it, a protocol error,
// or keep-conn off.
func (c *conn) serve() {
	c.small = c.srv.getReadBuf()
	c.rbuf = *c.small
	defer c.close()
	for {
		h, content, err := c.next()
		if err != nil {
			return
		}
		if err := c.handle(h, content); err != nil {
			return
		}
	}
}

// close ends streamed requests, waits for their handlers and releases
// everything.
func (c *conn) close() {
	c.state.Store(stateClosed)
	for _, s := range c.active {
		if s.streaming {
			s.pipe.fail(ErrConnClosed)
			s.cancel()
		}
		c.drop(s)
	}
	c.active = nil
	c.cancel()
	c.rwc.Close()
	c.streams.Wait()
	if c.large != nil {
		c.srv.putLargeBuf(c.large)
		c.large = nil
	}
	c.srv.putReadBuf(c.small)
	c.small, c.rbuf = nil, nil
}

// next returns the next record; content is valid until the next call.
func (c *conn) next() (header, []byte, error) {
	if err := c.fill(headerLen); err != nil {
		return header{}, nil, err
	}
	h, err := parseHeader(c.rbuf[c.r:c.w])
	if err != nil {
		return h, nil, err
	}
	n := h.size()
	if err := c.fill(n); err != nil {
		return h, nil, err
	}
	content := c.rbuf[c.r+headerLen : c.r+headerLen+int(h.length)]
	c.r += n
	return h, content, nil
}

// fill makes at least n bytes (n <= maxRecord) available in rbuf[r:w].
func (c *conn) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.r == c.w {
		c.r, c.w = 0, 0
		if c.large != nil {
			// The big record has been consumed: back to the small buffer.
			c.srv.putLargeBuf(c.large)
			c.large = nil
			c.rbuf = *c.small
		}
	}
	if n > len(c.rbuf) {
		c.large = c.srv.getLargeBuf()
		copy(*c.large, c.rbuf[c.r:c.w])
		c.rbuf = *c.large
		c.w -= c.r
		c.r = 0
	} else if n > len(c.rbuf)-c.r {
		copy(c.rbuf, c.rbuf[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	for c.w-c.r < n {
		idle := c.r == c.w && len(c.active) == 0 && c.inflight.Load() == 0
		if idle {
			c.state.Store(stateIdle)
			if c.srv.shuttingDown() {
				return errShutdown
			}
		}
		if c.dl != nil {
			c.armRead(idle)
		}
		m, err := c.rwc.Read(c.rbuf[c.w:])
		if idle && !c.state.CompareAndSwap(stateIdle, stateActive) {
			return errStateLost
		}
		c.w += m
		if err != nil {
			if c.w-c.r >= n {
				return nil
			}
			return err
		}
	}
	return nil
}

// armRead sets the read deadline for the phase the connection is in,
// only when it changes: a request's head gets ReadHeaderTimeout from its
// first read that comes up short; a connection that is idle or owes
// STDIN gets IdleTimeout from now, rearmed only once an eighth of it
// has passed, so a busy connection calls SetReadDeadline about eight
// times per IdleTimeout rather than once per request.
func (c *conn) armRead(idle bool) {
	srv := c.srv
	switch {
	case !idle && srv.ReadHeaderTimeout > 0 && c.inHeader():
		req := c.begun
		if len(c.active) == 0 {
			req++ // the bytes pending are the next request's BEGIN_REQUEST
		}
		if c.rkind != readHeader || c.hdrFor != req {
			c.hdrFor = req
			c.setRead(readHeader, time.Now().Add(srv.ReadHeaderTimeout))
		}
	case srv.IdleTimeout > 0 && (idle || len(c.active) > 0 || c.r < c.w):
		now := time.Now()
		if c.rkind != readQuiet || now.Add(srv.IdleTimeout).After(c.rdl) {
			c.setRead(readQuiet, now.Add(srv.IdleTimeout+srv.IdleTimeout/8))
		}
	default:
		// Only handlers at work, or no timeout for this phase.
		if c.rkind != readNoDeadline {
			c.setRead(readNoDeadline, time.Time{})
		}
	}
}

func (c *conn) setRead(kind int, t time.Time) {
	c.rkind, c.rdl = kind, t
	c.dl.SetReadDeadline(t)
}

// inHeader reports whether the connection is reading a request's head:
// a record before any request, or a request whose PARAMS have not ended.
func (c *conn) inHeader() bool {
	if len(c.active) == 0 {
		return c.r < c.w
	}
	for _, s := range c.active {
		if !s.paramsDone {
			return true
		}
	}
	return false
}

// lookup finds an active request.
func (c *conn) lookup(id uint16) *slot {
	for _, s := range c.active {
		if s.id == id {
			return s
		}
	}
	return nil
}

// remove takes s off the active list.
func (c *conn) remove(s *slot) {
	for i, a := range c.active {
		if a == s {
			c.active = append(c.active[:i], c.active[i+1:]...)
			c.active[len(c.active):cap(c.active)][0] = nil
			return
		}
	}
}

// handle acts on one record.
func (c *conn) handle(h header, content []byte) error {
	switch h.typ {
	case typeBeginRequest:
		br, err := parseBeginRequest(content)
		if err != nil {
			return err
		}
		if h.id == 0 {
			// Id 0 belongs to management records; net/http/fcgi would
			// serve it as a request.
			return errIDZero
		}
		if s := c.lookup(h.id); s != nil {
			if !c.finishedStream(s) {
				// The id is still in use; there is no way to answer
				// for either request without confusing the two.
				return errIDInUse
			}
			c.remove(s)
			c.drop(s)
		}
		if br.role != roleResponder {
			return c.writeControl(appendEndRequest(nil, h.id, statusUnknownRole))
		}
		// Bounded, unlike net/http/fcgi's map of requests
		// (golang.org/issue/81548): a peer that begins requests and
		// never ends them holds at most maxReqs slots.
		if len(c.active) >= c.srv.maxReqs() {
			status := uint8(statusOverloaded)
			if c.srv.maxReqs() == 1 {
				status = statusCantMPXConn
			}
			return c.writeControl(appendEndRequest(nil, h.id, status))
		}
		s := c.srv.getSlot()
		s.id, s.keepConn = h.id, br.flags&flagKeepConn != 0
		s.refs.Store(1)
		c.active = append(c.active, s)
		c.begun++
		return nil

	case typeParams:
		s := c.lookup(h.id)
		if s == nil || s.paramsDone {
			return nil
		}
		if len(content) == 0 {
			s.paramsDone = true
			return nil
		}
		if s.reject == 0 && len(s.params)+len(content) > c.srv.maxParamsBytes() {
			s.reject = http.StatusRequestHeaderFieldsTooLarge
			s.rejectMsg = "fastcgi: params exceed " + strconv.Itoa(c.srv.maxParamsBytes()) + " bytes"
			s.params = s.params[:0]
		}
		if s.reject == 0 {
			s.params = append(s.params, content...)
		}
		return nil

	case typeStdin:
		s := c.lookup(h.id)
		if s == nil {
			return nil
		}
		if !s.paramsDone {
			// STDIN before the end of PARAMS: net/http/fcgi would
			// serve the request with no parameters at all.
			s.paramsDone = true
			s.params = s.params[:0]
		}
		if s.streaming {
			return c.streamStdin(s, content)
		}
		if len(content) > 0 {
			if s.reject != 0 {
				return nil
			}
			if len(s.body)+len(content) <= c.srv.maxBufferedBody() {
				s.body = append(s.body, content...)
				return nil
			}
			return c.startStream(s, content)
		}
		c.remove(s)
		keep := s.keepConn
		err := c.serveInline(s)
		if err != nil {
			return err
		}
		if !keep {
			return errDone
		}
		return nil

	case typeAbortRequest:
		s := c.lookup(h.id)
		if s == nil {
			return nil
		}
		return c.abort(s)

	case typeGetValues:
		return c.getValues(content)

	case typeData, typeEndRequest, typeStdout, typeStderr, typeGetValuesResult, typeUnknownType:
		// DATA belongs to the Filter role; the rest only travel from
		// application to web server.
		return nil
	}
	return c.writeControl(appendUnknownType(nil, h.typ))
}

// serveInline serves a request whose body is complete, on this goroutine.
func (c *conn) serveInline(s *slot) error {
	s.read.reset(s.body)
	err := c.serveRequest(s, &s.read, nil)
	if err == errPanicked {
		// The handler may still hold the slot; let it go.
		return err
	}
	c.drop(s)
	return err
}

// serveRequest builds the request, runs the handler and finishes the
// response. ctx, if not nil, replaces the connection's context.
func (c *conn) serveRequest(s *slot, body io.ReadCloser, ctx context.Context) (err error) {
	rw := &s.rw
	rw.reset(c, s)
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				c.srv.logf("fastcgi: panic serving request %d: %v\n%s", s.id, p, buf)
			}
			rw.release()
			err = errPanicked
		}
	}()
	if s.reject != 0 {
		rw.WriteHeader(s.reject)
		rw.Write([]byte(http.StatusText(s.reject) + "\n"))
		return rw.finish(s.rejectMsg)
	}
	req, berr := c.buildRequest(s)
	if errors.Is(berr, errTooManyParams) {
		rw.WriteHeader(http.StatusRequestHeaderFieldsTooLarge)
		rw.Write([]byte(http.StatusText(http.StatusRequestHeaderFieldsTooLarge) + "\n"))
		return rw.finish("fastcgi: more than " + strconv.Itoa(c.srv.maxParams()) + " params")
	}
	if berr != nil {
		rw.WriteHeader(http.StatusInternalServerError)
		return rw.finish(berr.Error())
	}
	if ctx != nil {
		req = req.WithContext(ctx)
	}
	req.Body = body
	c.srv.handler().ServeHTTP(rw, req)
	return rw.finish("")
}

func (c *conn) buildRequest(s *slot) (*http.Request, error) {
	if s.b == nil {
		s.b = newBuilder()
	}
	if err := s.b.parse(s.params, c.srv.maxParams()); err != nil {
		return nil, err
	}
	return s.b.build(s.params, c.base)
}

// startStream hands the request to a goroutine with a body that streams
// what has been buffered, content, and the STDIN records still to come.
func (c *conn) startStream(s *slot, content []byte) error {
	// The pipe buffers as much as MaxBufferedBody, and at least one
	// record, so a slow handler does not stall the connection at once.
	pipe := newBodyPipe(s.body, max(c.srv.maxBufferedBody(), maxContent))
	s.body = nil
	ctx, cancel := context.WithCancel(c.ctx)
	s.streaming, s.pipe, s.cancel = true, pipe, cancel
	s.refs.Add(1) // the handler's reference
	c.inflight.Add(1)
	c.streams.Add(1)
	go func() {
		defer c.streams.Done()
		err := c.serveRequest(s, pipe, ctx)
		pipe.finish()
		cancel()
		c.mu.Lock()
		s.handlerDone = true
		// With keep-conn off the connection ends here if STDIN has
		// ended too (otherwise streamStdin ends it when it does); a
		// failed response ends it in any case. Closing wakes the
		// reader.
		closeNow := err != nil || (!s.keepConn && s.stdinDone)
		c.mu.Unlock()
		c.inflight.Add(-1)
		if closeNow {
			c.rwc.Close()
		}
		if err != errPanicked {
			c.drop(s)
		}
	}()
	return c.streamStdin(s, content)
}

// streamStdin passes one STDIN record to a streamed request's body.
func (c *conn) streamStdin(s *slot, content []byte) error {
	if len(content) > 0 {
		// Waits while the pipe is full; drops the bytes once the
		// handler returned.
		s.pipe.write(content)
		return nil
	}
	s.pipe.closeWrite()
	c.remove(s)
	c.mu.Lock()
	s.stdinDone = true
	closeNow := s.handlerDone && !s.keepConn
	c.mu.Unlock()
	c.drop(s)
	if closeNow {
		return errDone
	}
	return nil
}

// finishedStream reports whether s is a streamed request whose response
// is complete, so the web server may reuse its id.
func (c *conn) finishedStream(s *slot) bool {
	if !s.streaming {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.handlerDone
}

// abort handles FCGI_ABORT_REQUEST.
func (c *conn) abort(s *slot) error {
	c.remove(s)
	id, keep := s.id, s.keepConn
	if s.streaming {
		c.mu.Lock()
		done := s.handlerDone
		c.mu.Unlock()
		if !done {
			c.wmu.Lock()
			s.aborted.Store(true)
			c.wmu.Unlock()
			s.pipe.fail(ErrRequestAborted)
			s.cancel()
		}
		c.drop(s)
		if done {
			return nil // END_REQUEST went out already
		}
	} else {
		c.drop(s)
	}
	if err := c.writeControl(appendEndRequest(nil, id, statusRequestComplete)); err != nil {
		return err
	}
	if !keep {
		return errDone
	}
	return nil
}

// getValues answers FCGI_GET_VALUES for the variables we know.
func (c *conn) getValues(content []byte) error {
	var body []byte
	for len(content) > 0 {
		name, _, rest, ok := nextPair(content)
		if !ok {
			break
		}
		content = rest
		var v int
		switch string(name) {
		case "FCGI_MAX_CONNS":
			v = c.srv.maxConns()
		case "FCGI_MAX_REQS":
			v = c.srv.maxConns() * c.srv.maxReqs()
		case "FCGI_MPXS_CONNS":
			v = 0
			if c.srv.maxReqs() > 1 {
				v = 1
			}
		default:
			continue
		}
		body = appendPair(body, string(name), strconv.Itoa(v))
	}
	if len(body) > maxContent {
		body = body[:0] // only if the peer repeats names thousands of times
	}
	return c.writeControl(appendRecord(nil, typeGetValuesResult, 0, body))
}

// drop releases one reference to s; the last one recycles it.
func (c *conn) drop(s *slot) {
	if s.refs.Add(-1) == 0 {
		c.srv.putSlot(s)
	}
}

// writeControl writes records that belong to no response.
func (c *conn) writeControl(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(b)
}

// writeFor writes part of s's response unless s was aborted.
func (c *conn) writeFor(s *slot, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if s.aborted.Load() {
		return errWriteAfterAbort
	}
	return c.writeLocked(b)
}

func (c *conn) writeLocked(b []byte) error {
	if c.writeEr == nil {
		if wt := c.srv.WriteTimeout; wt > 0 && c.dl != nil {
			// Rearmed once an eighth of it has passed, not per write.
			if now := time.Now(); now.Add(wt).After(c.wdl) {
				c.wdl = now.Add(wt + wt/8)
				c.dl.SetWriteDeadline(c.wdl)
			}
		}
		if _, err := c.rwc.Write(b); err != nil {
			c.writeEr = err
			c.failed.Store(true)
		}
	}
	return c.writeEr
}

// werr is the first write error, if any.
func (c *conn) werr() error {
	if !c.failed.Load() {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeEr
}

// bodyReader is the body of a request received in full.
type bodyReader struct {
	b   []byte
	off int
}

func (r *bodyReader) reset(b []byte) { r.b, r.off = b, 0 }

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// WriteTo lets io.Copy skip its buffer.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(r.b[r.off:])
	r.off += n
	return int64(n), err
}

func (r *bodyReader) Close() error { return nil }

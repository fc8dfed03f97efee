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
	"syscall"
	"time"
)

// ErrRequestAborted is what the body of a streamed request returns after
// the web server sent FCGI_ABORT_REQUEST.
var ErrRequestAborted = errors.New("fastcgi: request aborted by web server")

// ErrConnClosed is what the body of a streamed request returns after the
// connection to the web server closed.
var ErrConnClosed = errors.New("fastcgi: connection to web server closed")

var (
	errTooLarge  = errors.New("fastcgi: params over the limit") // answered 431, then closed
	errBigValues = errors.New("fastcgi: GET_VALUES larger than the read buffer")
	errIDZero    = errors.New("fastcgi: BEGIN_REQUEST with the management request id 0")
	errDone      = errors.New("fastcgi: connection done") // keep-conn off
	errShutdown  = errors.New("fastcgi: server shutting down")
	errPanicked  = errors.New("fastcgi: handler panicked")
	errStateLost = errors.New("fastcgi: connection closed by Shutdown")
)

// idInUseError refuses a BEGIN_REQUEST for an id whose request is still
// in progress. The FastCGI specification lets the web server reuse an id
// only after the END_REQUEST of its last request; before that, neither
// request could be answered without confusing the two, so the
// connection is closed and the reason logged. A connection that carries
// more than 65,535 requests reuses ids legitimately: a request served
// inline has its END_REQUEST written before the next record is read.
type idInUseError struct{ id uint16 }

func (e idInUseError) Error() string {
	return "fastcgi: BEGIN_REQUEST for request id " + strconv.Itoa(int(e.id)) +
		", which is still in progress (an id may be reused only after its END_REQUEST); connection closed"
}

// Connection states, for Shutdown.
const (
	stateActive int32 = iota
	// stateIdle: waiting for bytes with no request begun and no handler
	// at work.
	stateIdle
	// stateWaiting: waiting for the rest of a request (its head or its
	// STDIN) with no handler at work: nothing is being answered, so
	// Shutdown closes it at once, like an idle one.
	stateWaiting
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

	// The read buffer is pooled: a connection holds it only while it
	// has unconsumed bytes, so one waiting for a peer (idle, or between
	// the pieces of a record) holds none. Records larger than it (PARAMS
	// and STDIN up to 64 KiB) are handed on in pieces, not collected.
	rbuf   []byte  // rbuf[r:w] is read but not yet consumed; nil without small
	small  *[]byte // the pooled read buffer, nil while released
	r, w   int
	frag   header  // the record being handed on in pieces
	fragN  int     // its content bytes still to come
	skip   int     // padding (or ignored content) still to pass over
	active []*slot // requests begun and not finished reading

	raw    syscall.RawConn // nil: read through rwc with the buffer held
	rawFn  func(fd uintptr) bool
	rawN   int
	rawErr error

	writeSince atomic.Int64 // UnixNano when the write in progress began; 0: none
	cutWrite   atomic.Bool  // Shutdown closed it for a blocked write

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
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			cc.raw = raw
			cc.rawFn = cc.rawRead // one closure per connection, not per read
		}
	}
	return cc
}

// serve runs the connection until the peer closes it, a protocol error,
// or keep-conn off.
func (c *conn) serve() {
	defer c.close()
	for {
		h, content, err := c.next()
		if err != nil {
			return
		}
		if err := c.handle(h, content); err != nil {
			if e, ok := err.(idInUseError); ok {
				c.srv.logf("%v", e)
			}
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
	c.releaseBuf()
}

func (c *conn) releaseBuf() {
	if c.small != nil {
		c.srv.putReadBuf(c.small)
		c.small, c.rbuf = nil, nil
		c.r, c.w = 0, 0
	}
}

func (c *conn) takeBuf() {
	if c.small == nil {
		c.small = c.srv.getReadBuf()
		c.rbuf = *c.small
		c.r, c.w = 0, 0
	}
}

// next returns the next record, or the next piece of a PARAMS or STDIN
// record larger than the read buffer (every piece is non-empty, and h is
// the record's header); content is valid until the next call.
func (c *conn) next() (header, []byte, error) {
	if c.fragN > 0 {
		if err := c.fill(1); err != nil {
			return c.frag, nil, err
		}
		k := min(c.fragN, c.w-c.r)
		content := c.rbuf[c.r : c.r+k]
		c.r += k
		c.fragN -= k
		if c.fragN == 0 {
			c.skip = int(c.frag.padding)
		}
		return c.frag, content, nil
	}
	for c.skip > 0 {
		if err := c.fill(1); err != nil {
			return header{}, nil, err
		}
		k := min(c.skip, c.w-c.r)
		c.r += k
		c.skip -= k
	}
	if err := c.fill(headerLen); err != nil {
		return header{}, nil, err
	}
	h, err := parseHeader(c.rbuf[c.r:c.w])
	if err != nil {
		return h, nil, err
	}
	n := h.size()
	if n <= readBufSize || c.w-c.r >= n {
		if err := c.fill(n); err != nil {
			return h, nil, err
		}
		content := c.rbuf[c.r+headerLen : c.r+headerLen+int(h.length)]
		c.r += n
		return h, content, nil
	}
	// Larger than the read buffer: no legitimate record but PARAMS or
	// STDIN is, and those are handed on in pieces.
	c.r += headerLen
	switch h.typ {
	case typeParams, typeStdin:
		if s := c.lookup(h.id); h.typ == typeParams && s != nil && !s.paramsDone &&
			len(s.params)+int(h.length) > c.srv.maxParamsBytes() {
			// Refused on its header, before its content is read.
			return h, nil, c.refuseParams(s)
		}
		c.frag, c.fragN = h, int(h.length)
		return c.next()
	case typeGetValues:
		return h, nil, errBigValues
	case typeBeginRequest:
		return h, nil, errBeginLen
	}
	// Content nobody reads (ABORT_REQUEST, DATA, types only the web
	// server receives, unknown types): passed over.
	c.skip = int(h.length) + int(h.padding)
	return h, nil, nil
}

// fill makes at least n bytes (n <= readBufSize) available in rbuf[r:w].
func (c *conn) fill(n int) error {
	if c.w-c.r >= n {
		return nil
	}
	if c.small == nil {
		c.takeBuf()
	} else if c.r == c.w {
		c.r, c.w = 0, 0
	} else if n > len(c.rbuf)-c.r {
		copy(c.rbuf, c.rbuf[c.r:c.w])
		c.w -= c.r
		c.r = 0
	}
	for c.w-c.r < n {
		// Nothing is being answered while this goroutine reads and no
		// streamed handler runs: Shutdown may close the connection.
		quiet := c.inflight.Load() == 0
		idle := quiet && c.r == c.w && len(c.active) == 0
		var st int32
		if quiet {
			st = stateWaiting
			if idle {
				st = stateIdle
			}
			c.state.Store(st)
			if c.srv.shuttingDown() {
				return errShutdown
			}
		}
		if c.dl != nil {
			c.armRead(idle)
		}
		m, err := c.read()
		if quiet && !c.state.CompareAndSwap(st, stateActive) {
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

// read reads into rbuf[w:]. On a connection with a file descriptor it
// waits for the peer without the buffer when none of it is in use, and
// takes it back once bytes have arrived.
func (c *conn) read() (int, error) {
	if c.raw == nil {
		c.takeBuf()
		return c.rwc.Read(c.rbuf[c.w:])
	}
	c.rawN, c.rawErr = 0, nil
	if err := c.raw.Read(c.rawFn); err != nil {
		return 0, err
	}
	return c.rawN, c.rawErr
}

// rawRead is the non-blocking read net.Conn.Read does, but it gives the
// buffer back before the poller waits.
func (c *conn) rawRead(fd uintptr) bool {
	c.takeBuf()
	for {
		m, err := syscall.Read(int(fd), c.rbuf[c.w:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			if c.r == c.w {
				c.releaseBuf()
			}
			return false
		case err != nil:
			c.rawErr = err
		case m == 0:
			c.rawErr = io.EOF
		default:
			c.rawN = m
		}
		return true
	}
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
		return c.beginRequest(h, content)

	case typeParams:
		s := c.lookup(h.id)
		if s == nil || s.paramsDone {
			return nil
		}
		if len(content) == 0 {
			s.paramsDone = true
			return nil
		}
		if len(s.params)+len(content) > c.srv.maxParamsBytes() {
			return c.refuseParams(s)
		}
		s.params = append(s.params, content...)
		return nil

	case typeStdin:
		return c.stdin(h, content)

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

// beginRequest takes a slot for the request a BEGIN_REQUEST record
// opens, or answers that it cannot.
func (c *conn) beginRequest(h header, content []byte) error {
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
			return idInUseError{h.id}
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
}

// stdin takes a STDIN record: the body buffered, or streamed once it
// outgrows the buffer, and the request served at its end.
func (c *conn) stdin(h header, content []byte) error {
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
}

// refuseParams answers s 431 at once and ends the connection, as the
// net/http/fcgi wrapper does: reading on until the head timeout would let
// one peer push gigabytes through.
func (c *conn) refuseParams(s *slot) error {
	s.reject = http.StatusRequestHeaderFieldsTooLarge
	s.rejectMsg = "fastcgi: params exceed " + strconv.Itoa(c.srv.maxParamsBytes()) + " bytes"
	s.params = s.params[:0]
	s.paramsDone = true
	c.remove(s)
	if err := c.serveInline(s); err != nil {
		return err
	}
	return errTooLarge
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
		now := time.Now()
		if wt := c.srv.WriteTimeout; wt > 0 && c.dl != nil {
			// Rearmed once an eighth of it has passed, not per write.
			if now.Add(wt).After(c.wdl) {
				c.wdl = now.Add(wt + wt/8)
				c.dl.SetWriteDeadline(c.wdl)
			}
		}
		c.writeSince.Store(now.UnixNano()) // for Shutdown
		_, err := c.rwc.Write(b)
		c.writeSince.Store(0)
		if err != nil {
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

package fastcgi

import (
	"io"
	"sync"
)

// bodyPipe carries a streamed request body from the connection's
// goroutine to the handler's. Unlike io.Pipe it buffers up to limit
// bytes, so the connection goroutine keeps reading records (an ABORT
// among them) while the handler is busy elsewhere, and only waits for
// the handler when that much body is unread.
type bodyPipe struct {
	mu    sync.Mutex
	cond  sync.Cond
	buf   []byte // buf[off:] is unread
	off   int
	limit int
	eof   bool  // STDIN ended
	err   error // abort or lost connection, returned by Read
	done  bool  // the handler returned; writes are discarded
}

// newBodyPipe starts with the body buffered so far, taking over buf.
func newBodyPipe(buf []byte, limit int) *bodyPipe {
	p := &bodyPipe{buf: buf, limit: limit}
	p.cond.L = &p.mu
	return p
}

// write appends b, waiting while the buffer is full.
func (p *bodyPipe) write(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(b) > 0 {
		for !p.done && p.err == nil && len(p.buf)-p.off >= p.limit {
			p.cond.Wait()
		}
		if p.done || p.err != nil {
			return
		}
		if p.off > 0 && len(p.buf)+len(b) > cap(p.buf) {
			p.buf = p.buf[:copy(p.buf, p.buf[p.off:])]
			p.off = 0
		}
		n := min(len(b), p.limit-(len(p.buf)-p.off))
		p.buf = append(p.buf, b[:n]...)
		b = b[n:]
		p.cond.Broadcast()
	}
}

// closeWrite marks the end of STDIN.
func (p *bodyPipe) closeWrite() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.eof = true
	p.cond.Broadcast()
}

// fail makes Read return err at once, buffered bytes or not: an aborted
// or disconnected request has no body worth reading.
func (p *bodyPipe) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.cond.Broadcast()
}

// finish is called when the handler returned.
func (p *bodyPipe) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	p.buf, p.off = p.buf[:0], 0
	p.cond.Broadcast()
}

// Read implements io.Reader for the handler.
func (p *bodyPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.off == len(p.buf) && !p.eof && p.err == nil && !p.done {
		p.cond.Wait()
	}
	switch {
	case p.err != nil:
		return 0, p.err
	case p.done:
		return 0, io.ErrClosedPipe
	case p.off == len(p.buf):
		return 0, io.EOF
	}
	n := copy(b, p.buf[p.off:])
	p.off += n
	if p.off == len(p.buf) {
		p.buf, p.off = p.buf[:0], 0
	}
	p.cond.Broadcast()
	return n, nil
}

// Close implements io.Closer: a handler closing the body discards the
// rest of it.
func (p *bodyPipe) Close() error {
	p.finish()
	return nil
}

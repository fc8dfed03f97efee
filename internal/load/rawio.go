package load

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// rawIO sends a request and reads its answer on the connection's file
// descriptor through one syscall.RawConn.Read: the request is written
// inside it, after the poller's read state was reset, so the engine then
// waits for the answer instead of first trying a read that finds nothing
// (net.Conn.Read always tries once, and gets EAGAIN on almost every
// request: a system call per request for nothing). It is respReader's
// io.Reader.
type rawIO struct {
	rc   syscall.RawConn
	req  []byte // to write before the first read; nil once written
	p    []byte // where the read goes
	n    int
	err  error
	werr bool                  // err came from the write
	step func(fd uintptr) bool // rawStep, bound once: no allocation per call
}

// errShortWrite: the socket took only part of a request (its buffer was
// full, which one request in flight never makes it).
var errShortWrite = errors.New("short write")

// attach binds the I/O to nc's descriptor; false if nc has none.
func (r *rawIO) attach(nc net.Conn) bool {
	r.rc = nil
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	if r.step == nil {
		r.step = r.rawStep
	}
	r.rc = rc
	return true
}

// send arranges for req to be written by the next Read.
func (r *rawIO) send(req []byte) { r.req, r.werr = req, false }

func (r *rawIO) Read(p []byte) (int, error) {
	r.p, r.n, r.err = p, 0, nil
	if err := r.rc.Read(r.step); err != nil { // a deadline, or closed
		r.req = nil
		return 0, err
	}
	return r.n, r.err
}

// rawStep runs inside RawConn.Read: false means wait until readable.
func (r *rawIO) rawStep(fd uintptr) bool {
	if r.req != nil {
		for {
			n, err := syscall.SendmsgN(int(fd), r.req, nil, nil, syscall.MSG_NOSIGNAL)
			if err == syscall.EINTR {
				continue
			}
			if err == nil && n < len(r.req) {
				err = errShortWrite
			}
			r.req = nil
			if err != nil {
				r.err, r.werr = err, true
				return true
			}
			return false // sent: wait for the answer
		}
	}
	for {
		n, err := syscall.Read(int(fd), r.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			r.err = err
		case n == 0:
			r.err = io.EOF
		default:
			r.n = n
		}
		return true
	}
}

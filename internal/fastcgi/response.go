package fastcgi

// This file is the http.ResponseWriter. It produces the same CGI header
// block as net/http/fcgi ("Status: 200 OK", then http.Header.Write's
// sorted lines, with Date added and Content-Type sniffed the same way),
// but frames it straight into a pooled buffer: the header, the body, the
// empty STDOUT record and END_REQUEST leave in one Write when the
// response fits in flushSize.

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
)

// flushSize is how much output is buffered before it is written out.
const flushSize = 64 << 10

// errWriteAfterAbort is returned by Write once the web server aborted the
// request.
var errWriteAfterAbort = errors.New("fastcgi: request aborted by web server")

type response struct {
	c      *conn
	s      *slot
	header http.Header
	code   int

	wroteHeader    bool
	wroteCGIHeader bool
	done           bool

	buf *[]byte // pooled output, nil until the first byte
	rec int     // offset of the open STDOUT record's header, -1 if none

	keys     []string  // scratch for sorting header keys
	scratch  []byte    // the header block being formatted
	sniff    [512]byte // WriteString's first bytes, for DetectContentType
	dateVal  [1]string // Header()["Date"] when we supply it
	ctypeVal [1]string // Header()["Content-Type"] when sniffed
}

func (r *response) reset(c *conn, s *slot) {
	r.c, r.s = c, s
	if r.header == nil {
		r.header = make(http.Header)
	} else {
		clear(r.header)
	}
	r.code = 0
	r.wroteHeader, r.wroteCGIHeader, r.done = false, false, false
	r.rec = -1
}

// Header implements http.ResponseWriter.
func (r *response) Header() http.Header { return r.header }

// WriteHeader implements http.ResponseWriter. Like net/http/fcgi it
// accepts any code and ignores all calls but the first.
func (r *response) WriteHeader(code int) {
	if r.wroteHeader {
		return
	}
	r.wroteHeader = true
	r.code = code
	if code == http.StatusNotModified {
		// Must not have body.
		delete(r.header, "Content-Type")
		delete(r.header, "Content-Length")
		delete(r.header, "Transfer-Encoding")
	}
	if d := r.header["Date"]; len(d) == 0 || d[0] == "" {
		r.dateVal[0] = r.c.srv.date()
		r.header["Date"] = r.dateVal[:]
	}
}

// Write implements http.ResponseWriter.
func (r *response) Write(p []byte) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if !r.wroteCGIHeader {
		r.writeCGIHeader(p)
	}
	if r.s.aborted.Load() {
		return 0, errWriteAfterAbort
	}
	if err := stdout(r, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString lets io.WriteString skip a conversion.
func (r *response) WriteString(s string) (int, error) {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if !r.wroteCGIHeader {
		// Sniffing needs bytes; this copy only happens on the first
		// write and only for the bytes DetectContentType looks at.
		r.writeCGIHeader(r.sniff[:copy(r.sniff[:], s)])
	}
	if r.s.aborted.Load() {
		return 0, errWriteAfterAbort
	}
	if err := stdout(r, s); err != nil {
		return 0, err
	}
	return len(s), nil
}

// Flush implements http.Flusher with net/http/fcgi's semantics: it sends
// what has been written so far; before the first Write that is nothing.
func (r *response) Flush() {
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	r.flush()
}

// writeCGIHeader emits the status line and header block. p is the first
// chunk of the body, sniffed for a Content-Type if none is set.
func (r *response) writeCGIHeader(p []byte) {
	r.wroteCGIHeader = true
	b := append(r.scratch[:0], "Status: "...)
	b = strconv.AppendInt(b, int64(r.code), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(r.code)...)
	b = append(b, "\r\n"...)
	if _, hasType := r.header["Content-Type"]; r.code != http.StatusNotModified && !hasType {
		r.ctypeVal[0] = http.DetectContentType(p)
		r.header["Content-Type"] = r.ctypeVal[:]
	}
	// http.Header.Write: keys sorted, invalid names dropped, CR and LF
	// in values turned into spaces, values trimmed.
	keys := r.keys[:0]
	for k := range r.header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !validFieldName(k) {
			continue
		}
		for _, v := range r.header[k] {
			b = append(b, k...)
			b = append(b, ": "...)
			start := len(b)
			b = append(b, trimSpace(v)...)
			for i := start; i < len(b); i++ {
				if b[i] == '\r' || b[i] == '\n' {
					b[i] = ' '
				}
			}
			b = append(b, "\r\n"...)
		}
	}
	b = append(b, "\r\n"...)
	stdout(r, b)
	clear(keys)
	r.keys = keys[:0]
	if cap(b) <= 64<<10 {
		r.scratch = b[:0]
	} else {
		r.scratch = nil
	}
}

// stdout appends p to the STDOUT stream, opening and closing records as
// needed and writing out the buffer whenever it reaches flushSize.
func stdout[T string | []byte](r *response, p T) error {
	if r.buf == nil {
		r.buf = r.c.srv.getBuf()
	}
	for len(p) > 0 {
		b := *r.buf
		if r.rec < 0 {
			r.rec = len(b)
			b = append(b, zeros[:headerLen]...)
		}
		room := min(maxContent-(len(b)-r.rec-headerLen), flushSize-len(b))
		if room <= 0 {
			*r.buf = b
			if err := r.flush(); err != nil {
				return err
			}
			continue
		}
		n := min(room, len(p))
		*r.buf = append(b, p[:n]...)
		p = p[n:]
	}
	return r.c.werr()
}

// closeRecord fills in the open record's header and pads it.
func (r *response) closeRecord() {
	if r.rec < 0 {
		return
	}
	b := *r.buf
	n := len(b) - r.rec - headerLen
	putHeader(b[r.rec:], typeStdout, r.s.id, n)
	*r.buf = append(b, zeros[:-n&7]...)
	r.rec = -1
}

// flush writes out everything buffered.
func (r *response) flush() error {
	if r.buf == nil {
		return r.c.werr()
	}
	r.closeRecord()
	if len(*r.buf) == 0 {
		return r.c.werr()
	}
	err := r.c.writeFor(r.s, *r.buf)
	*r.buf = (*r.buf)[:0]
	return err
}

// finish completes the response after the handler returned: the header
// if nothing was written, the end of STDOUT and END_REQUEST, all in the
// final Write. stderr, if not empty, goes out first as a closed STDERR
// stream.
func (r *response) finish(stderr string) error {
	if r.done {
		return r.c.werr()
	}
	if r.s.aborted.Load() {
		// END_REQUEST went out with the abort.
		r.release()
		return nil
	}
	r.done = true
	if !r.wroteHeader {
		r.WriteHeader(http.StatusOK)
	}
	if r.buf == nil {
		r.buf = r.c.srv.getBuf()
	}
	if stderr != "" {
		// Ahead of the STDOUT records: net/http/fcgi sends it first.
		var pre []byte
		for s := stderr; len(s) > 0; {
			n := min(len(s), maxContent)
			pre = appendHeader(pre, typeStderr, r.s.id, n)
			pre = append(pre, s[:n]...)
			pre = append(pre, zeros[:-n&7]...)
			s = s[n:]
		}
		pre = appendHeader(pre, typeStderr, r.s.id, 0)
		r.c.writeFor(r.s, pre)
	}
	if !r.wroteCGIHeader {
		r.writeCGIHeader(nil)
	}
	r.closeRecord()
	b := appendHeader(*r.buf, typeStdout, r.s.id, 0)
	b = appendEndRequest(b, r.s.id, statusRequestComplete)
	err := r.c.writeFor(r.s, b)
	*r.buf = b[:0]
	r.c.srv.putBuf(r.buf)
	r.buf = nil
	return err
}

// release returns the output buffer without sending it (the request was
// aborted or the connection failed).
func (r *response) release() {
	if r.buf != nil {
		*r.buf = (*r.buf)[:0]
		r.c.srv.putBuf(r.buf)
		r.buf = nil
	}
	r.done = true
}

// validFieldName is httpguts.ValidHeaderFieldName: a non-empty token.
func validFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !isTokenByte(k[i]) {
			return false
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// trimSpace is textproto.TrimString after CR and LF became spaces.
func trimSpace(s string) string {
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

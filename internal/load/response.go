package load

import (
	"errors"
	"fmt"
	"io"
)

// ErrFraming marks a response the reader cannot delimit or does not accept:
// a bad status line, a header block larger than the buffer, no or a bad
// Content-Length, chunked transfer coding (not supported: the servers under
// test answer with Content-Length), or bytes beyond the announced body.
var ErrFraming = errors.New("bad response framing")

// respReader reads HTTP/1.1 responses from one connection into a fixed
// buffer: no bufio, no allocation per response. It is resumable: an event
// loop hands it each read as it comes (reset, space, feed); read drives
// the same steps from an io.Reader.
type respReader struct {
	buf []byte

	n, scanned int   // header phase: bytes in buf, and scanned for its end
	hdrEnd     int   // end of the header block; -1 while not found
	have, clen int64 // body phase: body bytes read, and Content-Length
	resp       response
}

// response is what the engine keeps of one response.
type response struct {
	status int
	close  bool // Connection: close: the server ends the connection
}

func framingError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrFraming}, args...)...)
}

// read reads exactly one response from r. Any byte after the response's
// end is an error: the engine never pipelines, so nothing may follow.
func (rr *respReader) read(r io.Reader) (response, error) {
	rr.reset()
	for {
		m, err := r.Read(rr.space())
		if done, err := rr.feed(m, err); done {
			if err != nil {
				return response{}, err
			}
			return rr.resp, nil
		}
	}
}

// reset starts a new response.
func (rr *respReader) reset() {
	rr.n, rr.scanned, rr.hdrEnd, rr.have, rr.clen, rr.resp = 0, 0, -1, 0, 0, response{}
}

// space is where the next read goes: after the header bytes so far, or,
// once the header block is in, the whole buffer (body bytes are counted,
// not kept).
func (rr *respReader) space() []byte {
	if rr.hdrEnd < 0 {
		return rr.buf[rr.n:]
	}
	return rr.buf
}

// feed takes a read of m bytes into space() and its error. done means the
// response is complete (rr.resp) or failed (err).
func (rr *respReader) feed(m int, rerr error) (done bool, err error) {
	m = max(m, 0)
	if rr.hdrEnd < 0 {
		buf := rr.buf
		rr.n += m
		if m > 0 {
			// Find \r\n\r\n, looking back 3 bytes across the read boundary.
			for i := max(rr.scanned-3, 0); i+3 < rr.n; i++ {
				if buf[i] == '\r' && buf[i+1] == '\n' && buf[i+2] == '\r' && buf[i+3] == '\n' {
					rr.hdrEnd = i + 4
					break
				}
			}
			rr.scanned = rr.n
		}
		if rr.hdrEnd < 0 {
			switch {
			case rerr == io.EOF && rr.n > 0:
				return true, framingError("connection closed inside the header block")
			case rerr != nil:
				return true, rerr
			case rr.n == len(buf):
				return true, framingError("header block larger than %d bytes", len(buf))
			}
			return false, nil
		}
		resp, clen, err := parseHeader(buf[:rr.hdrEnd])
		if err != nil {
			return true, err
		}
		rr.resp, rr.clen, rr.have = resp, clen, int64(rr.n-rr.hdrEnd)
	} else {
		rr.have += int64(m)
	}
	switch {
	case rr.have > rr.clen:
		return true, framingError("%d bytes past Content-Length %d", rr.have-rr.clen, rr.clen)
	case rr.have == rr.clen:
		return true, nil
	case rerr == io.EOF:
		return true, framingError("connection closed after %d of %d body bytes", rr.have, rr.clen)
	case rerr != nil:
		return true, rerr
	}
	return false, nil
}

// parseHeader reads the status line and the headers that frame the body.
func parseHeader(b []byte) (response, int64, error) {
	var resp response
	// "HTTP/1.x NNN"
	if len(b) < 12 || string(b[:7]) != "HTTP/1." || b[8] != ' ' ||
		!isDigit(b[9]) || !isDigit(b[10]) || !isDigit(b[11]) || (len(b) > 12 && b[12] != ' ' && b[12] != '\r') {
		end := min(len(b), 40)
		return resp, 0, framingError("bad status line %q", b[:end])
	}
	resp.status = int(b[9]-'0')*100 + int(b[10]-'0')*10 + int(b[11]-'0')
	if b[7] == '0' {
		resp.close = true // HTTP/1.0 closes unless told otherwise
	}
	clen := int64(-1)
	i := indexCRLF(b, 0) + 2
	for i < len(b)-2 {
		end := indexCRLF(b, i)
		line := b[i:end]
		i = end + 2
		colon := -1
		for j, c := range line {
			if c == ':' {
				colon = j
				break
			}
		}
		if colon <= 0 {
			return resp, 0, framingError("bad header line %q", line)
		}
		name, val := line[:colon], trimSpace(line[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			v, ok := parseUint(val)
			if !ok || (clen >= 0 && v != clen) {
				return resp, 0, framingError("bad Content-Length %q", val)
			}
			clen = v
		case equalFold(name, "transfer-encoding"):
			return resp, 0, framingError("Transfer-Encoding %q not supported", val)
		case equalFold(name, "connection"):
			if equalFold(val, "close") {
				resp.close = true
			} else if equalFold(val, "keep-alive") {
				resp.close = false
			}
		}
	}
	switch {
	case resp.status < 200 || resp.status == 204 || resp.status == 304:
		if clen > 0 {
			return resp, 0, framingError("status %d with Content-Length %d", resp.status, clen)
		}
		clen = 0
	case clen < 0:
		return resp, 0, framingError("status %d without Content-Length", resp.status)
	}
	return resp, clen, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func indexCRLF(b []byte, from int) int {
	for i := from; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return i
		}
	}
	return len(b)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares ASCII b with lower-case s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

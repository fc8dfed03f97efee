package fastcgi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chunkReader returns its data at most n bytes per Read, to exercise
// records split across reads.
type chunkReader struct {
	data []byte
	n    int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), r.n)], r.data)
	r.data = r.data[k:]
	return k, nil
}

// fuzzConn is an in-memory connection: reads come from data, writes
// are collected. It is safe for the handler goroutines of streamed
// requests.
type fuzzConn struct {
	mu     sync.Mutex
	in     chunkReader
	out    bytes.Buffer
	closed bool
}

func (c *fuzzConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.in.Read(p)
}

func (c *fuzzConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.out.Write(p)
}

func (c *fuzzConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// seedStreams are byte streams a web server could send, good and bad.
func seedStreams() [][]byte {
	hello := encodeRequest(1, true, nginxParams("GET", "/hello"), nil)
	post := encodeRequest(1, true, with(nginxParams("POST", "/"), pair{"CONTENT_LENGTH", "300"}), bytes.Repeat([]byte("p"), 300))
	var gv []byte
	for _, n := range []string{"FCGI_MAX_CONNS", "FCGI_MAX_REQS", "FCGI_MPXS_CONNS"} {
		gv = appendPair(gv, n, "")
	}
	mpx := appendBegin(nil, 1, true)
	mpx = appendBegin(mpx, 2, true)
	mpx = appendParams(mpx, 2, nginxParams("GET", "/two"))
	mpx = appendParams(mpx, 1, nginxParams("GET", "/one"))
	mpx = appendStdin(mpx, 1, nil)
	mpx = appendStdin(mpx, 2, nil)
	abort := appendBegin(nil, 1, true)
	abort = appendParams(abort, 1, nginxParams("POST", "/"))
	abort = appendRecord(abort, typeStdin, 1, bytes.Repeat([]byte("a"), 200))
	abort = appendRecord(abort, typeAbortRequest, 1, nil)
	return [][]byte{
		hello,
		append(append([]byte(nil), hello...), hello...),
		post,
		encodeRequest(1, false, nginxParams("GET", "/"), nil),
		appendRecord(nil, typeGetValues, 0, gv),
		appendRecord(nil, 99, 0, []byte("x")),
		appendRecord(nil, typeBeginRequest, 1, []byte{0, 3, 0, 0, 0, 0, 0, 0}),
		mpx,
		abort,
		append(appendBegin(nil, 1, true), appendBegin(nil, 1, true)...),
		{1, typeParams, 0, 1, 0xff, 0xff, 0, 0},
	}
}

// FuzzRecordReader reads arbitrary bytes, split into reads of every size,
// as records, and wants exactly what a straightforward decoder makes of
// them.
func FuzzRecordReader(f *testing.F) {
	for _, s := range seedStreams() {
		f.Add(uint16(7), s)
		f.Add(uint16(65535), s)
	}
	// Records larger than the read buffer, whole and cut short.
	big := appendRecord(nil, typeParams, 1, bytes.Repeat([]byte("p"), 20000))
	big = appendRecord(big, 42, 1, bytes.Repeat([]byte("u"), 9000))
	big = appendRecord(big, typeStdin, 1, bytes.Repeat([]byte("s"), 30001))
	f.Add(uint16(4096), big)
	f.Add(uint16(8999), big[:len(big)-100])
	f.Fuzz(func(t *testing.T, chunk uint16, data []byte) {
		srv := &Server{}
		c := newConn(srv, &fuzzConn{in: chunkReader{data: data, n: int(chunk%9000) + 1}})
		c.small = srv.getReadBuf()
		c.rbuf = *c.small
		rest := data
		for {
			if len(rest) < headerLen {
				_, _, err := c.next()
				require.Error(t, err, "record from %d bytes", len(rest))
				return
			}
			if rest[0] != version1 {
				_, _, err := c.next()
				require.ErrorIs(t, err, errVersion)
				return
			}
			typ, id := rest[1], uint16(rest[2])<<8|uint16(rest[3])
			length := int(rest[4])<<8 | int(rest[5])
			size := headerLen + length + int(rest[6])
			if size <= readBufSize {
				h, content, err := c.next()
				if len(rest) < size {
					require.Error(t, err, "truncated record")
					return
				}
				require.NoError(t, err)
				require.Equal(t, typ, h.typ)
				require.Equal(t, id, h.id)
				require.Equal(t, rest[headerLen:headerLen+int(h.length)], content)
				require.Equal(t, size, h.size())
				rest = rest[size:]
				continue
			}
			// Larger than the read buffer: PARAMS and STDIN come in
			// non-empty pieces, GET_VALUES and BEGIN_REQUEST are
			// errors, other types come once without their content.
			switch typ {
			case typeParams, typeStdin:
				var got []byte
				for len(got) < length {
					h, content, err := c.next()
					if err != nil {
						require.Less(t, len(rest), headerLen+length, "error before the record's end: %v", err)
						return
					}
					require.Equal(t, typ, h.typ)
					require.Equal(t, id, h.id)
					require.NotEmpty(t, content)
					got = append(got, content...)
				}
				require.Equal(t, rest[headerLen:headerLen+length], got)
			case typeGetValues:
				_, _, err := c.next()
				require.ErrorIs(t, err, errBigValues)
				return
			case typeBeginRequest:
				_, _, err := c.next()
				require.ErrorIs(t, err, errBeginLen)
				return
			default:
				h, content, err := c.next()
				require.NoError(t, err)
				require.Equal(t, typ, h.typ)
				require.Empty(t, content)
			}
			if len(rest) < size {
				_, _, err := c.next()
				require.Error(t, err, "truncated record")
				return
			}
			rest = rest[size:]
		}
	})
}

// FuzzConn runs a whole connection on arbitrary input with small limits
// and checks that it terminates and answers with well-formed records:
// every END_REQUEST answers a BEGIN_REQUEST, nothing is sent for an id
// after its END_REQUEST unless it was begun again.
func FuzzConn(f *testing.F) {
	for _, s := range seedStreams() {
		f.Add(uint16(64), s)
	}
	f.Fuzz(func(t *testing.T, chunk uint16, data []byte) {
		srv := &Server{
			MaxRequestsPerConn: 3,
			MaxParamsBytes:     2048,
			MaxParams:          64,
			MaxBufferedBody:    128,
			Handler:            http.HandlerFunc(echoHandler),
			ErrorLog:           nil,
		}
		fc := &fuzzConn{in: chunkReader{data: data, n: int(chunk%4096) + 1}}
		c := newConn(srv, fc)
		wd := time.AfterFunc(5*time.Second, func() {
			buf := make([]byte, 1<<20)
			panic(string(buf[:runtime.Stack(buf, true)]))
		})
		c.serve() // returns only when every handler has returned
		wd.Stop()
		fc.mu.Lock()
		out := append([]byte(nil), fc.out.Bytes()...)
		fc.mu.Unlock()

		begins := 0
		for rest := data; len(rest) >= headerLen && rest[0] == version1; {
			h, _ := parseHeader(rest)
			if h.typ == typeBeginRequest {
				begins++
			}
			if len(rest) < h.size() {
				break
			}
			rest = rest[h.size():]
		}
		ends := 0
		open := map[uint16]bool{}
		rr := newRecordReader(bytes.NewReader(out))
		for {
			h, content, err := rr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "malformed output")
			require.Equal(t, int(h.padding), -int(h.length)&7, "padding")
			switch h.typ {
			case typeStdout, typeStderr:
				open[h.id] = true
			case typeEndRequest:
				require.Len(t, content, 8)
				ends++
				delete(open, h.id)
			case typeGetValuesResult, typeUnknownType:
				require.Zero(t, h.id)
			default:
				t.Fatalf("sent a record of type %d", h.typ)
			}
		}
		require.LessOrEqual(t, ends, begins, "more END_REQUESTs than BEGIN_REQUESTs")
	})
}

package load

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		status  int
		close   bool
		framing bool // want ErrFraming
		// laterIfSplit: read byte by byte, the reader sees the stray bytes
		// only at the next response, which they break.
		laterIfSplit bool
		eof          bool // want io.EOF
	}{
		{name: "ok", in: okResponse, status: 200},
		{name: "nginx", in: "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\nHello World\n", status: 200},
		{name: "case and spaces", in: "HTTP/1.1 404 Not Found\r\ncontent-LENGTH:  3 \r\n\r\nabc", status: 404},
		{name: "no reason", in: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", status: 200},
		{name: "connection close", in: "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", status: 503, close: true},
		{name: "http 1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi", status: 200, close: true},
		{name: "204 no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204},
		{name: "no content length", in: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nHello", framing: true},
		{name: "chunked", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n0\r\n\r\n", framing: true},
		{name: "bad content length", in: "HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\nx", framing: true},
		{name: "two content lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", framing: true},
		{name: "bytes past body", in: okResponse + "extra", framing: true, laterIfSplit: true},
		{name: "short body", in: "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nHello", framing: true},
		{name: "bad status line", in: "HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n", framing: true},
		{name: "not http", in: "SSH-2.0-OpenSSH_9.2\r\n\r\n", framing: true},
		{name: "bad header line", in: "HTTP/1.1 200 OK\r\nno colon here\r\nContent-Length: 0\r\n\r\n", framing: true},
		{name: "closed in header", in: "HTTP/1.1 200 OK\r\nContent-Len", framing: true},
		{name: "header too large", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 5000) + "\r\nContent-Length: 0\r\n\r\n", framing: true},
		{name: "closed before answer", in: "", eof: true},
	}
	for _, tt := range tests {
		for _, split := range []bool{false, true} {
			name := tt.name
			if split {
				name += "/byte by byte"
			}
			t.Run(name, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if split {
					r = iotest.OneByteReader(r)
				}
				rr := respReader{buf: make([]byte, 4096)}
				resp, err := rr.read(r)
				if split && tt.laterIfSplit {
					require.NoError(t, err)
					_, err = rr.read(r)
				}
				switch {
				case tt.framing:
					require.ErrorIs(t, err, ErrFraming)
				case tt.eof:
					require.ErrorIs(t, err, io.EOF)
				default:
					require.NoError(t, err)
					assert.Equal(t, tt.status, resp.status)
					assert.Equal(t, tt.close, resp.close)
				}
			})
		}
	}
}

// TestReadResponseLargeBody: a body larger than the buffer is read through.
func TestReadResponseLargeBody(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	in := "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + body
	rr := respReader{buf: make([]byte, 4096)}
	resp, err := rr.read(strings.NewReader(in))
	require.NoError(t, err)
	assert.Equal(t, 200, resp.status)
}

func TestReadResponseAllocatesNothing(t *testing.T) {
	rr := respReader{buf: make([]byte, 4096)}
	in := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\nHello World\n")
	r := bytes.NewReader(in)
	allocs := testing.AllocsPerRun(1000, func() {
		r.Reset(in)
		if _, err := rr.read(r); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

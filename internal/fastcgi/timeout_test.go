package fastcgi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closedWithin wants the server to close cc within limit, reading and
// discarding whatever it sends first, and returns how long that took.
// A read deadline expiring on the client side means the server kept the
// connection open.
func closedWithin(t *testing.T, cc *clientConn, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	cc.c.SetReadDeadline(began.Add(limit))
	_, err := io.Copy(io.Discard, cc.c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", limit)
	}
	if err != nil {
		assert.True(t, strings.Contains(err.Error(), "reset"), "%v", err)
	}
	return time.Since(began)
}

// TestTimeouts drives each slow or silent peer over a real socket and
// wants its connection closed by the right deadline, while a fresh
// client is still answered.
func TestTimeouts(t *testing.T) {
	const short, long = 300 * time.Millisecond, time.Hour
	params := appendParams(nil, 1, nginxParams("GET", "/hello"))
	firstParams := params[:headerLen+int(params[4])<<8|int(params[5])+int(params[6])] // one PARAMS record, not the empty one
	cases := []struct {
		name string
		srv  func() *Server
		send func(t *testing.T, cc *clientConn)
	}{
		{"idle, never sent a byte", func() *Server { return &Server{IdleTimeout: short, ReadHeaderTimeout: long} }, func(*testing.T, *clientConn) {}},
		{"idle after a request", func() *Server { return &Server{IdleTimeout: short, ReadHeaderTimeout: long} }, func(t *testing.T, cc *clientConn) {
			expectHello(t, cc, 1)
			expectHello(t, cc, 1)
		}},
		{"half-sent: BEGIN_REQUEST and one PARAMS", func() *Server { return &Server{ReadHeaderTimeout: short, IdleTimeout: long} }, func(t *testing.T, cc *clientConn) {
			cc.send(t, append(appendBegin(nil, 1, true), firstParams...))
		}},
		{"half-sent: part of BEGIN_REQUEST", func() *Server { return &Server{ReadHeaderTimeout: short, IdleTimeout: long} }, func(t *testing.T, cc *clientConn) {
			cc.send(t, appendBegin(nil, 1, true)[:5])
		}},
		{"head trickled a byte at a time", func() *Server { return &Server{ReadHeaderTimeout: short, IdleTimeout: long} }, func(t *testing.T, cc *clientConn) {
			b := append(appendBegin(nil, 1, true), params...)
			for i := range b {
				if _, err := cc.c.Write(b[i : i+1]); err != nil {
					return // closed: what the test wants
				}
				time.Sleep(20 * time.Millisecond)
			}
		}},
		{"STDIN never ends", func() *Server { return &Server{IdleTimeout: short, ReadHeaderTimeout: long} }, func(t *testing.T, cc *clientConn) {
			cc.send(t, append(appendBegin(nil, 1, true), params...))
			cc.send(t, appendRecord(nil, typeStdin, 1, []byte("part of a body")))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			addr := startFast(t, tc.srv())
			cc := dial(t, "tcp", addr)
			tc.send(t, cc)
			took := closedWithin(t, cc, 10*time.Second)
			assert.Less(t, took, 5*time.Second)
			expectHello(t, dial(t, "tcp", addr), 1)
		})
	}
}

// TestTimeoutsSpareActivePeers: deadlines must not cut a connection
// that keeps working, however long it lives.
func TestTimeoutsSpareActivePeers(t *testing.T) {
	srv := &Server{IdleTimeout: 200 * time.Millisecond, ReadHeaderTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond}
	cc := dial(t, "tcp", startFast(t, srv))
	end := time.Now().Add(time.Second)
	for n := 0; time.Now().Before(end); n++ {
		expectHello(t, cc, 1)
		time.Sleep(time.Duration(n%4) * 40 * time.Millisecond) // below IdleTimeout
	}
	// A head split in two, both halves well within ReadHeaderTimeout.
	req := encodeRequest(1, true, nginxParams("GET", "/hello"), nil)
	cc.send(t, req[:30])
	time.Sleep(50 * time.Millisecond)
	res := cc.do(t, req[30:], 1)
	assert.Contains(t, string(res.stdout), "Hello World\n")
}

// TestWriteTimeout: a peer that sends a request and never reads the
// response loses its connection instead of holding the handler.
func TestWriteTimeout(t *testing.T) {
	const size = 64 << 20 // far more than the socket buffers hold
	wrote := make(chan error, 1)
	srv := &Server{WriteTimeout: 300 * time.Millisecond, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			echoHandler(w, r)
			return
		}
		chunk := make([]byte, 64<<10)
		var err error
		for n := 0; n < size && err == nil; n += len(chunk) {
			_, err = w.Write(chunk)
		}
		wrote <- err
	})}
	addr := startFast(t, srv)
	cc := dial(t, "tcp", addr)
	cc.send(t, encodeRequest(1, true, nginxParams("GET", "/big"), nil))
	select {
	case err := <-wrote:
		require.Error(t, err, "the handler's writes should fail once the peer stops reading")
	case <-time.After(10 * time.Second):
		t.Fatal("the handler is still writing to a peer that does not read")
	}
	closedWithin(t, cc, 10*time.Second)
	expectHello(t, dial(t, "tcp", addr), 1)
}

// TestIdleConnsOverMaxConns: connections beyond MaxConns wait in the
// backlog; idle ones holding every slot are closed by IdleTimeout, so
// the listener answers again.
func TestIdleConnsOverMaxConns(t *testing.T) {
	srv := &Server{MaxConns: 4, IdleTimeout: 300 * time.Millisecond}
	addr := startFast(t, srv)
	for range srv.MaxConns {
		dial(t, "tcp", addr) // and never send anything
	}
	time.Sleep(50 * time.Millisecond) // let them take the slots
	began := time.Now()
	expectHello(t, dial(t, "tcp", addr), 1)
	assert.GreaterOrEqual(t, time.Since(began), 200*time.Millisecond, "served before any slot was free: MaxConns not in force?")
}

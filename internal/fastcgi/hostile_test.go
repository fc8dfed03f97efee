package fastcgi

import (
	"bytes"
	"context"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hostile peers, over real sockets.

// paramsRecord is one full PARAMS record for id 1.
func paramsRecord() []byte {
	return appendRecord(nil, typeParams, 1, bytes.Repeat([]byte("x"), maxContent))
}

// TestParamsFloodClosed: a peer that sends PARAMS without end is answered
// 431 and closed once it passes MaxParamsBytes, not read until the head
// timeout (an hour here).
func TestParamsFloodClosed(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			l := listenTCP(t)
			if network == "unix" {
				l.Close()
				l = listenUnix(t)
			}
			addr := serveFast(t, &Server{Handler: http.HandlerFunc(helloHandler), ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour}, l)
			cc := dial(t, network, addr)
			batch := bytes.Repeat(paramsRecord(), 16) // 1 MiB
			_, err := cc.c.Write(appendBegin(nil, 1, true))
			require.NoError(t, err)
			sent := 0
			cc.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			for sent < 64<<20 {
				n, err := cc.c.Write(batch)
				sent += n
				if err != nil {
					break
				}
			}
			t.Logf("the peer sent %d KB before the server closed", sent>>10)
			// The socket buffers (megabytes over TCP) and the limit, not
			// the 64 MB the peer had to give.
			assert.Less(t, sent, 16<<20, "the server kept reading past the limit")
			var res result
			cc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if err := cc.rr.readResult(1, &res); err == nil {
				assert.Contains(t, string(res.stdout), "431")
			}
			closedWithin(t, cc, 5*time.Second)
		})
	}
}

// heapPerConn opens n connections to addr, sends each one prefix and
// leaves it waiting, and returns the growth of the heap in use per
// connection once the server has read what they sent.
func heapPerConn(t *testing.T, network, addr string, n int, prefix []byte) int64 {
	t.Helper()
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC() // and what sync.Pools held
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial(network, addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		if prefix != nil {
			_, err = c.Write(prefix)
			require.NoError(t, err)
		}
		conns[i] = c
	}
	time.Sleep(500 * time.Millisecond) // the server reads them
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return (int64(ms.HeapInuse) - int64(before)) / int64(n)
}

// TestWaitingConnsHoldNoBuffers: a connection waiting for its peer holds
// no read buffer, and no 64 KiB record buffer while a large record is
// half sent: the per-connection heap stays far below those buffers.
func TestWaitingConnsHoldNoBuffers(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's shadow memory")
	}
	req := encodeRequest(1, true, nginxParams("GET", "/hello"), nil)
	halfRecord := appendBegin(nil, 1, true)
	halfRecord = append(halfRecord, paramsRecord()[:headerLen+1000]...)
	cases := []struct {
		name   string
		prefix []byte
		max    int64 // heap per connection
	}{
		{"idle", nil, 4 << 10},
		{"after a request", req, 4 << 10},
		{"half a 64 KiB record", halfRecord, 16 << 10},
	}
	for _, network := range []string{"tcp", "unix"} {
		for _, tc := range cases {
			t.Run(network+"/"+tc.name, func(t *testing.T) {
				l := listenTCP(t)
				if network == "unix" {
					l.Close()
					l = listenUnix(t)
				}
				addr := serveFast(t, &Server{Handler: http.HandlerFunc(helloHandler), ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour}, l)
				per := heapPerConn(t, network, addr, 200, tc.prefix)
				t.Logf("%d bytes of heap per connection", per)
				assert.Less(t, per, tc.max)
			})
		}
	}
}

// TestShutdownCutsWaitingAndStalled: Shutdown closes at once connections
// whose request has not fully arrived and connections whose peer does not
// read, and waits for a request being answered.
func TestShutdownCutsWaitingAndStalled(t *testing.T) {
	release := make(chan struct{})
	var inHandler sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			chunk := make([]byte, 64<<10)
			for range 1024 { // 64 MiB, more than socket buffers hold
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/slow":
			inHandler.Done()
			<-release
			helloHandler(w, r)
		default:
			helloHandler(w, r)
		}
	})
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			l := listenTCP(t)
			if network == "unix" {
				l.Close()
				l = listenUnix(t)
			}
			s := &Server{Handler: h, ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour, WriteTimeout: time.Hour}
			done := make(chan error, 1)
			go func() { done <- s.Serve(l) }()
			addr := l.Addr().String()
			half := appendBegin(nil, 1, true)
			half = appendParams(half, 1, nginxParams("GET", "/")) // no end of STDIN
			half = half[:len(half)-headerLen]                     // nor of PARAMS
			var waiting []*clientConn
			for range 20 {
				cc := dial(t, network, addr)
				_, err := cc.c.Write(half)
				require.NoError(t, err)
				waiting = append(waiting, cc)
			}
			stalled := dial(t, network, addr)
			_, err := stalled.c.Write(encodeRequest(1, true, nginxParams("GET", "/big"), nil))
			require.NoError(t, err)
			inHandler.Add(1)
			busy := dial(t, network, addr)
			_, err = busy.c.Write(encodeRequest(1, true, nginxParams("GET", "/slow"), nil))
			require.NoError(t, err)
			inHandler.Wait()
			time.Sleep(2 * StalledWrite)

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			shut := make(chan error, 1)
			began := time.Now()
			go func() { shut <- s.Shutdown(ctx) }()
			for _, cc := range waiting {
				closedWithin(t, cc, time.Second)
			}
			closedWithin(t, stalled, 2*time.Second)
			t.Logf("waiting and stalled peers closed after %v", time.Since(began))
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned %v while a request was being answered", err)
			case <-time.After(200 * time.Millisecond):
			}
			close(release)
			var res result
			busy.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			require.NoError(t, busy.rr.readResult(1, &res), "the request being answered was cut")
			assert.Contains(t, string(res.stdout), "Hello World")
			require.NoError(t, <-shut)
			assert.Equal(t, 21, s.Cut())
			<-done
			release = make(chan struct{})
		})
	}
}

// TestRequestIDInUse: a BEGIN_REQUEST for an id whose request is still in
// progress is refused by closing the connection, and the reason logged.
func TestRequestIDInUse(t *testing.T) {
	var logBuf syncBuffer
	s := &Server{Handler: http.HandlerFunc(helloHandler), MaxRequestsPerConn: 2, ErrorLog: log.New(&logBuf, "", 0)}
	addr := startFast(t, s)
	cc := dial(t, "tcp", addr)
	b := appendBegin(nil, 7, true)
	b = appendParams(b, 7, nginxParams("POST", "/"))
	b = append(b, appendRecord(nil, typeStdin, 7, []byte("part of a body"))...)
	b = appendBegin(b, 7, true) // again, the first still open
	_, err := cc.c.Write(b)
	require.NoError(t, err)
	expectClosed(t, cc)
	assert.Contains(t, logBuf.String(), "request id 7, which is still in progress")
}

// TestRequestIDsWrap: a kept connection carries more than 65,535 requests,
// its ids wrapping, each answered under its id (an id is free again once
// its END_REQUEST has gone out).
func TestRequestIDsWrap(t *testing.T) {
	if testing.Short() {
		t.Skip("70,000 requests")
	}
	addr := startFast(t, &Server{Handler: http.HandlerFunc(helloHandler)})
	cc := dial(t, "tcp", addr)
	const total, batch = 70000, 100
	params := nginxParams("GET", "/hello")
	var res result
	for n := 0; n < total; n += batch {
		var b []byte
		for i := range batch {
			b = append(b, encodeRequest(uint16((n+i)%65535+1), true, params, nil)...)
		}
		cc.c.SetDeadline(time.Now().Add(10 * time.Second))
		_, err := cc.c.Write(b)
		require.NoError(t, err)
		for i := range batch {
			require.NoError(t, cc.rr.readResult(uint16((n+i)%65535+1), &res), "request %d", n+i)
			require.Empty(t, res.others, "records of other ids before request %d's end", n+i)
			require.Contains(t, string(res.stdout), "Hello World")
		}
	}
}

// syncBuffer is a bytes.Buffer for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

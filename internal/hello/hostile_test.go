package hello

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fcgiclient"
)

// fcgiTargets are the FastCGI listeners under test.
func fcgiTargets() []target {
	var ts []target
	for _, tg := range targets {
		if tg.kind != HTTP {
			ts = append(ts, tg)
		}
	}
	return ts
}

// closedWithin wants the server to close c within limit, discarding what
// it sends first; the client's deadline expiring means it did not.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	c.SetReadDeadline(began.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", limit)
	}
	if err != nil {
		assert.True(t, strings.Contains(err.Error(), "reset"), "%v", err)
	}
	return time.Since(began)
}

// expectServed wants a fresh client on l answered.
func expectServed(t *testing.T, l Listener) {
	t.Helper()
	c := dial(t, l)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := fcgiclient.NewConn(c).Do(context.Background(), &fcgiclient.Request{})
	require.NoError(t, err, "a fresh client is not answered")
	assert.Equal(t, 200, resp.Status)
	assert.Equal(t, Body, string(resp.Body))
}

// halfSent is BEGIN_REQUEST and the first PARAMS record of a request,
// without the empty PARAMS record and STDIN.
func halfSent(id uint16) []byte {
	b := fcgiclient.AppendBeginRequest(nil, id, fcgiclient.RoleResponder, fcgiclient.FlagKeepConn)
	return fcgiclient.AppendRecord(b, fcgiclient.TypeParams, id, fcgiclient.AppendPairs(nil, (&fcgiclient.Request{}).CGIParams()))
}

func TestFastCGIHeadTimeout(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: time.Hour})
			c := dial(t, l)
			_, err := c.Write(halfSent(1))
			require.NoError(t, err)
			took := closedWithin(t, c, 10*time.Second)
			assert.Less(t, took, 5*time.Second)
			expectServed(t, l)
		})
	}
}

// TestFastCGIHeadTimeoutSparesRequests: a kept connection that sends
// requests more slowly than ReadHeaderTimeout, each request whole, is
// not cut.
func TestFastCGIHeadTimeoutSparesRequests(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{ReadHeaderTimeout: 100 * time.Millisecond, IdleTimeout: time.Hour})
			c := fcgiclient.NewConn(dial(t, l))
			for range 4 {
				c.NetConn().SetDeadline(time.Now().Add(10 * time.Second))
				resp, err := c.Do(context.Background(), &fcgiclient.Request{})
				require.NoError(t, err)
				assert.Equal(t, 200, resp.Status)
				time.Sleep(250 * time.Millisecond)
			}
		})
	}
}

// TestNeverReadingPeer: a peer that sends complete requests as fast as it
// can and never reads a response must not make the server start handlers
// without bound, and loses its connection. (TestBlockedWrite covers the
// server's writes blocking for good.)
func TestNeverReadingPeer(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			const idle = time.Second
			start(t, []Listener{l}, Options{IdleTimeout: idle, ReadHeaderTimeout: idle})
			base := runtime.NumGoroutine()
			c := dial(t, l)
			req := (&fcgiclient.Request{}).Encode(nil)
			batch := make([]byte, 0, 64*len(req))
			for range 64 {
				batch = append(batch, req...)
			}
			sent := make(chan int, 1)
			go func() {
				n := 0
				c.SetWriteDeadline(time.Now().Add(idle / 2))
				// Bounded, so that the server, slow under the race
				// detector, gets through what the socket buffers hold
				// (megabytes over TCP) well within the test's wait.
				for n < 2048 {
					if _, err := c.Write(batch); err != nil {
						break
					}
					n += 64
				}
				sent <- n
			}()
			n := <-sent
			// net/http/fcgi used to start a goroutine (and a 64 KiB
			// buffer) for every request read.
			grown := runtime.NumGoroutine() - base
			t.Logf("the peer sent %d requests; %d more goroutines", n, grown)
			assert.Less(t, grown, 4*maxInService, "goroutines started for a peer that never reads")
			// Closed by whichever comes first: a write blocked for
			// IdleTimeout, the head of a request cut short, or idleness.
			closedWithin(t, c, 10*time.Second)
			expectServed(t, l)
		})
	}
}

// TestBlockedWrite: a peer that asks for a large response and never
// reads it loses its connection after WriteTimeout, on every kind.
func TestBlockedWrite(t *testing.T) {
	const size = 64 << 20 // far more than socket buffers hold
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			NewHandler().ServeHTTP(w, r)
			return
		}
		chunk := make([]byte, 64<<10)
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{Handler: h, WriteTimeout: 300 * time.Millisecond})
			c := dial(t, l)
			if tg.kind == HTTP {
				_, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
				require.NoError(t, err)
			} else {
				_, err := c.Write((&fcgiclient.Request{URI: "/big"}).Encode(nil))
				require.NoError(t, err)
			}
			time.Sleep(2 * time.Second) // and read nothing
			// What the socket buffers held, then the end: not the whole
			// response, which the server gave up on.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := io.Copy(io.Discard, c)
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection stayed open")
			assert.Less(t, n, int64(size), "the whole response was delivered to a peer that did not read")
			if tg.kind == HTTP {
				c := dial(t, l)
				c.SetDeadline(time.Now().Add(10 * time.Second))
				assert.Equal(t, 200, httpGet(t, c, bufio.NewReader(c), "GET").status)
			} else {
				expectServed(t, l)
			}
		})
	}
}

// TestManagementIDRequest: BEGIN_REQUEST with request id 0, which belongs
// to management records, is not served as a request.
func TestManagementIDRequest(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{})
			c := dial(t, l)
			r := &fcgiclient.Request{}
			b := fcgiclient.AppendBeginRequest(nil, 0, fcgiclient.RoleResponder, fcgiclient.FlagKeepConn)
			b = fcgiclient.AppendStream(b, fcgiclient.TypeParams, 0, fcgiclient.AppendPairs(nil, r.CGIParams()))
			b = fcgiclient.AppendStream(b, fcgiclient.TypeStdin, 0, nil)
			_, err := c.Write(b)
			require.NoError(t, err)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			rd := fcgiclient.NewReader(c)
			for {
				rec, err := rd.Next()
				if err != nil {
					var ne net.Error
					require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection stayed open")
					break
				}
				assert.NotEqual(t, fcgiclient.TypeStdout, rec.Type, "answered a request with id 0")
			}
			expectServed(t, l)
		})
	}
}

// bigHandler answers /big with 64 MiB, more than socket buffers hold,
// and everything else as NewHandler does.
func bigHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/big" {
			NewHandler().ServeHTTP(w, r)
			return
		}
		chunk := make([]byte, 64<<10)
		for range 1024 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
}

// TestShutdownCutsHostilePeers: at shutdown, connections whose request
// has not fully arrived and a peer that does not read its response are
// closed at once on every listener: Serve returns nil well within the
// grace and says how many it cut.
func TestShutdownCutsHostilePeers(t *testing.T) {
	for _, tg := range targets {
		for _, peer := range []string{"half-sent", "never-reading"} {
			t.Run(tg.name+"/"+peer, func(t *testing.T) {
				l := listen(t, tg)
				cut := -1
				r := start(t, []Listener{l}, Options{
					Handler: bigHandler(), Grace: 5 * time.Second,
					ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour, WriteTimeout: time.Hour,
					Stopped: func(n int) { cut = n },
				})
				want := 1
				if peer == "half-sent" {
					want = 50
					for range want {
						c := dial(t, l)
						var err error
						if tg.kind == HTTP {
							_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost:")
						} else {
							_, err = c.Write(halfSent(1))
						}
						require.NoError(t, err)
					}
				} else {
					c := dial(t, l)
					var err error
					if tg.kind == HTTP {
						_, err = io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
					} else {
						_, err = c.Write((&fcgiclient.Request{URI: "/big"}).Encode(nil))
					}
					require.NoError(t, err)
				}
				time.Sleep(time.Second) // read, and the socket buffers full
				began := time.Now()
				require.NoError(t, r.stop(t), "Serve's error")
				took := time.Since(began)
				t.Logf("stopped in %v, cut %d", took, cut)
				assert.Less(t, took, time.Second)
				assert.Equal(t, want, cut)
			})
		}
	}
}

// TestIdleCloseBound: a connection idle after a request closes between
// IdleTimeout and 5/4 of it after its last byte, whenever that byte
// came, on every FastCGI listener; and an HTTP request body that stops
// arriving ends the connection within 9/8 of it.
func TestIdleCloseBound(t *testing.T) {
	const idle = 400 * time.Millisecond
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{IdleTimeout: idle, ReadHeaderTimeout: time.Hour, WriteTimeout: time.Hour})
			// Eight connections whose last bytes come an eighth of a
			// period apart, so one of them falls just after any check.
			var wg sync.WaitGroup
			took := make([]time.Duration, 8)
			for i := range took {
				time.Sleep(idle / 8)
				c := dial(t, l)
				if tg.kind == HTTP {
					// A body announced and stopped: answered 405, then
					// the rest of the body awaited.
					_, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
					require.NoError(t, err)
				} else {
					c.SetDeadline(time.Now().Add(10 * time.Second))
					_, err := fcgiclient.NewConn(c).Do(context.Background(), &fcgiclient.Request{})
					require.NoError(t, err)
				}
				wg.Go(func() { took[i] = closedAfter(t, c, 10*time.Second) })
			}
			wg.Wait()
			t.Logf("closed after %v", took)
			for _, d := range took {
				assert.GreaterOrEqual(t, d, idle-50*time.Millisecond)
				assert.Less(t, d, idle*5/4+100*time.Millisecond)
			}
		})
	}
}

// closedAfter is closedWithin without assertions inside a goroutine.
func closedAfter(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	began := time.Now()
	c.SetReadDeadline(began.Add(limit))
	io.Copy(io.Discard, c)
	return time.Since(began)
}

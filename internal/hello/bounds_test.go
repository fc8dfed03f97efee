package hello

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fcgiclient"
)

// Hostile peers: each case is bounded in bytes (resident
// memory of the test process, server and client) or closed in time, on
// both transports, while a fresh client is still answered.

// rss is the process's resident set size in bytes.
func rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// baseRSS collects garbage and returns what stays resident.
func baseRSS(t *testing.T) int64 {
	t.Helper()
	runtime.GC()
	debug.FreeOSMemory()
	return rss(t)
}

// maxGrowth is the RSS growth a hostile case may cause. The unbounded
// server grows by the bytes the peers send (hundreds of MB here); the
// bounded ones by a few MB.
const maxGrowth = 48 << 20

// flood writes b to c again and again until total bytes are sent, the
// server closes the connection or limit passes; it returns what was sent.
func flood(c net.Conn, b []byte, total int, limit time.Duration) int {
	c.SetWriteDeadline(time.Now().Add(limit))
	n := 0
	for n < total {
		k, err := c.Write(b)
		n += k
		if err != nil {
			break
		}
	}
	return n
}

// TestFCGIParamsFlood: PARAMS records without end (golang/go#81548) must not
// grow the process; the head timeout is an hour, so only a bound in bytes
// can stop it.
func TestFCGIParamsFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("sends hundreds of MB")
	}
	params := fcgiclient.AppendRecord(nil, fcgiclient.TypeParams, 1, bytes.Repeat([]byte("x"), fcgiclient.MaxContent))
	batch := bytes.Repeat(params, 16) // 1 MiB
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour})
			base := baseRSS(t)
			const peers, each = 2, 96 << 20
			var wg sync.WaitGroup
			sent := make([]int, peers)
			for i := range peers {
				c := dial(t, l)
				_, err := c.Write(fcgiclient.AppendBeginRequest(nil, 1, fcgiclient.RoleResponder, fcgiclient.FlagKeepConn))
				require.NoError(t, err)
				wg.Go(func() { sent[i] = flood(c, batch, each, 20*time.Second) })
			}
			wg.Wait()
			grown := rss(t) - base
			t.Logf("peers sent %v bytes of PARAMS; RSS grew %d MB", sent, grown>>20)
			assert.Less(t, grown, int64(maxGrowth), "RSS growth")
			expectServed(t, l)
		})
	}
}

// TestFCGIParamsTooLarge: a request whose PARAMS pass the limit is answered
// 431 (or its connection closed), not served.
func TestFCGIParamsTooLarge(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			start(t, []Listener{l}, Options{})
			c := dial(t, l)
			r := &fcgiclient.Request{Header: http.Header{"X-Big": {strings.Repeat("y", maxParamsBytes)}}}
			_, err := c.Write(r.Encode(nil))
			require.NoError(t, err)
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := fcgiclient.NewConn(c).ReadResponse(1)
			if err == nil {
				t.Logf("answered %d", resp.Status)
				assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.Status)
			} else {
				t.Logf("closed: %v", err)
				var ne net.Error
				require.False(t, errors.As(err, &ne) && ne.Timeout(), "neither answered nor closed: %v", err)
			}
			expectServed(t, l)
		})
	}
}

// TestFCGIStdinOpenNeverReads: peers that begin request after request,
// each with a new id and its STDIN left open (or its head never ended:
// PARAMS but no STDIN), and read nothing, must not make net/http/fcgi
// hold requests and their goroutines without bound. (Over a unix socket
// net/http/fcgi happens to stall on the STDIN case: its reader blocks
// handing the body to a handler whose response write is blocked.)
func TestFCGIStdinOpenNeverReads(t *testing.T) {
	if testing.Short() {
		t.Skip("starts tens of thousands of requests")
	}
	const reqs = 30000
	params := fcgiclient.AppendPairs(nil, (&fcgiclient.Request{Method: "POST", Body: make([]byte, 100)}).CGIParams())
	streams := map[string][]byte{}
	for _, kind := range []string{"stdin-open", "heads-only"} {
		var stream []byte
		for id := range uint16(reqs) {
			stream = fcgiclient.AppendBeginRequest(stream, id+1, fcgiclient.RoleResponder, fcgiclient.FlagKeepConn)
			stream = fcgiclient.AppendStream(stream, fcgiclient.TypeParams, id+1, params)
			if kind == "stdin-open" {
				stream = fcgiclient.AppendRecord(stream, fcgiclient.TypeStdin, id+1, []byte("0123"))
			}
		}
		streams[kind] = stream
	}
	for kind, stream := range streams {
		for _, tg := range fcgiTargets() {
			t.Run(kind+"/"+tg.name, func(t *testing.T) {
				l := listen(t, tg)
				start(t, []Listener{l}, Options{ReadHeaderTimeout: time.Hour, IdleTimeout: time.Hour, WriteTimeout: time.Hour})
				base := baseRSS(t)
				const peers = 4
				var wg sync.WaitGroup
				sent := make([]int, peers)
				for i := range peers {
					c := dial(t, l)
					wg.Go(func() { sent[i] = flood(c, stream, len(stream), 10*time.Second) * reqs / len(stream) })
				}
				wg.Wait()
				time.Sleep(time.Second) // what was sent is read
				grown := rss(t) - base
				t.Logf("peers sent about %v requests; RSS grew %d MB", sent, grown>>20)
				assert.Less(t, grown, int64(maxGrowth), "RSS growth")
				expectServed(t, l)
			})
		}
	}
}

// TestFCGIIdleAfterStrayRecords: a connection idle after its last request
// closes after IdleTimeout whatever records followed the END_REQUEST (the
// wrapper used to count it busy for good), and does not hold up shutdown.
func TestFCGIIdleAfterStrayRecords(t *testing.T) {
	post := (&fcgiclient.Request{Method: "POST", Body: []byte("0123456789")}).Encode(nil)
	cases := []struct {
		name  string
		after []byte // sent once the response is read
	}{
		{"post", nil},
		{"stray stdin", fcgiclient.AppendRecord(nil, fcgiclient.TypeStdin, 1, []byte("late"))},
		{"stray empty stdin", fcgiclient.AppendRecord(nil, fcgiclient.TypeStdin, 1, nil)},
		{"abort", fcgiclient.AppendRecord(nil, fcgiclient.TypeAbortRequest, 1, nil)},
		{"unknown type", fcgiclient.AppendRecord(nil, 42, 1, []byte("12345678"))},
		{"unbegun id", fcgiclient.AppendRecord(nil, fcgiclient.TypeParams, 7, []byte("x"))},
	}
	for _, tg := range fcgiTargets() {
		for _, tc := range cases {
			t.Run(tg.name+"/"+tc.name, func(t *testing.T) {
				l := listen(t, tg)
				const idle = 200 * time.Millisecond
				r := start(t, []Listener{l}, Options{IdleTimeout: idle, Grace: 3 * time.Second})
				c := dial(t, l)
				_, err := c.Write(post)
				require.NoError(t, err)
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				resp, err := fcgiclient.NewConn(c).ReadResponse(1)
				require.NoError(t, err)
				assert.Equal(t, http.StatusMethodNotAllowed, resp.Status)
				if tc.after != nil {
					_, err = c.Write(tc.after)
					require.NoError(t, err)
				}
				idleConn := c
				// A second connection left idle at shutdown must not
				// make Serve wait for the grace period.
				c2 := dial(t, l)
				_, err = c2.Write(post)
				require.NoError(t, err)
				c2.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, err = fcgiclient.NewConn(c2).ReadResponse(1)
				require.NoError(t, err)
				if tc.after != nil {
					_, err = c2.Write(tc.after)
					require.NoError(t, err)
				}
				took := closedWithin(t, idleConn, 10*time.Second)
				assert.Less(t, took, 8*idle, "closed, but late")
				time.Sleep(50 * time.Millisecond)
				began := time.Now()
				assert.NoError(t, r.stop(t), "shutdown with an idle connection")
				assert.Less(t, time.Since(began), 2*time.Second)
			})
		}
	}
}

// TestFCGINewConnSurvivesReaper: a connection whose first request comes a
// little after it is accepted is served; the idle reaper used to close a
// connection accepted just before it looked, its request unanswered.
func TestFCGINewConnSurvivesReaper(t *testing.T) {
	for _, tg := range fcgiTargets() {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			const idle = 200 * time.Millisecond
			start(t, []Listener{l}, Options{IdleTimeout: idle})
			const conns = 100
			failed := 0
			for range conns {
				c, err := net.Dial(l.Addr().Network(), l.Addr().String())
				require.NoError(t, err)
				time.Sleep(idle / 10) // far less than IdleTimeout
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := fcgiclient.NewConn(c).Do(context.Background(), &fcgiclient.Request{}); err != nil {
					failed++
				}
				c.Close()
			}
			t.Logf("%d of %d new connections unanswered", failed, conns)
			assert.Zero(t, failed, "new connections closed by the idle reaper")
		})
	}
}

// TestSlowBody: a request that announces a body and stops sending it is
// cut after IdleTimeout on every kind.
func TestSlowBody(t *testing.T) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			l := listen(t, tg)
			const idle = 300 * time.Millisecond
			start(t, []Listener{l}, Options{IdleTimeout: idle, ReadHeaderTimeout: idle})
			c := dial(t, l)
			if tg.kind == HTTP {
				_, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
				require.NoError(t, err)
			} else {
				b := fcgiclient.AppendBeginRequest(nil, 1, fcgiclient.RoleResponder, fcgiclient.FlagKeepConn)
				b = fcgiclient.AppendStream(b, fcgiclient.TypeParams, 1, fcgiclient.AppendPairs(nil,
					(&fcgiclient.Request{Method: "POST", Body: make([]byte, 100)}).CGIParams()))
				b = fcgiclient.AppendRecord(b, fcgiclient.TypeStdin, 1, []byte("0123456789"))
				_, err := c.Write(b)
				require.NoError(t, err)
			}
			took := closedWithin(t, c, 10*time.Second)
			assert.Less(t, took, 8*idle)
			if tg.kind == HTTP {
				c := dial(t, l)
				c.SetDeadline(time.Now().Add(10 * time.Second))
				got := httpGet(t, c, bufio.NewReader(c), "GET")
				assert.Equal(t, 200, got.status)
			} else {
				expectServed(t, l)
			}
		})
	}
}

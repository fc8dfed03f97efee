package hello

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
)

// listenTLS opens an HTTPS listener on loopback with a fresh certificate.
func listenTLS(t *testing.T, s tlscert.Settings) Listener {
	t.Helper()
	p, err := tlscert.Generate(t.TempDir(), s.Key)
	require.NoError(t, err)
	cfg, err := tlscert.ServerConfig(p.Cert, p.Key, s)
	require.NoError(t, err)
	l := listen(t, target{"https", HTTPS, "tcp"})
	l.TLS = cfg
	return l
}

func clientConfig(protos ...string) *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, NextProtos: protos, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
}

func dialTLS(t *testing.T, l Listener, cfg *tls.Config) *tls.Conn {
	t.Helper()
	c := tls.Client(dial(t, l), cfg)
	c.SetDeadline(time.Now().Add(10 * time.Second))
	require.NoError(t, c.Handshake())
	return c
}

func TestHTTPSServes(t *testing.T) {
	for _, s := range []tlscert.Settings{
		{}, {Key: tlscert.RSA2048}, {Version: tlscert.TLS12}, {Version: tlscert.TLS12, Key: tlscert.RSA2048, Resume: true},
	} {
		t.Run(s.String(), func(t *testing.T) {
			l := listenTLS(t, s)
			start(t, []Listener{l}, Options{})

			t.Run("http/1.1", func(t *testing.T) {
				c := dialTLS(t, l, clientConfig("http/1.1"))
				br := bufio.NewReader(c)
				for _, m := range []string{"GET", "HEAD", "GET"} {
					r := httpGet(t, c, br, m)
					assert.Equal(t, 200, r.status)
					assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, r.names)
				}
			})
			t.Run("h2", func(t *testing.T) {
				tr := &http.Transport{TLSClientConfig: clientConfig("h2"), ForceAttemptHTTP2: true, DisableKeepAlives: true}
				defer tr.CloseIdleConnections()
				cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
				for i, wantResumed := range []bool{false, s.Resume} {
					resp, err := cl.Get("https://" + l.Addr().String() + "/")
					require.NoError(t, err)
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					require.NoError(t, err)
					assert.Equal(t, 2, resp.ProtoMajor)
					assert.Equal(t, Body, string(body))
					assert.Equal(t, s.Suite(), resp.TLS.CipherSuite)
					assert.Equal(t, s.GoVersion(), resp.TLS.Version)
					assert.Equal(t, wantResumed, resp.TLS.DidResume, "connection %d resumed", i)
					assert.Equal(t, map[string][]string{
						"Server": {ServerName}, "Content-Type": {"text/plain"}, "Content-Length": {"12"},
						"Date": resp.Header["Date"],
					}, map[string][]string(resp.Header))
				}
			})
		})
	}
}

// TestHTTPSTimeouts: a handshake never finished or trickled is closed at
// ReadHeaderTimeout from accept; after a handshake, the plain listener's
// bounds hold (idle, write) and the handshake's deadline does not linger.
func TestHTTPSTimeouts(t *testing.T) {
	const rht, write, idle = 300 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond
	hello, err := testenv.ClientHello()
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		peer     func(t *testing.T, l Listener) net.Conn
		min, max time.Duration
	}{
		{"silent", func(t *testing.T, l Listener) net.Conn { return dial(t, l) }, rht - 50*time.Millisecond, rht + 200*time.Millisecond},
		{"half a ClientHello", func(t *testing.T, l Listener) net.Conn {
			c := dial(t, l)
			_, err := c.Write(hello[:len(hello)/2])
			require.NoError(t, err)
			return c
		}, rht - 50*time.Millisecond, rht + 200*time.Millisecond},
		{"trickled ClientHello", func(t *testing.T, l Listener) net.Conn {
			c := dial(t, l)
			go trickle(c, hello, 20*time.Millisecond)
			return c
		}, rht - 50*time.Millisecond, rht + 200*time.Millisecond},
		{"idle after a request", func(t *testing.T, l Listener) net.Conn {
			c := dialTLS(t, l, clientConfig("http/1.1"))
			assert.Equal(t, 200, httpGet(t, c, bufio.NewReader(c), "GET").status)
			return c
		}, idle - 50*time.Millisecond, idle*9/8 + 200*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listenTLS(t, tlscert.Settings{})
			start(t, []Listener{l}, Options{ReadHeaderTimeout: rht, WriteTimeout: write, IdleTimeout: idle})
			took := closedWithin(t, tc.peer(t, l), 10*time.Second)
			assert.GreaterOrEqual(t, took, tc.min)
			assert.Less(t, took, tc.max)
		})
	}
	t.Run("request after the handshake deadline", func(t *testing.T) {
		l := listenTLS(t, tlscert.Settings{})
		// Long enough that an unrearmed write deadline of the handshake
		// would still be in force just after it passed.
		const write = 4 * time.Second
		start(t, []Listener{l}, Options{ReadHeaderTimeout: rht, WriteTimeout: write, IdleTimeout: time.Hour})
		c := dialTLS(t, l, clientConfig("http/1.1"))
		br := bufio.NewReader(c)
		assert.Equal(t, 200, httpGet(t, c, br, "GET").status)
		time.Sleep(rht + 100*time.Millisecond) // past the handshake's deadline
		assert.Equal(t, 200, httpGet(t, c, br, "GET").status)
	})
}

// trickle writes b a byte at a time, every, until it is sent or c fails.
func trickle(c net.Conn, b []byte, every time.Duration) {
	for i := range b {
		if _, err := c.Write(b[i : i+1]); err != nil {
			return
		}
		time.Sleep(every)
	}
}

// TestHTTPSNeverReadingPeer: a peer that stops reading loses its
// connection at WriteTimeout (not 5 s later, for crypto/tls's
// close_notify): one large response over HTTP/1.1 and HTTP/2 (whose
// flow control the peer opens wide), or pipelined small ones.
func TestHTTPSNeverReadingPeer(t *testing.T) {
	const write = 300 * time.Millisecond
	for _, tc := range []struct {
		name, proto string
		request     []byte
	}{
		{"http/1.1 big", "http/1.1", []byte("GET /big HTTP/1.1\r\nHost: x\r\n\r\n")},
		{"h2 big", "h2", append(h2Preface(), h2Get(1, "/big")...)},
		{"http/1.1 pipelined", "http/1.1", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := listenTLS(t, tlscert.Settings{})
			start(t, []Listener{l}, Options{Handler: bigHandler(), WriteTimeout: write, IdleTimeout: time.Hour, ReadHeaderTimeout: time.Hour})
			c := dialTLS(t, l, clientConfig(tc.proto))
			sent := 0
			if tc.request == nil {
				sent = floodRequests(c, 3*time.Second)
			} else {
				_, err := c.Write(tc.request)
				require.NoError(t, err)
			}
			took := serverClosed(t, l, 10*time.Second)
			t.Logf("sent %d bytes of requests; the server closed after %v", sent, took)
			// A large response stalls at once; pipelined ones only once the
			// server has answered what its buffers hold, in a time that
			// depends on its speed, so there only the close is asserted
			// (serverClosed's limit; no other bound is under an hour).
			if tc.request != nil {
				assert.Less(t, took, write*9/8+time.Second)
			}
			// What the buffers held, then the end.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := io.Copy(io.Discard, c)
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the connection stayed open")
			assert.Less(t, n, int64(64<<20), "the whole response was delivered to a peer that did not read")
		})
	}
}

// serverClosed waits until l's server holds no established connection
// and returns how long that took; it fails the test after limit.
func serverClosed(t *testing.T, l Listener, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		n, err := testenv.Established(l.Addr().String())
		require.NoError(t, err)
		took := time.Since(began)
		if n == 0 {
			return took
		}
		require.Less(t, took, limit, "%d connections still open", n)
		time.Sleep(10 * time.Millisecond)
	}
}

// floodRequests sends pipelined GETs on c, without reading, until its
// writes block for limit/3 or limit passes; it returns the bytes sent.
func floodRequests(c *tls.Conn, limit time.Duration) int {
	batch := []byte(strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 256))
	end := time.Now().Add(limit)
	n := 0
	for time.Now().Before(end) {
		c.SetWriteDeadline(time.Now().Add(limit / 3))
		k, err := c.Write(batch)
		n += k
		if err != nil {
			break
		}
	}
	return n
}

func TestHTTPSShutdownCutsHandshakes(t *testing.T) {
	l := listenTLS(t, tlscert.Settings{})
	cut := -1
	r := start(t, []Listener{l}, Options{ReadHeaderTimeout: time.Hour, Stopped: func(n int) { cut = n }})
	hello, err := testenv.ClientHello()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 50 {
		c := dial(t, l)
		_, err := c.Write(hello[:10])
		require.NoError(t, err)
		wg.Go(func() { closedAfter(t, c, 10*time.Second) })
	}
	time.Sleep(200 * time.Millisecond) // accepted and reading
	began := time.Now()
	require.NoError(t, r.stop(t))
	assert.Less(t, time.Since(began), time.Second)
	assert.Equal(t, 50, cut)
	wg.Wait()
}

// h2Preface is an HTTP/2 client's preface and SETTINGS, written by hand
// (net/http's HTTP/2 is internal), opening flow control to its maximum so
// that only the socket stops the server.
func h2Preface() []byte {
	const maxWindow = 1<<31 - 1
	b := h2PrefaceDefault()
	b = b[:len(b)-9]                           // its empty SETTINGS
	b = append(b, 0, 0, 6, 0x4, 0, 0, 0, 0, 0) // SETTINGS
	b = binary.BigEndian.AppendUint16(b, 0x4)  // INITIAL_WINDOW_SIZE
	b = binary.BigEndian.AppendUint32(b, maxWindow)
	b = append(b, 0, 0, 4, 0x8, 0, 0, 0, 0, 0) // WINDOW_UPDATE, connection
	return binary.BigEndian.AppendUint32(b, maxWindow-65535)
}

// h2Get is a HEADERS frame of a GET of path, END_STREAM.
func h2Get(stream uint32, path string) []byte {
	// :method GET, :scheme https (static table), :path and :authority x
	// (literals, not indexed).
	block := append([]byte{0x82, 0x87, 0x04, byte(len(path))}, path...)
	block = append(block, 0x01, 0x01, 'x')
	b := []byte{0, 0, byte(len(block)), 0x1, 0x5}
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, block...)
}

// h2PrefaceDefault is the preface with empty SETTINGS: flow control as
// HTTP/2 starts it, 64 KiB.
func h2PrefaceDefault() []byte {
	return append([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, 0, 0, 0x4, 0, 0, 0, 0, 0)
}

// TestHTTPSH2FlowControlWithheld: an HTTP/2 peer that grants no more flow
// control and falls silent holds a stream until IdleTimeout, no longer.
func TestHTTPSH2FlowControlWithheld(t *testing.T) {
	const idle = 600 * time.Millisecond
	l := listenTLS(t, tlscert.Settings{})
	start(t, []Listener{l}, Options{Handler: bigHandler(), IdleTimeout: idle, WriteTimeout: time.Hour, ReadHeaderTimeout: time.Hour})
	c := dialTLS(t, l, clientConfig("h2"))
	_, err := c.Write(append(h2PrefaceDefault(), h2Get(1, "/big")...))
	require.NoError(t, err)
	took := serverClosed(t, l, 10*time.Second)
	assert.GreaterOrEqual(t, took, idle-50*time.Millisecond)
	assert.Less(t, took, idle*9/8+500*time.Millisecond)
}

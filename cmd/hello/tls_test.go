package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
)

// httpsHello is a cmd/hello process serving only -https.
type httpsHello struct {
	cmd    *exec.Cmd
	addr   string
	stderr *testenv.Buffer
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startHTTPS starts hello with a certificate generated for s in its own
// directory and the extra flags, and waits for its ready line and a real
// HTTPS answer.
func startHTTPS(t *testing.T, s tlscert.Settings, extra ...string) *httpsHello {
	t.Helper()
	bin := testenv.HelloBin(t)
	p, err := tlscert.Generate(testenv.ShortDir(t), s.Key)
	require.NoError(t, err)
	args := append([]string{"-http=", "-fcgi-tcp=", "-fcgi-unix=", "-https", "127.0.0.1:0",
		"-tls-cert", p.Cert, "-tls-key", p.Key, "-tls-key-type", s.Key.String(),
		"-tls-version", s.Version.String(), "-tls-resume=" + strconv.FormatBool(s.Resume)}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	h := &httpsHello{cmd: cmd, stderr: &testenv.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = h.stderr
	require.NoError(t, cmd.Start())
	go func() { h.err = cmd.Wait(); close(h.exited) }()
	t.Cleanup(func() { cancel(); <-h.exited })

	require.Eventually(t, func() bool {
		select {
		case <-h.exited:
			return true
		default:
		}
		return strings.Contains(h.stderr.String(), "hello: ready")
	}, 20*time.Second, 10*time.Millisecond)
	out := h.stderr.String()
	require.Contains(t, out, "hello: ready", "hello ended early")
	_, rest, ok := strings.Cut(out, "hello: https on tcp ")
	require.True(t, ok, out)
	h.addr, _, _ = strings.Cut(rest, " ")
	assert.Contains(t, rest, fmt.Sprintf("%v, %s)", s, s.GoCipher()))

	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := cl.Get(h.url())
	require.NoError(t, err, "hello is not answering")
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	cl.CloseIdleConnections()
	return h
}

func (h *httpsHello) url() string { return "https://" + h.addr + "/" }

func curl(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	_, err := exec.LookPath("curl")
	require.NoError(t, err, "the test needs curl (.ci/install-tools --tests)")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out, errb strings.Builder
	cmd := exec.CommandContext(ctx, "curl", append([]string{"-sSk", "--max-time", "10"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "curl %q: %s", args, errb.String())
	return out.String(), errb.String()
}

// TestBinaryHTTPSCurl: curl, over HTTP/1.1 and HTTP/2, sees the plain
// listener's answer: the 141-byte header block on HTTP/1.1 and the same
// headers, but Connection, on HTTP/2, with the one version and suite.
func TestBinaryHTTPSCurl(t *testing.T) {
	for _, s := range []tlscert.Settings{
		{}, {Key: tlscert.RSA2048}, {Version: tlscert.TLS12}, {Version: tlscert.TLS12, Key: tlscert.RSA2048, Resume: true},
	} {
		t.Run(s.String(), func(t *testing.T) {
			h := startHTTPS(t, s)
			for _, tc := range []struct {
				flag, version string
				want          map[string]string
			}{
				{"--http1.1", "1.1", wantHeaders},
				{"--http2", "2", map[string]string{"Server": "gophr", "Content-Type": "text/plain", "Content-Length": "12", "Date": "(valid)"}},
			} {
				t.Run(tc.flag, func(t *testing.T) {
					block, _ := curl(t, tc.flag, "-I", h.url())
					if tc.version == "1.1" {
						assert.Len(t, block, 141, "header block:\n%s", block)
					}
					status, header := parseCurlHead(t, block)
					assert.Equal(t, "HTTP/"+tc.version+" 200", status)
					assert.Equal(t, tc.want, headerSet(t, header))

					body, verbose := curl(t, tc.flag, "-v", "-w", "%{http_version}", h.url()+"any/path")
					assert.Equal(t, "Hello World\n"+tc.version, body)
					// OpenSSL's names, as nginx's configuration gives them.
					assert.Contains(t, verbose, "SSL connection using "+s.NginxProtocols()+" / "+s.OpenSSLCipher())
				})
			}
		})
	}
}

// parseCurlHead reads what curl -I prints: the status line without its
// reason (HTTP/2 has none) and the headers.
func parseCurlHead(t *testing.T, block string) (string, http.Header) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(block, "\r\n\r\n"), "\r\n")
	f := strings.Fields(lines[0])
	require.GreaterOrEqual(t, len(f), 2, "status line %q", lines[0])
	h := http.Header{}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		require.True(t, ok, "header line %q", l)
		h.Add(k, strings.TrimSpace(v))
	}
	return f[0] + " " + f[1], h
}

// TestBinaryHTTPSStalledHandshakes: connections that never finish their
// handshake, silent, stopped half way or trickled a byte at a time, are
// all closed by hello at the handshake timeout (-read-header-timeout),
// hold little memory meanwhile and write no line each.
func TestBinaryHTTPSStalledHandshakes(t *testing.T) {
	const timeout = 2 * time.Second
	hello, err := testenv.ClientHello()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		n    int
		peer func(c net.Conn, stop <-chan struct{})
	}{
		{"silent", 1000, func(net.Conn, <-chan struct{}) {}},
		{"half a ClientHello", 1000, func(c net.Conn, _ <-chan struct{}) { c.Write(hello[:len(hello)/2]) }},
		{"trickled ClientHello", 200, func(c net.Conn, stop <-chan struct{}) {
			go func() {
				for i := range hello {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := c.Write(hello[i : i+1]); err != nil {
						return
					}
				}
			}()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHTTPS(t, tlscert.Settings{}, "-read-header-timeout", timeout.String())
			stop := make(chan struct{})
			var wg sync.WaitGroup
			defer func() { close(stop); wg.Wait() }()
			began := time.Now()
			for i := range tc.n {
				c, err := net.Dial("tcp", h.addr)
				require.NoError(t, err, "connection %d", i)
				t.Cleanup(func() { c.Close() })
				wg.Go(func() { tc.peer(c, stop) })
			}
			dialed := time.Since(began)
			time.Sleep(200 * time.Millisecond) // accepted and waiting
			held, err := testenv.Established(h.addr)
			require.NoError(t, err)
			rss := testenv.RSSMB(t, h.cmd.Process.Pid)
			took := testenv.WaitNoneEstablished(t, h.addr, timeout+10*time.Second)
			assert.Greater(t, held, tc.n*9/10, "connections held while their handshake waits")
			assert.Less(t, rss, 100, "hello's RSS in MB")
			sinceLast := took + 200*time.Millisecond
			t.Logf("%d connections dialed in %v, %d held, hello's RSS %d MB; all closed %v after the last",
				tc.n, dialed, held, rss, sinceLast)
			assert.Greater(t, sinceLast, timeout-300*time.Millisecond, "closed before the handshake timeout")
			assert.Less(t, sinceLast, timeout+1500*time.Millisecond, "closed within the handshake timeout")
			assert.NotContains(t, h.stderr.String(), "handshake error", "a line per stalled connection")
			curl(t, "--http1.1", h.url()) // still serving
		})
	}
}

// TestBinaryHTTPSNeverReadingPeer: a peer that completes the handshake,
// pipelines requests and never reads is cut by -write-timeout.
func TestBinaryHTTPSNeverReadingPeer(t *testing.T) {
	const write = time.Second
	for _, tc := range []struct{ name, proto string }{
		{"pipelined GETs over HTTP/1.1", "http/1.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHTTPS(t, tlscert.Settings{}, "-write-timeout", write.String(), "-idle-timeout", "1h", "-read-header-timeout", "1h")
			c, err := tls.Dial("tcp", h.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{tc.proto}})
			require.NoError(t, err)
			defer c.Close()
			batch := []byte(strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 256))
			sent := 0
			// Until the writes block for a second: hello reads no more.
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
				c.SetWriteDeadline(time.Now().Add(write))
				n, err := c.Write(batch)
				if sent += n; err != nil {
					break
				}
			}
			took := testenv.WaitNoneEstablished(t, h.addr, 10*time.Second)
			t.Logf("sent %d bytes of requests; closed %v after the writes blocked", sent, took)
			// No other bound is under an hour.
			assert.Less(t, took, 3*time.Second, "cut by the write timeout")
			curl(t, "--http2", h.url()) // still serving
		})
	}
}

// TestBinaryHTTPSSIGTERMStalledHandshakes: SIGTERM with handshakes stalled
// is a clean stop, at once.
func TestBinaryHTTPSSIGTERMStalledHandshakes(t *testing.T) {
	const n = 150
	hello, err := testenv.ClientHello()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		send []byte
	}{{"silent", nil}, {"half a ClientHello", hello[:len(hello)/2]}} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHTTPS(t, tlscert.Settings{}, "-read-header-timeout", "1m")
			for i := range n {
				c, err := net.Dial("tcp", h.addr)
				require.NoError(t, err, "connection %d", i)
				t.Cleanup(func() { c.Close() })
				_, err = c.Write(tc.send)
				require.NoError(t, err)
			}
			time.Sleep(200 * time.Millisecond) // accepted and waiting
			began := time.Now()
			require.NoError(t, h.cmd.Process.Signal(syscall.SIGTERM))
			select {
			case <-h.exited:
			case <-time.After(10 * time.Second):
				t.Fatal("hello did not exit")
			}
			took := time.Since(began)
			require.NoError(t, h.err, "exit status 0:\n%s", h.stderr.String())
			assert.Less(t, took, time.Second)
			assert.Contains(t, h.stderr.String(), fmt.Sprintf("hello: stopped; cut %d connections", n))
		})
	}
}

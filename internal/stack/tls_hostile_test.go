package stack

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
)

// nginxHandshakeTimeout is tls.tmpl's client_header_timeout, which
// bounds nginx's TLS handshake as well as the first request's header.
const nginxHandshakeTimeout = 10 * time.Second

// TestNginxTLSStalledHandshakes: nginx's TLS vhost holds 1000 peers that
// never finish their handshake in bounded memory, closes them within its
// handshake timeout, and serves meanwhile.
func TestNginxTLSStalledHandshakes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	hello, err := testenv.ClientHello()
	require.NoError(t, err)
	st, addr := startNginxTLS(t, 2000)
	defer st.Stop()
	vhost, err := os.ReadFile(filepath.Join(st.cfg.Dir, "nginx", "go.tls.http"))
	require.NoError(t, err)
	require.Contains(t, string(vhost), "client_header_timeout "+strconv.Itoa(int(nginxHandshakeTimeout.Seconds()))+"s")
	for _, tc := range []struct {
		name string
		send []byte
	}{{"silent", nil}, {"half a ClientHello", hello[:len(hello)/2]}} {
		t.Run(tc.name, func(t *testing.T) {
			var conns []net.Conn
			t.Cleanup(func() {
				for _, c := range conns {
					c.Close()
				}
			})
			for i := range 1000 {
				c, err := net.Dial("tcp", addr)
				require.NoError(t, err, "connection %d", i)
				conns = append(conns, c)
				if tc.send != nil {
					_, err = c.Write(tc.send)
					require.NoError(t, err)
				}
			}
			time.Sleep(200 * time.Millisecond) // accepted and waiting
			held, err := testenv.Established(addr)
			require.NoError(t, err)
			rss := testenv.RSSMB(t, st.NginxPid())
			took := testenv.WaitNoneEstablished(t, addr, nginxHandshakeTimeout+10*time.Second) + 200*time.Millisecond
			t.Logf("1000 connections, %d held, nginx's RSS %d MB; all closed %v after the last", held, rss, took)
			assert.Greater(t, held, 900, "connections held while their handshake waits")
			assert.Less(t, rss, 100, "nginx's RSS in MB, master and workers")
			assert.Greater(t, took, nginxHandshakeTimeout-time.Second, "closed before the handshake timeout")
			assert.Less(t, took, nginxHandshakeTimeout+2*time.Second, "closed within the handshake timeout")
			_, refused := st.Parity(context.Background(), 5*time.Second)
			assert.Empty(t, refused, "still serving")
		})
	}
}

// TestNginxTLSSIGTERMStalledHandshakes: nginx told to stop fast (SIGTERM)
// while peers hold handshakes open exits within a second, and cleanly.
func TestNginxTLSSIGTERMStalledHandshakes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	st, addr := startNginxTLS(t, 200)
	for i := range 150 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err, "connection %d", i)
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	err := syscall.Kill(st.NginxPid(), syscall.SIGTERM)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return syscall.Kill(st.NginxPid(), 0) != nil || zombie(st.NginxPid()) }, time.Second, 5*time.Millisecond, "nginx still running a second after SIGTERM")
	t.Logf("nginx exited %v after SIGTERM with 150 stalled handshakes", time.Since(began))
	// Stop reports an nginx that exited on its own; with no wait error,
	// its status was 0.
	err = st.Stop()
	require.ErrorContains(t, err, "nginx exited early")
	assert.NotContains(t, err.Error(), "nginx exited early:", "nginx's exit status after SIGTERM is 0")
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z")
}

// startNginxTLS starts nginx-tls-http (nginx and cmd/hello) on a fresh
// P-256 certificate for conns clients, and returns it with nginx's TLS
// address.
func startNginxTLS(t *testing.T, conns int) (*Stack, string) {
	t.Helper()
	dir, bin, l := helloAt(t)
	pair, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	top := tops(t, "nginx-tls-http")
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: top, GOMAXPROCS: 1, HelloBin: bin, Connections: conns,
		TLS: &tlscert.Setup{Pair: pair, Settings: tlscert.Settings{}},
	})
	require.NoError(t, err)
	u, err := url.Parse(l.URL(top[0]))
	require.NoError(t, err)
	return st, u.Host
}

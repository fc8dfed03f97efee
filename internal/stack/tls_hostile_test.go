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
	dir, bin, l := helloAt(t)
	pair, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	top := tops(t, "nginx-tls-http")
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: top, GOMAXPROCS: 1, HelloBin: bin, Connections: 2000,
		TLS: &tlscert.Setup{Pair: pair, Settings: tlscert.Settings{}},
	})
	require.NoError(t, err)
	defer st.Stop()
	vhost, err := os.ReadFile(filepath.Join(dir, "nginx", "go.tls.http"))
	require.NoError(t, err)
	require.Contains(t, string(vhost), "client_header_timeout "+strconv.Itoa(int(nginxHandshakeTimeout.Seconds()))+"s")
	u, err := url.Parse(l.URL(top[0]))
	require.NoError(t, err)
	addr := u.Host
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
			rss := treeRSSMB(t, st.NginxPid())
			took := waitNoneEstablished(t, addr, nginxHandshakeTimeout+10*time.Second) + 200*time.Millisecond
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

// treeRSSMB is the resident set of pid and its children, in MB.
func treeRSSMB(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	kb := 0
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		_, rest, _ := strings.Cut(string(stat), ") ")
		f := strings.Fields(rest)
		if p != pid && (len(f) < 2 || f[1] != strconv.Itoa(pid)) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				require.NoError(t, err)
				kb += n
			}
		}
	}
	return kb >> 10
}

// waitNoneEstablished waits until no connection to addr is established
// and returns how long that took; it fails the test after limit.
func waitNoneEstablished(t *testing.T, addr string, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		n, err := testenv.Established(addr)
		require.NoError(t, err)
		took := time.Since(began)
		if n == 0 {
			return took
		}
		require.Less(t, took, limit, "%d connections still open", n)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNginxTLSSIGTERMStalledHandshakes: nginx told to stop fast (SIGTERM)
// while peers hold handshakes open exits within a second, and cleanly.
func TestNginxTLSSIGTERMStalledHandshakes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	dir, bin, l := helloAt(t)
	pair, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	top := tops(t, "nginx-tls-http")
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: top, GOMAXPROCS: 1, HelloBin: bin, Connections: 200,
		TLS: &tlscert.Setup{Pair: pair, Settings: tlscert.Settings{}},
	})
	require.NoError(t, err)
	u, err := url.Parse(l.URL(top[0]))
	require.NoError(t, err)
	for i := range 150 {
		c, err := net.Dial("tcp", u.Host)
		require.NoError(t, err, "connection %d", i)
		t.Cleanup(func() { c.Close() })
	}
	time.Sleep(200 * time.Millisecond)
	began := time.Now()
	require.NoError(t, syscall.Kill(st.NginxPid(), syscall.SIGTERM))
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

package parity_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// TestNginxTLSAnswersTheSame runs cmd/hello's plain listeners behind the
// real nginx's TLS vhosts, with a certificate made for the run, and asks
// them with curl over HTTP/1.1 and HTTP/2, and with parity's own exchange
// over TLS beside the plain topologies, for each kind of TLS setting.
func TestNginxTLSAnswersTheSame(t *testing.T) {
	bin := testenv.HelloBin(t) // skips under -short
	curl, err := exec.LookPath("curl")
	require.NoError(t, err, "curl checks the TLS vhosts (.ci/install-tools)")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := testenv.ShortDir(t) // holds unix sockets
	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	ts, err := topology.Parse("standalone,nginx-http,nginx-tls-http,nginx-tls-http-unix")
	require.NoError(t, err)
	hello, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: ts, Grace: time.Second})
	require.NoError(t, err)
	defer func() { assert.NoError(t, hello.Stop()) }()

	for _, s := range []tlscert.Settings{{Resume: true}, {Key: tlscert.RSA2048, Version: tlscert.TLS12}} {
		t.Run(s.String(), func(t *testing.T) {
			pair, err := tlscert.Generate(t.TempDir(), s.Key)
			require.NoError(t, err)
			p, err := nginxconf.DefaultParams(l)
			require.NoError(t, err)
			p.WorkerProcesses = 1
			p.Vhosts = nginxconf.Vhosts(ts)
			p.TLS = nginxconf.TLS{Cert: pair.Cert, Key: pair.Key, Settings: s}
			ng, err := nginx.Start(ctx, nginx.Config{Dir: filepath.Join(t.TempDir(), "nginx"), Params: p})
			require.NoError(t, err)
			defer func() { assert.NoError(t, ng.Stop()) }()
			checkNginxTLS(ctx, t, curl, l, ts, s, pair)
		})
	}
}

// checkNginxTLS checks every TLS vhost of ts with curl and parity's TLS
// exchange, and that resumption is as s says.
func checkNginxTLS(ctx context.Context, t *testing.T, curl string, l topology.Layout, ts []topology.Topology, s tlscert.Settings, pair tlscert.Pair) {
	pem, err := os.ReadFile(pair.Cert)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(pem))
	handshake := "SSL connection using " + s.NginxProtocols() + " / " + s.OpenSSLCipher()
	for _, tp := range ts {
		if !tp.TLS {
			continue
		}
		t.Run(tp.Name, func(t *testing.T) {
			require.True(t, strings.HasPrefix(l.URL(tp), "https://"), l.URL(tp))
			header, body, verbose := curlGet(ctx, t, curl, "--http1.1", l.URL(tp))
			assert.Contains(t, verbose, handshake)
			resp, err := parity.ReadResponse(bufio.NewReader(bytes.NewReader(header)), true)
			require.NoError(t, err)
			assert.Equal(t, "HTTP/1.1 200 OK", resp.StatusLine)
			assert.Len(t, header, parity.HeaderBlockSize, "%q", header)
			assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, resp.HeaderNames)
			assert.Equal(t, "nginx", resp.Fields.Get("Server"))
			assert.Equal(t, "Hello World\n", string(body))

			header, body, verbose = curlGet(ctx, t, curl, "--http2", l.URL(tp))
			assert.Contains(t, verbose, handshake)
			status, fields := h2Header(t, header)
			assert.Equal(t, "HTTP/2 200", status)
			assert.Equal(t, []string{"content-length", "content-type", "date", "server"}, slices.Sorted(maps.Keys(fields)))
			assert.Equal(t, "nginx", fields["server"])
			assert.Equal(t, "text/plain", fields["content-type"])
			assert.Equal(t, "12", fields["content-length"])
			assert.Equal(t, "Hello World\n", string(body))

			u, err := url.Parse(l.URL(tp))
			require.NoError(t, err)
			assert.Equal(t, []bool{false, s.Resume}, resumes(ctx, t, u.Host, pool, s), "the second connection resumes only with Resume on")
		})
	}
	// parity's raw HTTP/1.1 over TLS: the same bytes as the plain paths.
	rs := parity.FetchVia(ctx, parity.Via{TLS: &tls.Config{RootCAs: pool}}, l, ts, 0)
	require.Len(t, rs, len(ts))
	assert.NoError(t, parity.Check(rs))
	assert.ErrorContains(t, parity.FetchVia(ctx, parity.Via{}, l, ts[2:3], 0)[0].Err, "no client TLS configuration")
}

// curlGet runs curl -k (the run's certificate is signed by nobody) with
// proto (--http1.1, --http2) on u and returns the header block it
// received, the body, and what -v printed.
func curlGet(ctx context.Context, t *testing.T, curl, proto, u string) (header, body []byte, verbose string) {
	t.Helper()
	dir := t.TempDir()
	hdr, out := filepath.Join(dir, "header"), filepath.Join(dir, "body")
	cmd := exec.CommandContext(ctx, curl, "-sS", "-v", "-k", proto, "--max-time", "5", "-D", hdr, "-o", out, u)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	require.NoError(t, cmd.Run(), "curl %s %s: %s", proto, u, stderr.String())
	header, err := os.ReadFile(hdr)
	require.NoError(t, err)
	body, err = os.ReadFile(out)
	require.NoError(t, err)
	return header, body, stderr.String()
}

// h2Header reads the header block curl writes for an HTTP/2 response:
// "HTTP/2 200", then the fields as HTTP/2 carries them, lower case.
func h2Header(t *testing.T, block []byte) (status string, fields map[string]string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(block), "\r\n\r\n"), "\r\n")
	fields = map[string]string{}
	for _, line := range lines[1:] {
		name, value, ok := strings.Cut(line, ":")
		require.True(t, ok, "header line %q", line)
		fields[name] = strings.TrimSpace(value)
	}
	return strings.TrimSpace(lines[0]), fields
}

// resumes makes two TLS connections to addr with one session cache, a
// request on each (a TLS 1.3 ticket comes after the handshake), and says
// whether each resumed; it also checks the version, suite and group.
func resumes(ctx context.Context, t *testing.T, addr string, pool *x509.CertPool, s tlscert.Settings) []bool {
	t.Helper()
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", NextProtos: []string{"http/1.1"}, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
	var did []bool
	for range 2 {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
		c, err := d.DialContext(ctx, "tcp", addr)
		require.NoError(t, err)
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
		require.NoError(t, err)
		_, err = io.ReadAll(c)
		require.NoError(t, err)
		cs := c.(*tls.Conn).ConnectionState()
		require.NoError(t, c.Close())
		assert.Equal(t, s.GoVersion(), cs.Version)
		assert.Equal(t, s.Suite(), cs.CipherSuite)
		if !cs.DidResume || cs.Version == tls.VersionTLS13 {
			assert.Equal(t, tls.X25519, cs.CurveID, "the group both servers are given")
		}
		did = append(did, cs.DidResume)
	}
	return did
}

package load_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// startHTTPS runs the real cmd/hello with its HTTPS listener on a fresh
// certificate of s's key type, and returns its https:// target and the
// engine's TLS for it. It skips under -short.
func startHTTPS(t *testing.T, s tlscert.Settings) (load.Target, load.TLS) {
	t.Helper()
	bin := testenv.HelloBin(t) // skips under -short
	pair, err := tlscert.Generate(t.TempDir(), s.Key)
	require.NoError(t, err)
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	args := []string{"-https=" + l.HTTPS, "-tls-cert=" + pair.Cert, "-tls-key=" + pair.Key,
		"-tls-key-type=" + s.Key.String(), "-tls-version=" + s.Version.String()}
	if s.Resume {
		args = append(args, "-tls-resume")
	}
	std, err := topology.Lookup(topology.Standalone)
	require.NoError(t, err)
	ctx := context.Background()
	srv, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: []topology.Topology{std},
		GOMAXPROCS: 1, ExtraArgs: args})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Stop() })
	tg, err := load.ParseTarget("https://" + l.HTTPS + "/")
	require.NoError(t, err)
	requireHTTPS(t, tg, pair.Cert)
	return tg, load.TLS{CA: pair.Cert, Settings: s}
}

// requireHTTPS waits, against a deadline, for one real HTTPS request to
// the target to succeed: hello's ready line covers its HTTPS listener,
// and this checks it answers with the certificate given.
func requireHTTPS(t *testing.T, tg load.Target, ca string) {
	t.Helper()
	pem, err := os.ReadFile(ca)
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(pem))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Second}
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := client.Get(tg.String())
		if err == nil {
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			return
		}
		require.True(t, time.Now().Before(deadline), "hello's HTTPS listener never answered: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTLSAgainstHello drives the real cmd/hello's HTTPS listener (Go's
// TLS) with the engine's TLS client: kept connections closed loop and
// open loop, a new connection and handshake a request, a CA that is not
// the server's, and the event loops, which refuse TLS.
func TestTLSAgainstHello(t *testing.T) {
	tg, tl := startHTTPS(t, tlscert.Settings{})
	ctx := context.Background()
	base := load.Options{Target: tg, TLS: tl, Timeout: 2 * time.Second}
	t.Run("kept connections, closed loop", func(t *testing.T) {
		o := base
		o.Connections, o.Goroutines, o.Duration = 4, true, 300*time.Millisecond
		s := run(t, ctx, o)
		assert.Positive(t, s.Requests)
		assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
		assert.Zero(t, s.Handshakes, "the connections were opened before the measured time, and kept")
		assert.Zero(t, s.Reconnects)
	})
	t.Run("open loop", func(t *testing.T) {
		o := base
		o.Connections, o.Rate, o.Arrivals, o.Requests = 2, 200, load.Uniform, 40
		s := run(t, ctx, o)
		assert.EqualValues(t, 40, s.Requests)
		assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
		assert.Zero(t, s.Dropped)
	})
	t.Run("a handshake a request", func(t *testing.T) {
		o := base
		o.Connections, o.Goroutines, o.Close, o.Requests = 2, true, true, 40
		s := run(t, ctx, o)
		assert.EqualValues(t, 40, s.Requests)
		assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
		assert.EqualValues(t, s.Requests, s.Handshakes, "Connection: close: every request a new connection")
		assert.Zero(t, s.Resumed, "resumption is off")
		assert.Positive(t, s.HandshakesPerSec)
		assert.Positive(t, s.HandshakeMeanMs)
		f := s.Figures()
		assert.Equal(t, s.Handshakes, f.Handshakes)
		assert.Equal(t, s.HandshakesPerSec, f.HandshakesPerSec)
	})
	t.Run("a CA not the server's", func(t *testing.T) {
		other, err := tlscert.Generate(t.TempDir(), tlscert.P256)
		require.NoError(t, err)
		o := base
		o.TLS.CA, o.Connections, o.Goroutines, o.Requests = other.Cert, 1, true, 3
		s := run(t, ctx, o)
		assert.Zero(t, s.Requests)
		assert.Positive(t, s.Errors.Connect, "a failed handshake is a connect error")
		assert.Equal(t, s.Errors.Connect, s.Errors.Total(), "%+v", s.Errors)
	})
	t.Run("the server's certificate under another name", func(t *testing.T) {
		o := base
		o.TLS.ServerName, o.Connections, o.Goroutines, o.Requests = "elsewhere.example", 1, true, 3
		s := run(t, ctx, o)
		assert.Zero(t, s.Requests, "the certificate is pinned, and its name still checked")
		assert.Positive(t, s.Errors.Connect)
	})
	t.Run("the event loops refuse TLS", func(t *testing.T) {
		o := base
		o.Connections, o.Duration = 2, 100*time.Millisecond
		_, err := load.Run(ctx, o)
		var fe *load.FieldError
		require.ErrorAs(t, err, &fe)
		assert.Equal(t, "goroutines", fe.Field)
		assert.Contains(t, err.Error(), "goroutine per connection")
	})
}

// TestTLS12Resumed is TLS 1.2 with an RSA key and resumption on, a
// handshake a request: every one resumes the session of the first.
func TestTLS12Resumed(t *testing.T) {
	tg, tl := startHTTPS(t, tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true})
	s := run(t, context.Background(), load.Options{Target: tg, TLS: tl, Connections: 1, Goroutines: true, Close: true, Requests: 20})
	assert.EqualValues(t, 20, s.Requests)
	assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
	assert.EqualValues(t, 20, s.Handshakes)
	assert.Equal(t, s.Handshakes, s.Resumed, "the session cache resumes every handshake after the first")
}

func run(t *testing.T, ctx context.Context, o load.Options) load.Summary {
	t.Helper()
	res, err := load.Run(ctx, o)
	require.NoError(t, err)
	return res.Summary
}

package target_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

func TestParseRunning(t *testing.T) {
	for _, tt := range []struct {
		spec, slug string
		tcp, unix  bool
		err        string
		layoutHTTP string
		layoutUnix string
	}{
		{spec: "listen:127.0.0.1:8080", slug: "listen-127.0.0.1-8080", tcp: true, layoutHTTP: "127.0.0.1:8080"},
		{spec: "listen:127.9.0.3:80", slug: "listen-127.9.0.3-80", tcp: true, layoutHTTP: "127.9.0.3:80"},
		{spec: "listen:unix:/run/api.sock", slug: "listen-unix-api.sock", unix: true, layoutUnix: "/run/api.sock"},
		{spec: "listen:10.0.0.2:8080", err: "not in 127.0.0.0/8"},
		{spec: "listen:0.0.0.0:8080", err: "not in 127.0.0.0/8"},
		{spec: "listen:[::1]:8080", err: "not in 127.0.0.0/8"},
		{spec: "listen:localhost:8080", err: "want listen:IP:PORT"},
		{spec: "listen:127.0.0.1", err: "want listen:IP:PORT"},
		{spec: "listen:127.0.0.1:0", err: "want listen:IP:PORT"},
		{spec: "listen:unix:api.sock", err: "absolute"},
		{spec: "listen:unix:/run/../api.sock", err: "absolute"},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			tg, err := target.Lookup(tt.spec)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Contains(t, err.Error(), tt.spec, "the error names the flag's value")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, target.Running, tg.Runtime)
			assert.Equal(t, tt.slug, tg.Slug())
			assert.Equal(t, tg.Slug(), results.TargetFile(tt.spec), "results restates the rule")
			assert.Equal(t, tt.tcp, tg.Serves(topology.HTTPTCP))
			assert.Equal(t, tt.unix, tg.Serves(topology.HTTPUnix))
			assert.False(t, tg.Serves(topology.FCGITCP))
			assert.False(t, target.SupportsWork(tt.spec))
			assert.True(t, target.IsOwn(tt.spec))
			require.NoError(t, tg.Check())
			for _, top := range topology.All() {
				assert.Equal(t, tg.Serves(top.Backend) && top.Backend != topology.NoBackend, results.Applies(tt.spec, top) && top.Backend != topology.NoBackend, top.Name)
			}
			l := topology.DefaultLayout("/tmp/x")
			got := target.LayoutFor(l, tt.spec)
			if tt.layoutHTTP != "" {
				assert.Equal(t, tt.layoutHTTP, got.HTTP)
				assert.Equal(t, l.HTTPUnix, got.HTTPUnix)
			} else {
				assert.Equal(t, tt.layoutUnix, got.HTTPUnix)
				assert.Equal(t, l.HTTP, got.HTTP)
			}
		})
	}
}

// TestAttach attaches to services this test serves itself: the listening
// process found is the test's own, and Stop leaves the service serving.
func TestAttach(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	sock := filepath.Join(t.TempDir(), "api.sock")
	unix, err := net.Listen("unix", sock)
	require.NoError(t, err)
	for _, l := range []net.Listener{tcp, unix} {
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(l) }()
		t.Cleanup(func() { srv.Close() })
	}
	for _, spec := range []string{"listen:" + tcp.Addr().String(), "listen:unix:" + sock} {
		t.Run(spec, func(t *testing.T) {
			tg, err := target.Lookup(spec)
			require.NoError(t, err)
			p, err := tg.Build(t.Context(), "")
			require.NoError(t, err)
			assert.Nil(t, p.Command(target.Config{}))
			s, err := p.Attach(t.Context(), target.Config{Path: "/health"})
			require.NoError(t, err)
			assert.Equal(t, os.Getpid(), s.Pid())
			assert.Contains(t, s.Describe(), "CPU from /proc/")
			cpu, err := s.CPU(t.Context())
			require.NoError(t, err)
			assert.Positive(t, cpu.Total(), "this test process has run")
			assert.False(t, s.Exited())
			require.NoError(t, s.Stop())
			assert.False(t, s.Exited(), "Stop leaves the user's service running")
		})
	}
}

func TestAttachNothing(t *testing.T) {
	free, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	spec := "listen:" + free.Addr().String()
	free.Close()
	tg, err := target.Lookup(spec)
	require.NoError(t, err)
	p, err := tg.Build(t.Context(), "")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = p.Attach(ctx, target.Config{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "checking "+spec+": no answer to GET /")
}

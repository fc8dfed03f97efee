package stack

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// TestNginxWorkers: one worker per CPU of the servers' set, auto (0)
// where nothing is pinned; nginx's own auto counts the machine's CPUs.
func TestNginxWorkers(t *testing.T) {
	assert.Equal(t, 0, NginxWorkers(0, cpuset.CPUSet{}), "unpinned: auto")
	assert.Equal(t, 1, NginxWorkers(0, cpuset.Of(1)))
	assert.Equal(t, 3, NginxWorkers(0, cpuset.Of(1, 2, 3)))
	assert.Equal(t, 1, NginxWorkers(1, cpuset.Of(1, 2, 3)), "an override wins")
}

// TestStartFitsNginx starts the real servers pinned to one CPU for 5000
// connections with a pool as large: nginx runs one worker that holds
// every client and its upstream connection, and every vhost's backlog
// holds the burst.
func TestStartFitsNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	cpus := allowed.CPUs()
	dir, bin, l := helloAt(t)
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: tops(t, "standalone", "nginx-http"), GOMAXPROCS: 1, HelloBin: bin,
		CPUs: cpuset.Of(cpus[len(cpus)-1]), Connections: 5000, UpstreamKeepalive: 5000,
	})
	require.NoError(t, err)
	defer st.Stop()
	p, ok := st.NginxSettings()
	require.True(t, ok)
	assert.Equal(t, 1, p.WorkerProcesses)
	assert.Equal(t, 10735, p.WorkerConnections, "10064 in use and the sixteenth nginx keeps free")
	assert.Equal(t, 5000, p.Backlog)
	conf, err := os.ReadFile(filepath.Join(dir, "nginx", "nginx.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), "worker_processes 1;")
	assert.Contains(t, string(conf), "worker_connections 10735;")
	vhost, err := os.ReadFile(filepath.Join(dir, "nginx", "go.http"))
	require.NoError(t, err)
	assert.Contains(t, string(vhost), "backlog=5000;")
	assert.Contains(t, string(vhost), "keepalive 5000;")
}

// helloAt is a short directory for a run, cmd/hello built in it, and a
// layout of free ports and sockets there.
func helloAt(t *testing.T) (dir, bin string, l topology.Layout) {
	t.Helper()
	dir = testenv.ShortDir(t)
	bin, err := hellorun.Build(context.Background(), filepath.Join(dir, "bin"))
	require.NoError(t, err)
	l, err = topology.FreeLayout(dir)
	require.NoError(t, err)
	return dir, bin, l
}

// TestStartRefusesWhatNginxCannotHold: a load past a worker's open-files
// limit is refused before nginx starts, with the limit and the way out.
func TestStartRefusesWhatNginxCannotHold(t *testing.T) {
	dir := testenv.ShortDir(t)
	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	_, err = Start(context.Background(), Config{Dir: dir, Layout: l, Topologies: tops(t, "nginx-return"), Connections: 1 << 20})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "starting nginx: nginx worker cannot hold the connections: 1048576 connections through nginx need")
	assert.Contains(t, err.Error(), "lower -connections")
}

// TestUsePool: with pools sized to 5000 clients on three upstream
// vhosts, whose idle pools do not fit in one worker beside the clients, nginx reloads (new workers)
// when the next topology's load uses the other vhost's pool, and not for
// the same vhost, for standalone or for a topology without an upstream.
func TestUsePool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	cpus := allowed.CPUs()
	dir := testenv.ShortDir(t)
	bin, err := hellorun.Build(context.Background(), filepath.Join(dir, "bin"))
	require.NoError(t, err)
	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: tops(t, "standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return"), GOMAXPROCS: 1, HelloBin: bin,
		CPUs: cpuset.Of(cpus[len(cpus)-1]), Connections: 5000, UpstreamKeepalive: 5000,
	})
	require.NoError(t, err)
	defer st.Stop()
	p, ok := st.NginxSettings()
	require.True(t, ok)
	require.Greater(t, p.WorkerNeed(5000), p.WorkerConnections, "the two pools do not fit together")
	ng := st.nginx.(nginxServer)
	for _, step := range []struct {
		top    string
		reload bool
	}{
		{"nginx-http", false}, // the first pool
		{"nginx-http", false},
		{"standalone", false},
		{"nginx-return", false},
		{"nginx-fcgi-tcp", true},
		{"nginx-http", true},
	} {
		before := ng.Workers()
		reloaded, err := st.UsePool(context.Background(), tops(t, step.top)[0])
		require.NoError(t, err, step.top)
		assert.Equal(t, step.reload, reloaded, step.top)
		if step.reload {
			assert.NotEqual(t, before, ng.Workers(), "%s: new workers", step.top)
		} else {
			assert.Equal(t, before, ng.Workers(), step.top)
		}
	}

	// Pools that fit together (2013's 300) never reload.
	require.NoError(t, st.Stop())
	small, err := Start(context.Background(), Config{
		Dir: filepath.Join(dir, "s"), Layout: l, Topologies: tops(t, "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix"), GOMAXPROCS: 1, HelloBin: bin,
		CPUs: cpuset.Of(cpus[len(cpus)-1]), Connections: 5000, UpstreamKeepalive: 300,
	})
	require.NoError(t, err)
	defer small.Stop()
	for _, top := range []string{"nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-http"} {
		reloaded, err := small.UsePool(context.Background(), tops(t, top)[0])
		require.NoError(t, err)
		assert.False(t, reloaded, top)
	}
}

// TestStartTLS starts cmd/hello's HTTPS listener and nginx's TLS vhosts
// on the run's certificate: every topology, over TLS or not, passes
// parity, and the TLS ones are refused without the certificate.
func TestStartTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello and starts nginx")
	}
	dir, bin, l := helloAt(t)
	pair, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	set := tlscert.Settings{Version: tlscert.TLS12}
	all := tops(t, "standalone", "standalone-tls", "nginx-tls-http", "nginx-tls-http-unix")
	st, err := Start(context.Background(), Config{
		Dir: dir, Layout: l, Topologies: all, GOMAXPROCS: 1, HelloBin: bin, Connections: 100,
		TLS: &tlscert.Setup{Pair: pair, Settings: set},
	})
	require.NoError(t, err)
	defer st.Stop()
	rs, refused := st.Parity(context.Background(), 5*time.Second)
	assert.Empty(t, refused)
	assert.Len(t, rs, len(all))
	p, ok := st.NginxSettings()
	require.True(t, ok)
	assert.Equal(t, pair.Cert, p.TLS.Cert)
	vhost, err := os.ReadFile(filepath.Join(dir, "nginx", "go.tls.http"))
	require.NoError(t, err)
	assert.Contains(t, string(vhost), "TLSv1.2")

	st.cfg.TLS = nil
	_, refused = st.Parity(context.Background(), 5*time.Second)
	assert.ErrorContains(t, refused["standalone-tls"], "no client TLS configuration")
	assert.NotContains(t, refused, "standalone")
}

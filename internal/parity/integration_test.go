package parity_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

var update = flag.Bool("update", false, "save each topology's raw GET and HEAD responses to testdata/")

// TestEveryTopologyAnswersTheSame runs the real cmd/hello behind the real
// nginx and checks all nine topologies.
func TestEveryTopologyAnswersTheSame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello, runs it and nginx")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := testenv.ShortDir(t) // holds unix sockets

	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	ts := topology.All()

	bin, err := hellorun.Build(ctx, filepath.Join(dir, "bin"))
	require.NoError(t, err)
	hello, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: ts, Grace: time.Second})
	require.NoError(t, err)
	defer func() { assert.NoError(t, hello.Stop()) }()

	p, err := nginxconf.DefaultParams(l)
	require.NoError(t, err)
	p.WorkerProcesses = 1
	ng, err := nginx.Start(ctx, nginx.Config{Dir: filepath.Join(dir, "nginx"), Params: p})
	require.NoError(t, err)
	defer func() { assert.NoError(t, ng.Stop()) }()

	rs := parity.Fetch(ctx, l, ts, 0)
	require.Len(t, rs, len(ts))
	for _, r := range rs {
		t.Run(r.Topology.Name, func(t *testing.T) {
			require.NoError(t, r.Err)
			for _, resp := range []parity.Response{r.GET, r.HEAD} {
				assert.Equal(t, 200, resp.Status)
				assert.Len(t, resp.Header, parity.HeaderBlockSize, "%q", resp.Header)
				assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, resp.HeaderNames)
				assert.Equal(t, "keep-alive", resp.Fields.Get("Connection"))
				assert.Equal(t, "text/plain", resp.Fields.Get("Content-Type"))
			}
			want := "nginx"
			if !r.Topology.ViaNginx() {
				want = "gophr"
			}
			assert.Equal(t, want, r.GET.Fields.Get("Server"))
			assert.Equal(t, "Hello World\n", string(r.GET.Body))
			assert.Empty(t, r.HEAD.Body)
			if *update {
				raw := append(append(append([]byte{}, r.GET.Header...), r.GET.Body...), r.HEAD.Header...)
				require.NoError(t, os.WriteFile(filepath.Join("testdata", r.Topology.Name+".http"), raw, 0o644))
			}
		})
	}
	assert.NoError(t, parity.Check(rs))

	// With cmd/hello gone, the Go topologies fail and say which; the
	// nginx-only references still answer.
	require.NoError(t, hello.Stop())
	rs = parity.Fetch(ctx, l, ts, 2*time.Second)
	if *update {
		r := rs[1] // nginx-http
		raw := append(append(append([]byte{}, r.GET.Header...), r.GET.Body...), r.HEAD.Header...)
		require.NoError(t, os.WriteFile(filepath.Join("testdata", "nginx-http-502.http"), raw, 0o644))
	}
	err = parity.Check(rs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "standalone (127.0.0.1:")
	assert.Contains(t, err.Error(), "nginx-fcgi-unix: GET status \"HTTP/1.1 502 Bad Gateway\", want 200")
	assert.NotContains(t, err.Error(), "body", "the 502 pages are not compared with the references' body")
	assert.NotContains(t, err.Error(), "nginx-return:")
	assert.NotContains(t, err.Error(), "nginx-static:")
}

// TestEveryTopologyAnswersTheSameWithWork: cmd/hello's handler work
// (?work=), alone and with a wait, gives every topology's plain answer
// again; a value over the bound is refused on every path to Go.
func TestEveryTopologyAnswersTheSameWithWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello, runs it and nginx")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := testenv.ShortDir(t)
	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	ts := topology.All()

	bin, err := hellorun.Build(ctx, filepath.Join(dir, "bin"))
	require.NoError(t, err)
	hello, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: ts, Grace: time.Second})
	require.NoError(t, err)
	defer func() { assert.NoError(t, hello.Stop()) }()
	p, err := nginxconf.DefaultParams(l)
	require.NoError(t, err)
	p.WorkerProcesses = 1
	ng, err := nginx.Start(ctx, nginx.Config{Dir: filepath.Join(dir, "nginx"), Params: p})
	require.NoError(t, err)
	defer func() { assert.NoError(t, ng.Stop()) }()

	rs := parity.Fetch(ctx, l, ts, 0)
	require.NoError(t, parity.Check(rs))
	for _, r := range rs {
		t.Run(r.Topology.Name, func(t *testing.T) {
			for _, path := range []string{parity.WorkPath, parity.WaitWorkPath, "/api/x?work=5ms&wait=2ms"} {
				assert.NoError(t, parity.CheckPath(ctx, parity.Via{}, l, r, path, 0), path)
			}
			// The same path and query as a request of Fetch's own.
			again := parity.FetchRequest(ctx, parity.Via{}, l, []topology.Topology{r.Topology}, parity.Request{Path: parity.WorkPath}, 0)
			require.NoError(t, parity.Check(append([]parity.Result{r}, again...)))
			if r.Topology.Backend == topology.NoBackend {
				return // nginx answers itself and ignores the query
			}
			err := parity.CheckPath(ctx, parity.Via{}, l, r, "/?work=101ms", 0)
			assert.ErrorContains(t, err, `GET /?work=101ms status "HTTP/1.1 400 Bad Request", want "HTTP/1.1 200 OK"`)
		})
	}
}

// TestCommandTargetParity runs examples/jsonapi as a command target (on
// TCP and a unix socket) behind the real nginx and checks that every path
// answers as jsonapi does standalone: parity.CheckSameAs. cmd/hello's own
// rules (Check: 141 bytes, its header names) do not apply and fail.
func TestCommandTargetParity(t *testing.T) {
	bin := testenv.JSONAPIBin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := testenv.ShortDir(t)
	l, err := topology.FreeLayout(dir)
	require.NoError(t, err)
	ts, err := topology.Parse("standalone,nginx-http,nginx-http-unix")
	require.NoError(t, err)

	tg, err := target.ParseCommand("cmd:" + bin + " -listen {addr} -unix {unix}")
	require.NoError(t, err)
	prog, err := tg.Build(ctx, "")
	require.NoError(t, err)
	const path = "/api/x"
	srv, err := prog.Start(ctx, target.Config{Addr: l.HTTP, Unix: l.HTTPUnix, Path: path, Grace: time.Second})
	require.NoError(t, err)
	defer func() { assert.NoError(t, srv.Stop()) }()

	p, err := nginxconf.DefaultParams(l)
	require.NoError(t, err)
	p.WorkerProcesses = 1
	p.Vhosts = nginxconf.Vhosts(ts)
	ng, err := nginx.Start(ctx, nginx.Config{Dir: filepath.Join(dir, "nginx"), Params: p})
	require.NoError(t, err)
	defer func() { assert.NoError(t, ng.Stop()) }()

	rs := parity.FetchRequest(ctx, parity.Via{}, l, ts, parity.Request{Path: path, Header: map[string][]string{"Accept": {"application/json"}}}, 0)
	require.Len(t, rs, 3)
	for _, r := range rs {
		require.NoError(t, r.Err)
		assert.Equal(t, 200, r.GET.Status, r.Topology.Name)
		assert.Contains(t, string(r.GET.Body), `"path":"/api/x"`, r.Topology.Name)
		if *update {
			raw := append(append(append([]byte{}, r.GET.Header...), r.GET.Body...), r.HEAD.Header...)
			require.NoError(t, os.WriteFile(filepath.Join("testdata", "jsonapi-"+r.Topology.Name+".http"), raw, 0o644))
		}
	}
	assert.NoError(t, parity.CheckSameAs(rs[0], rs))
	assert.Error(t, parity.Check(rs), "jsonapi's answer is not cmd/hello's")

	// Another path is another document: compared with /api/x, every
	// topology differs in its body.
	other := parity.FetchRequest(ctx, parity.Via{}, l, ts, parity.Request{Path: "/api/y"}, 0)
	require.NoError(t, parity.CheckSameAs(other[0], other))
	err = parity.CheckSameAs(rs[0], other)
	require.Error(t, err)
	for _, tp := range ts {
		assert.Contains(t, err.Error(), tp.Name+": body ")
	}
}

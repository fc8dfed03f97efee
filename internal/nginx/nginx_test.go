package nginx

import (
	"context"
	"net"
	"net/http"
	"net/http/fcgi"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want Version
		err  bool
	}{
		{out: "nginx version: nginx/1.22.1\n", want: Version{1, 22, 1}},
		{out: "nginx version: nginx/1.18.0 (Ubuntu)\n", want: Version{1, 18, 0}},
		{out: "nginx version: openresty/1.21.4.1\n", err: true},
		{out: "", err: true},
	} {
		t.Run(tc.out, func(t *testing.T) {
			v, err := ParseVersion(tc.out)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, v)
		})
	}
	assert.True(t, Version{1, 19, 5}.atLeast(1, 19, 5))
	assert.True(t, Version{1, 22, 0}.atLeast(1, 19, 5))
	assert.False(t, Version{1, 18, 9}.atLeast(1, 19, 5))
}

// hello answers like cmd/hello. The nginx tests use it so they exercise the
// configuration on its own; internal/parity's tests run the real cmd/hello.
func hello(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Server"] = []string{"gophr"}
	h["Connection"] = []string{"keep-alive"}
	h["Content-Type"] = []string{"text/plain"}
	h["Content-Length"] = []string{"12"}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write([]byte("Hello World\n"))
	}
}

// serveBackends opens every cmd/hello listener of l with net/http and
// net/http/fcgi (standing in for internal/fastcgi too).
func serveBackends(t *testing.T, l topology.Layout) {
	t.Helper()
	h := http.HandlerFunc(hello)
	listen := func(network, addr string) net.Listener {
		ln, err := net.Listen(network, addr)
		require.NoError(t, err)
		t.Cleanup(func() { ln.Close() })
		return ln
	}
	for _, a := range []struct{ network, addr string }{{"tcp", l.HTTP}, {"unix", l.HTTPUnix}} {
		srv := &http.Server{Handler: h}
		go srv.Serve(listen(a.network, a.addr))
		t.Cleanup(func() { srv.Close() })
	}
	for _, a := range []struct{ network, addr string }{{"tcp", l.FCGITCP}, {"unix", l.FCGIUnix}, {"tcp", l.FastTCP}, {"unix", l.FastUnix}} {
		go fcgi.Serve(listen(a.network, a.addr), h)
	}
}

func params(t *testing.T, l topology.Layout) nginxconf.Params {
	t.Helper()
	p, err := nginxconf.DefaultParams(l)
	require.NoError(t, err)
	p.WorkerProcesses = 1 // keep the tests light on a shared machine
	return p
}

func requireGone(t *testing.T, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		assert.False(t, Alive(pid), "process %d still running", pid)
	}
}

func TestStartServesEveryVhost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	serveBackends(t, l)

	s, err := Start(context.Background(), Config{Dir: t.TempDir(), Params: params(t, l)})
	require.NoError(t, err)
	workers := s.Workers()
	require.NotEmpty(t, workers)

	var via []topology.Topology
	for _, tp := range topology.All() {
		if tp.ViaNginx() {
			via = append(via, tp)
		}
	}
	rs := parity.Fetch(context.Background(), l, via, 0)
	for _, r := range rs {
		t.Run(r.Topology.Name, func(t *testing.T) {
			require.NoError(t, r.Err)
			assert.Equal(t, "nginx", r.GET.Fields.Get("Server"), "nginx replaces the upstream's Server")
			assert.Equal(t, "keep-alive", r.GET.Fields.Get("Connection"))
			assert.Equal(t, "Hello World\n", string(r.GET.Body))
			assert.Len(t, r.GET.Header, parity.HeaderBlockSize, "%q", r.GET.Header)
		})
	}
	assert.NoError(t, parity.Check(rs))

	require.NoError(t, s.Stop())
	requireGone(t, append(workers, s.Pid())...)
	assert.NoError(t, s.Stop(), "second Stop")
	for _, f := range []string{"nginx.conf", "error.log", "static/hello"} {
		assert.FileExists(t, filepath.Join(s.Dir(), f))
	}
	assert.DirExists(t, filepath.Join(s.Dir(), "tmp", "proxy"), "temp paths stay in the run directory")
}

func TestStartStopsOnCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	// Bare Params: Start fills in the rest.
	p := nginxconf.Params{Layout: l, WorkerProcesses: 1, Vhosts: []string{"nginx.return", "nginx.static"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := Start(ctx, Config{Dir: t.TempDir(), Params: p})
	require.NoError(t, err)
	rs := parity.Fetch(ctx, l, []topology.Topology{lookup(t, "nginx-return"), lookup(t, "nginx-static")}, 0)
	require.NoError(t, parity.Check(rs))
	pids := append(s.Workers(), s.Pid())
	cancel()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("nginx still running 10s after cancel")
	}
	require.NoError(t, s.Stop())
	requireGone(t, pids...)
}

func TestStartErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)

	t.Run("missing binary", func(t *testing.T) {
		_, err := Start(context.Background(), Config{Bin: "/nonexistent/nginx", Dir: t.TempDir(), Params: params(t, l)})
		require.Error(t, err)
		t.Log(err)
		assert.Contains(t, err.Error(), "/nonexistent/nginx")
	})

	t.Run("port in use", func(t *testing.T) {
		port := l.NginxPorts["nginx.return"]
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		require.NoError(t, err)
		defer ln.Close()
		dir := t.TempDir()
		_, err = Start(context.Background(), Config{Dir: dir, Params: params(t, l)})
		require.Error(t, err)
		t.Log(err)
		assert.Contains(t, err.Error(), "port "+strconv.Itoa(port)+" for vhost nginx.return is not free")
		assert.Empty(t, nginxProcs(t, dir), "no nginx left behind")
	})

	t.Run("nginx -t fails", func(t *testing.T) {
		bad := l
		bad.HTTP = "127.0.0.1:99999" // nginx rejects the port; the renderer lets it through
		dir := t.TempDir()
		_, err := Start(context.Background(), Config{Dir: dir, Params: params(t, bad)})
		require.Error(t, err)
		t.Log(err)
		assert.Contains(t, err.Error(), "nginx -t rejected")
		assert.Contains(t, err.Error(), "99999", "nginx's own complaint is attached")
		assert.Empty(t, nginxProcs(t, dir), "no nginx left behind")
	})

	t.Run("exits before ready", func(t *testing.T) {
		p := params(t, l)
		p.Vhosts = []string{"nginx.return"}
		// Pinning to a CPU that does not exist makes taskset fail before
		// nginx runs: the error must say so, with taskset's message.
		dir := t.TempDir()
		_, err := Start(context.Background(), Config{Dir: dir, Params: p, CPUs: "4095"})
		require.Error(t, err)
		t.Log(err)
		assert.Contains(t, err.Error(), "exited before it was ready")
		assert.Contains(t, err.Error(), "taskset")
		assert.Empty(t, nginxProcs(t, dir), "no nginx left behind")
	})
}

func TestTestRejectsBrokenConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	bin, err := Find()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte("events {}\nhttp { bogus_directive on; }\n"), 0o644))
	err = Test(context.Background(), bin, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown directive "bogus_directive"`)
	assert.Contains(t, err.Error(), filepath.Join(dir, "nginx.conf"))
}

// nginxProcs lists running processes whose command line names dir: an
// nginx master started on that run directory. (Other nginx processes on the
// machine are not the test's business.)
func nginxProcs(t *testing.T, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !Alive(pid) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(b), dir) {
			out = append(out, pid)
		}
	}
	return out
}

func lookup(t *testing.T, name string) topology.Topology {
	t.Helper()
	tp, err := topology.Lookup(name)
	require.NoError(t, err)
	return tp
}

// TestStopEscalates: a request stuck on a silent upstream keeps a graceful
// stop waiting; after the grace period Stop shuts nginx down fast and leaves
// no process behind.
func TestStopEscalates(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	p := params(t, l)
	p.Vhosts = []string{"go.http"}
	// Ready on a 502 while nothing listens upstream.
	s, err := Start(context.Background(), Config{Dir: t.TempDir(), Params: p, Grace: 300 * time.Millisecond})
	require.NoError(t, err)
	pids := append(s.Workers(), s.Pid())

	silent, err := net.Listen("tcp", l.HTTP) // accepts, never answers
	require.NoError(t, err)
	defer silent.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := silent.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(l.NginxPorts["go.http"]))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	select { // the request is in flight upstream
	case up := <-accepted:
		defer up.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("nginx did not pass the request upstream")
	}

	start := time.Now()
	err = s.Stop()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not finish within 300ms of SIGQUIT; shut down with SIGTERM")
	assert.Less(t, time.Since(start), 5*time.Second)
	requireGone(t, pids...)
}

// TestReloadClosesIdlePools: the upstream connections nginx keeps idle
// after its clients left are closed by a reload, the old workers exit,
// and the new ones answer.
func TestReloadClosesIdlePools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	var open atomic.Int64
	ln, err := net.Listen("tcp", l.HTTP)
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(hello), ConnState: func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	p := params(t, l)
	p.Vhosts = []string{lookup(t, "nginx-http").Vhost}
	p.Keepalive = 50
	s, err := Start(context.Background(), Config{Dir: t.TempDir(), Params: p})
	require.NoError(t, err)
	defer s.Stop()

	// Ten clients at once, each on a connection of its own, then gone:
	// nginx keeps their upstream connections idle in its pool.
	url := "http://127.0.0.1:" + strconv.Itoa(l.NginxPorts[p.Vhosts[0]]) + "/"
	done := make(chan error, 10)
	for range 10 {
		go func() {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get(url + "?wait=50ms")
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
	}
	for range 10 {
		require.NoError(t, <-done)
	}
	require.Eventually(t, func() bool { return open.Load() >= 5 }, 2*time.Second, 10*time.Millisecond)
	old := s.Workers()

	require.NoError(t, s.Reload(context.Background(), 10*time.Second))
	requireGone(t, old...)
	assert.NotEmpty(t, s.Workers(), "new workers")
	// The readiness probe's request through the new worker may keep one.
	assert.Eventually(t, func() bool { return open.Load() <= 1 }, 2*time.Second, 10*time.Millisecond, "the idle pool is closed: %d open", open.Load())
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

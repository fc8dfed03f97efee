package nginxconf_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current templates")

// cases are the renderings under test: the reference layout as a user gets
// it from `topobench nginx-conf`, and a root run of two vhosts.
var cases = []struct {
	name string
	p    nginxconf.Params
	// fit, when set, is the load the parameters are fitted to (Fit).
	fit int
}{
	{"default", nginxconf.Params{
		Layout:             topology.DefaultLayout("/tmp"),
		WorkerRlimitNofile: 20000,
	}, 0},
	{"root-two-vhosts", nginxconf.Params{
		Layout:             topology.DefaultLayout("/run/tb"),
		WorkerProcesses:    2,
		WorkerRlimitNofile: nginxconf.MaxRlimitNofile,
		Vhosts:             []string{"go.fcgi.unix", "nginx.static"},
		User:               "root",
	}, 0},
	// The servers pinned to one CPU under -cpus, 5000 clients through
	// nginx-http with a pool as large as the load (-upstream-keepalive
	// auto): one worker holds every client and its upstream connection.
	{"one-worker-c5000-pool5000", nginxconf.Params{
		Layout:             topology.DefaultLayout("/tmp"),
		WorkerProcesses:    1,
		WorkerRlimitNofile: 20000,
		Vhosts:             []string{"go.http", "nginx.return"},
		Keepalive:          5000,
	}, 5000},
	// Every vhost at -c1000 with the 2013 pool: the other upstream
	// vhosts' idle pools are counted too.
	{"two-workers-c1000", nginxconf.Params{
		Layout:             topology.DefaultLayout("/tmp"),
		WorkerProcesses:    2,
		WorkerRlimitNofile: 20000,
	}, 1000},
	// The TLS vhosts, rendered only when named: TLS 1.3 with resumption,
	// the run's certificate in the prefix.
	{"tls13-resume", nginxconf.Params{
		Layout:             topology.DefaultLayout("/tmp"),
		WorkerProcesses:    1,
		WorkerRlimitNofile: 20000,
		Vhosts:             []string{"go.http", "go.tls.http", "go.tls.http.unix"},
		TLS:                nginxconf.TLS{Settings: tlscert.Settings{Resume: true}},
	}, 1000},
	// TLS 1.2 with an RSA key, no resumption, the certificate named.
	{"tls12-rsa", nginxconf.Params{
		Layout:             topology.DefaultLayout("/tmp"),
		WorkerProcesses:    1,
		WorkerRlimitNofile: 20000,
		Vhosts:             []string{"go.tls.http"},
		TLS:                nginxconf.TLS{Cert: "certs/c.pem", Key: "certs/k.pem", Settings: tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12}},
	}, 0},
}

// params is the case's parameters, fitted to its load.
func params(t *testing.T, i int) nginxconf.Params {
	p := cases[i].p
	if cases[i].fit > 0 {
		require.NoError(t, p.Fit(cases[i].fit))
	}
	return p
}

func TestGolden(t *testing.T) {
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := params(t, i)
			p.Prefix = "/run/topobench"
			files, err := nginxconf.Files(p)
			require.NoError(t, err)
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
				golden := filepath.Join("testdata", tc.name, strings.ReplaceAll(f.Name, "/", "_")+".golden")
				if *update {
					require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
					require.NoError(t, os.WriteFile(golden, f.Data, 0o644))
					continue
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err, "run go test -update to create it")
				assert.Equal(t, string(want), string(f.Data), "%s differs from %s (go test -update rewrites it)", f.Name, golden)
			}
			if !*update {
				// No stale golden files for vhosts no longer rendered.
				ents, err := os.ReadDir(filepath.Join("testdata", tc.name))
				require.NoError(t, err)
				assert.Len(t, ents, len(names), "golden files vs rendered %v", names)
			}
		})
	}
}

// TestNginxAcceptsEveryRendering runs the real nginx -t on each golden case
// and on each vhost alone.
func TestNginxAcceptsEveryRendering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx -t")
	}
	bin, err := nginx.Find()
	require.NoError(t, err)
	run := func(t *testing.T, p nginxconf.Params) {
		dir := t.TempDir()
		generateCert(t, dir, p.TLS)
		require.NoError(t, nginxconf.Render(dir, p))
		require.NoError(t, nginx.Test(context.Background(), bin, dir))
		// nginx -t created the temp paths inside the run directory.
		assert.DirExists(t, filepath.Join(dir, "tmp", "fastcgi"))
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { run(t, params(t, i)) })
	}
	for _, v := range append(nginxconf.AllVhosts(), nginxconf.TLSVhosts()...) {
		t.Run(v, func(t *testing.T) {
			p := cases[0].p
			p.Vhosts = []string{v}
			run(t, p)
		})
	}
}

// generateCert writes the run's certificate where c says nginx finds it
// under the prefix dir, as tlscert.Generate does for a run.
func generateCert(t *testing.T, dir string, c nginxconf.TLS) {
	t.Helper()
	pair, err := tlscert.Generate(dir, c.Settings.Key)
	require.NoError(t, err)
	for _, f := range []struct{ from, to string }{{pair.Cert, c.Cert}, {pair.Key, c.Key}} {
		if f.to != "" {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, f.to)), 0o755))
			require.NoError(t, os.Rename(f.from, filepath.Join(dir, f.to)))
		}
	}
}

func TestRenderWritesTheRunDirectory(t *testing.T) {
	dir := t.TempDir()
	p := cases[0].p
	require.NoError(t, nginxconf.Render(dir, p))
	want := append([]string{"nginx.conf", "fastcgi_params", "static/hello"}, nginxconf.AllVhosts()...)
	for _, f := range want {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	conf, err := os.ReadFile(filepath.Join(dir, "nginx.conf"))
	require.NoError(t, err)
	assert.Contains(t, string(conf), "pid "+dir+"/nginx.pid;", "prefix defaults to the directory")
	body, err := os.ReadFile(filepath.Join(dir, "static", "hello"))
	require.NoError(t, err)
	assert.Equal(t, "Hello World\n", string(body))
}

func TestVhostsMatchTopologies(t *testing.T) {
	var want []string
	for _, tp := range topology.All() {
		if tp.Vhost != "" {
			want = append(want, tp.Vhost)
		}
	}
	assert.Equal(t, want, nginxconf.AllVhosts())
	assert.Equal(t, []string{"go.tls.http", "go.tls.http.unix"}, nginxconf.TLSVhosts())
	ts, err := topology.Parse("standalone,nginx-http,nginx-return")
	require.NoError(t, err)
	assert.Equal(t, []string{"go.http", "nginx.return"}, nginxconf.Vhosts(ts))
	ts, err = topology.Parse("standalone-tls,nginx-http,nginx-tls-http-unix")
	require.NoError(t, err)
	assert.Equal(t, []string{"go.http", "go.tls.http.unix"}, nginxconf.Vhosts(ts), "a TLS vhost when its topology is in the run")
}

func TestFitRlimitNofile(t *testing.T) {
	for _, tc := range []struct {
		hard uint64
		want int
	}{
		{20000, 20000},
		{200000, 200000},
		{1 << 20, 200000},
		{^uint64(0), 200000}, // RLIM_INFINITY
	} {
		assert.Equal(t, tc.want, nginxconf.FitRlimitNofile(tc.hard), "hard %d", tc.hard)
	}
}

func TestFilesRejectsBadParams(t *testing.T) {
	good := cases[0].p
	good.Prefix = "/run/topobench"
	for _, tc := range []struct {
		name string
		edit func(p *nginxconf.Params)
		want string
	}{
		{"relative prefix", func(p *nginxconf.Params) { p.Prefix = "run" }, `prefix "run" must be an absolute path`},
		{"no rlimit", func(p *nginxconf.Params) { p.WorkerRlimitNofile = 0 }, "worker_rlimit_nofile must be positive"},
		{"unknown vhost", func(p *nginxconf.Params) { p.Vhosts = []string{"go.grpc"} }, `unknown vhost "go.grpc"`},
		{"duplicate vhost", func(p *nginxconf.Params) { p.Vhosts = []string{"go.http", "go.http"} }, "vhost go.http listed twice"},
		{"empty vhosts", func(p *nginxconf.Params) { p.Vhosts = []string{} }, "no vhosts to render"},
		{"no port", func(p *nginxconf.Params) {
			p.Layout.NginxPorts = map[string]int{}
			p.Vhosts = []string{"nginx.return"}
		}, "vhost nginx.return: no valid port"},
		{"long socket path", func(p *nginxconf.Params) {
			p.Layout.FCGIUnix = "/" + strings.Repeat("s", 120) + "/go.sock"
		}, "vhost go.fcgi.unix: unix socket path"},
		{"relative socket path", func(p *nginxconf.Params) { p.Layout.HTTPUnix = "go-http.sock" }, "must be absolute"},
		{"not loopback", func(p *nginxconf.Params) { p.Layout.HTTP = "10.0.0.1:8080" }, `vhost go.http: backend address "10.0.0.1:8080" is not a loopback IP`},
		{"unknown TLS version", func(p *nginxconf.Params) {
			p.Vhosts, p.TLS.Settings.Version = []string{"go.tls.http"}, tlscert.Version(7)
		}, "vhost go.tls.http: tls settings: unknown version"},
		{"a certificate path that ends the directive", func(p *nginxconf.Params) {
			p.Vhosts, p.TLS.Cert = []string{"go.tls.http"}, "c.pem; include /etc/passwd"
		}, `vhost go.tls.http: TLS file "/run/topobench/c.pem; include /etc/passwd"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := good
			p.Layout = topology.DefaultLayout("/tmp")
			tc.edit(&p)
			_, err := nginxconf.Files(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestRenderListenHost checks where vhosts listen: loopback by default,
// every address of the servers' own namespace when clients come over a
// veth, while the upstream hop stays on loopback either way.
func TestRenderListenHost(t *testing.T) {
	for _, tc := range []struct{ host, listen string }{{"", "127.0.0.1"}, {"169.254.77.1", "0.0.0.0"}} {
		t.Run(tc.listen, func(t *testing.T) {
			dir := t.TempDir()
			p := cases[0].p
			p.Layout.Host = tc.host
			require.NoError(t, nginxconf.Render(dir, p))
			b, err := os.ReadFile(filepath.Join(dir, "go.http"))
			require.NoError(t, err)
			assert.Contains(t, string(b), fmt.Sprintf("listen %s:%d backlog=5000;", tc.listen, p.Layout.NginxPorts["go.http"]))
			assert.Contains(t, string(b), "server "+p.Layout.HTTP+";")
		})
	}
}

func TestFit(t *testing.T) {
	http := []string{"go.http"}
	for _, tc := range []struct {
		name                 string
		vhosts               []string
		keepalive, conns     int
		rlimit               int
		backlog, connections int
		err                  string
	}{
		// 5000 clients and 5000 upstream connections in one worker, and
		// the sixteenth nginx keeps free before it closes idle clients.
		{"nginx-http pool 5000", http, 5000, 5000, 20000, 5000, 10735, ""},
		{"nginx-http pool 300", http, 300, 5000, 20000, 5000, 10735, ""},
		// The ceilings have no upstream.
		{"nginx-return", []string{"nginx.return"}, 0, 5000, 20000, 5000, 5402, ""},
		{"small load keeps nginx's backlog", http, 0, 100, 20000, 511, 282, ""},
		// Six upstream vhosts: five idle pools of 300 besides the one in use.
		{"every vhost", nil, 0, 5000, 20000, 5000, 12335, ""},
		// Pools as large as the load do not fit beside it: the limit.
		{"every vhost pool 5000", nil, 5000, 5000, 20000, 5000, 20000, ""},
		{"the most that fits", http, 0, 9968, 20000, 9968, 20000, ""},
		{"too many", http, 0, 10000, 20000, 0, 0, "10000 connections through nginx need 20064 in a worker (a client and an upstream connection each), over its open-files limit of 20000: lower -connections to 9968"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := nginxconf.Params{Layout: topology.DefaultLayout("/tmp"), Vhosts: tc.vhosts, Keepalive: tc.keepalive, WorkerRlimitNofile: tc.rlimit}
			err := p.Fit(tc.conns)
			if tc.err != "" {
				require.ErrorIs(t, err, nginxconf.ErrNoRoom)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.backlog, p.Backlog, "backlog")
			assert.Equal(t, tc.connections, p.WorkerConnections, "worker_connections")
		})
	}
}

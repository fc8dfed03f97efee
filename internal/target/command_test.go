package target_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		spec      string
		argv      []string
		tcp, unix bool
		err       string
	}{
		{spec: "cmd:./jsonapi -listen {addr}", argv: []string{"./jsonapi", "-listen", "{addr}"}, tcp: true},
		{spec: "cmd:'./jsonapi -listen {addr}'", err: "the whole command is one quoted word"},
		{spec: `cmd:./api --bind={addr} --name 'my api' -x "a b"`, argv: []string{"./api", "--bind={addr}", "--name", "my api", "-x", "a b"}, tcp: true},
		{spec: "cmd:./api -port {port} -host {host}", argv: []string{"./api", "-port", "{port}", "-host", "{host}"}, tcp: true},
		{spec: "cmd:./jsonapi -listen {addr} -unix {unix}", argv: []string{"./jsonapi", "-listen", "{addr}", "-unix", "{unix}"}, tcp: true, unix: true},
		{spec: "cmd:./jsonapi -listen= -unix {unix} -procs {procs}", argv: []string{"./jsonapi", "-listen=", "-unix", "{unix}", "-procs", "{procs}"}, unix: true},
		{spec: `cmd:/usr/bin/env  A=1   ./api {addr}`, argv: []string{"/usr/bin/env", "A=1", "./api", "{addr}"}, tcp: true},
		{spec: "cmd:./api -listen :8080", err: "must say where to listen"},
		{spec: "cmd:./api -listen {address}", err: "unknown placeholder {address}"},
		{spec: "cmd:{addr} x", err: "the program itself cannot be a placeholder"},
		{spec: "cmd:", err: "no command"},
		{spec: "cmd:   ", err: "no command"},
		{spec: "cmd:./api 'unclosed {addr}", err: "invalid command line string"},
		{spec: "./api {addr}", err: `starts with "cmd:"`},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			tg, err := target.ParseCommand(tt.spec)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.Contains(t, err.Error(), tt.spec, "the error names the target")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.spec, tg.Name)
			assert.Equal(t, target.Cmd, tg.Runtime)
			assert.Equal(t, tt.argv, tg.Argv)
			assert.Equal(t, tt.tcp, tg.ListensTCP())
			assert.Equal(t, tt.unix, tg.ListensUnix())
			assert.Equal(t, tt.tcp, tg.Serves(topology.HTTPTCP))
			assert.Equal(t, tt.unix, tg.Serves(topology.HTTPUnix))
			assert.True(t, tg.Serves(topology.NoBackend))
			for _, b := range []topology.Backend{topology.FCGITCP, topology.FCGIUnix, topology.FastTCP, topology.FastUnix} {
				assert.False(t, tg.Serves(b), b)
			}
			assert.False(t, tg.Work)
			looked, err := target.Lookup(tt.spec)
			require.NoError(t, err)
			assert.Equal(t, tg, looked)
		})
	}
}

func TestSeedTargetsServeTCPOnly(t *testing.T) {
	for _, tg := range target.All() {
		assert.True(t, tg.Serves(topology.HTTPTCP), tg.Name)
		assert.False(t, tg.Serves(topology.HTTPUnix), tg.Name)
		assert.False(t, tg.Serves(topology.FCGIUnix), tg.Name)
		assert.Equal(t, tg.Name, tg.Slug())
	}
}

func TestCommandLine(t *testing.T) {
	tg, err := target.ParseCommand("cmd:./api --bind={addr} -p {port} -h {host} -s {unix} -n {procs} '{addr} as one'")
	require.NoError(t, err)
	p := &target.Program{Target: tg, Dir: "/w"}
	assert.Equal(t, []string{"./api", "--bind=127.0.0.1:8080", "-p", "8080", "-h", "127.0.0.1", "-s", "/run/x/api.sock", "-n", "2", "127.0.0.1:8080 as one"},
		p.Command(target.Config{Addr: "127.0.0.1:8080", Unix: "/run/x/api.sock", Procs: 2}))
	assert.Equal(t, "./api --bind={addr} -p {port} -h {host} -s {unix} -n {procs} {addr} as one", tg.Argv[0]+" "+joinRest(tg.Argv),
		"the target keeps its placeholders")
}

func joinRest(argv []string) string {
	s := ""
	for i, a := range argv[1:] {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}

func TestSlug(t *testing.T) {
	for spec, want := range map[string]string{
		"cmd:./jsonapi -listen {addr}":        "cmd-jsonapi",
		"cmd:/opt/api/srv.bin {addr}":         "cmd-srv.bin",
		"cmd:'/opt/my api/my server!' {addr}": "cmd-my_server",
		"cmd:python3 -m http.server {port}":   "cmd-python3",
	} {
		tg, err := target.ParseCommand(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, want, tg.Slug(), spec)
	}
}

func TestSupportsWork(t *testing.T) {
	assert.True(t, target.SupportsWork("go"))
	assert.True(t, target.SupportsWork(""))
	for _, n := range target.Names() {
		assert.False(t, target.SupportsWork(n), n)
	}
	assert.False(t, target.SupportsWork("cmd:./jsonapi -listen {addr}"))
	assert.False(t, target.SupportsWork("rust"), "an unknown target does no work")
}

func TestSplitNames(t *testing.T) {
	tests := []struct {
		list string
		want []string
		err  string
	}{
		{list: "go", want: []string{"go"}},
		{list: "go,erlang, java-pool", want: []string{"go", "erlang", "java-pool"}},
		{list: "cmd:./jsonapi -listen {addr}", want: []string{"cmd:./jsonapi -listen {addr}"}},
		{list: "go,cmd:'./api -tags a,b -listen {addr}',erlang", want: []string{"go", "cmd:'./api -tags a,b -listen {addr}'", "erlang"}},
		{list: `cmd:./api -t "x,y" {addr}`, want: []string{`cmd:./api -t "x,y" {addr}`}},
		{list: `cmd:./api -t x\,y {addr}`, want: []string{`cmd:./api -t x\,y {addr}`}},
		{list: "go,cmd:'./api {addr}", err: "unclosed ' quote"},
		{list: "go,,erlang", err: "an empty name"},
		{list: "go,", err: "an empty name"},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			got, err := target.SplitNames(tt.list)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	// What SplitNames keeps, ParseCommand reads.
	names, err := target.SplitNames("go,cmd:'./api -tags a,b' -listen {addr}")
	require.NoError(t, err)
	tg, err := target.ParseCommand(names[1])
	require.NoError(t, err)
	assert.Equal(t, []string{"./api -tags a,b", "-listen", "{addr}"}, tg.Argv)
}

func TestBuildCommand(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "api")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	notExe := filepath.Join(dir, "data")
	require.NoError(t, os.WriteFile(notExe, nil, 0o644))

	tg, err := target.ParseCommand("cmd:" + exe + " {addr}")
	require.NoError(t, err)
	require.NoError(t, tg.Check())
	p, err := tg.Build(t.Context(), "unused")
	require.NoError(t, err)
	assert.Equal(t, exe, p.Target.Argv[0])
	wd, _ := os.Getwd()
	assert.Equal(t, wd, p.Dir, "it runs where the harness runs")

	tg, err = target.ParseCommand("cmd:sh -c 'exec x' {addr}")
	require.NoError(t, err)
	p, err = tg.Build(t.Context(), "unused")
	require.NoError(t, err)
	assert.True(t, filepath.IsAbs(p.Target.Argv[0]), "found in PATH: %s", p.Target.Argv[0])

	for _, bad := range []string{notExe, filepath.Join(dir, "missing"), "no-such-program-xyz"} {
		tg, err := target.ParseCommand("cmd:" + bad + " {addr}")
		require.NoError(t, err)
		err = tg.Check()
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "program "+bad)
		_, err = tg.Build(t.Context(), "unused")
		assert.Error(t, err, bad)
	}
}

func TestProbeHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		io.WriteString(w, r.Host+" "+r.URL.RequestURI())
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	status, err := target.ProbeHTTP(t.Context(), nil, "tcp", addr, "/api/x?y=1", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)
	status, err = target.ProbeHTTP(t.Context(), nil, "tcp", addr, "/api/x?y=1", http.Header{"X-Api-Key": {"k"}, "Host": {"api.test"}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	_, err = target.ProbeHTTP(t.Context(), nil, "tcp", "127.0.0.1:1", "/", nil)
	assert.ErrorContains(t, err, "connection refused")
}

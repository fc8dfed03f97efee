package stack

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

func tops(t *testing.T, names ...string) []topology.Topology {
	t.Helper()
	ts, err := topology.LookupAll(names)
	require.NoError(t, err)
	return ts
}

// procdAPI is a procd agent's API that records the restarts and stops it
// was asked for and answers restarts with code.
type procdAPI struct {
	mu       sync.Mutex
	restarts [][]string
	stops    int
	code     int
}

func (a *procdAPI) serve(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/restart":
			var req supervise.RestartRequest
			_ = json.NewDecoder(r.Body).Decode(&req)
			a.restarts = append(a.restarts, req.Env)
			if a.code != 0 && a.code != http.StatusOK {
				w.WriteHeader(a.code)
				_ = json.NewEncoder(w).Encode(supervise.Status{Error: "hello: listen tcp 127.0.0.1:8080: bind: address already in use"})
				return
			}
			_ = json.NewEncoder(w).Encode(supervise.Status{Running: true, Ready: true, Pid: 7})
		case "/stop":
			a.stops++
			_ = json.NewEncoder(w).Encode(supervise.Status{})
		case "/status":
			_ = json.NewEncoder(w).Encode(supervise.Status{Running: true, Ready: true, Pid: 7})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStartWithAgents: the stack restarts cmd/hello with the block's
// GOMAXPROCS and nginx through their agents, holds them behind the same
// interface, and stops them, nginx first.
func TestStartWithAgents(t *testing.T) {
	hello, nginx := &procdAPI{}, &procdAPI{}
	cfg := Config{Topologies: tops(t, "standalone", "nginx-http"), GOMAXPROCS: 8, HelloAgent: hello.serve(t), NginxAgent: nginx.serve(t)}
	st, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"GOMAXPROCS=8"}}, hello.restarts)
	assert.Len(t, nginx.restarts, 1)
	assert.Equal(t, "cmd/hello via "+cfg.HelloAgent+", nginx via "+cfg.NginxAgent, st.String())
	assert.Zero(t, st.ServerPid(), "no pid here: nothing to read from this /proc")
	assert.NoError(t, st.Alive())
	require.NoError(t, st.Stop())
	assert.Equal(t, 1, hello.stops)
	assert.Equal(t, 1, nginx.stops)

	t.Run("only the nginx ceilings: no hello restart", func(t *testing.T) {
		hello, nginx := &procdAPI{}, &procdAPI{}
		nginxURL := nginx.serve(t)
		st, err := Start(context.Background(), Config{Topologies: tops(t, "nginx-return"), HelloAgent: hello.serve(t), NginxAgent: nginxURL})
		require.NoError(t, err)
		assert.Empty(t, hello.restarts)
		assert.Equal(t, "nginx via "+nginxURL, st.String())
		require.NoError(t, st.Stop())
	})
	t.Run("a failed restart carries the agent's account", func(t *testing.T) {
		hello := &procdAPI{code: http.StatusServiceUnavailable}
		_, err := Start(context.Background(), Config{Topologies: tops(t, "standalone"), GOMAXPROCS: 1, HelloAgent: hello.serve(t)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "starting cmd/hello with GOMAXPROCS=1")
		assert.Contains(t, err.Error(), "address already in use")
	})
	t.Run("nginx topologies need an nginx agent", func(t *testing.T) {
		hello := &procdAPI{}
		_, err := Start(context.Background(), Config{Topologies: tops(t, "standalone", "nginx-http"), HelloAgent: hello.serve(t)})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "need an nginx agent")
		assert.Equal(t, 1, hello.stops, "the hello started is stopped again")
	})
	t.Run("only cmd/hello runs under agents", func(t *testing.T) {
		_, err := Start(context.Background(), Config{Topologies: tops(t, "standalone"), HelloAgent: "http://127.0.0.1:1", Target: "erlang"})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "with procd agents only cmd/hello runs")
	})
}

// TestStartRefusesBeforeStarting: a taken address, a target without its
// program, and a target under a topology it cannot serve are refused
// before any child starts.
func TestStartRefusesBeforeStarting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	taken := topology.Layout{HTTP: ln.Addr().String()}

	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Layout: taken, Topologies: tops(t, "standalone"), HelloBin: "/nonexistent"})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EADDRINUSE)
	assert.Contains(t, err.Error(), "starting cmd/hello: address "+taken.HTTP+" for standalone is not free")

	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Layout: taken, Topologies: tops(t, "standalone"), Target: "erlang"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "starting erlang: no program built for it")

	erl, err := target.Lookup("erlang")
	require.NoError(t, err)
	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Layout: taken, Topologies: tops(t, "standalone", "nginx-fcgi-unix"),
		Target: "erlang", Program: &target.Program{Target: erl}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "topology nginx-fcgi-unix needs cmd/hello; erlang does not listen where it connects")

	api, err := target.ParseCommand("cmd:./api -listen {addr}")
	require.NoError(t, err)
	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Layout: taken, Topologies: tops(t, "nginx-http-unix"),
		Target: api.Name, Program: &target.Program{Target: api}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "topology nginx-http-unix needs cmd/hello; cmd:./api -listen {addr} does not listen where it connects")

	_, err = Start(context.Background(), Config{Dir: t.TempDir(), Layout: taken, Topologies: tops(t, "standalone"),
		Target: "erlang", Program: &target.Program{Target: erl}})
	require.Error(t, err)
	assert.ErrorIs(t, err, syscall.EADDRINUSE, "a target's address is checked too")
}

func TestTargetConfig(t *testing.T) {
	cfg := Config{
		Layout: topology.Layout{HTTP: "127.0.0.1:8080", HTTPUnix: "/run/x/go-http.sock"}, GOMAXPROCS: 8, PoolThreads: 5,
		NetNS: "tb-1-0-srv", CPUs: cpuset.Of(1, 2, 3), Path: "/api/x",
	}
	tc := cfg.TargetConfig()
	assert.Equal(t, cfg.Layout.HTTPListen(), tc.Addr)
	assert.Equal(t, "/run/x/go-http.sock", tc.Unix, "where a command with {unix} listens: nginx-http-unix's upstream")
	assert.Equal(t, "/api/x", tc.Path, "a command target's readiness request asks for the plan's path")
	assert.Equal(t, 8, tc.Procs)
	assert.Equal(t, 5, tc.PoolThreads)
	assert.Equal(t, "tb-1-0-srv", tc.NetNS)
	assert.Equal(t, "1-3", tc.CPUs, "the set as taskset takes it")
	assert.NotNil(t, tc.Dial)
	assert.Empty(t, Config{}.TargetConfig().CPUs, "unpinned")
}

func TestIsGo(t *testing.T) {
	assert.True(t, IsGo(""))
	assert.True(t, IsGo(target.Go))
	assert.False(t, IsGo("erlang"))
}

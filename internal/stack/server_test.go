package stack

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/topology"
)

// fakeServer is a Server whose state the test sets; stops records the
// order in which a stack stops its servers.
type fakeServer struct {
	name    string
	pid     int
	exited  bool
	tail    string
	stopErr error
	stops   *[]string
	closed  int
}

func (f *fakeServer) Name() string { return f.name }
func (f *fakeServer) Pid() int     { return f.pid }
func (f *fakeServer) Exited() bool { return f.exited }
func (f *fakeServer) Tail() string { return f.tail }
func (f *fakeServer) Stop() error {
	f.closed++
	if f.stops != nil {
		*f.stops = append(*f.stops, f.name)
	}
	return f.stopErr
}

type countCloser struct{ n int }

func (c *countCloser) Close() error { c.n++; return nil }

func TestStackPids(t *testing.T) {
	for _, tt := range []struct {
		name             string
		backend, nginx   Server
		wantSrv, wantNgx int
	}{
		{"none", nil, nil, 0, 0},
		{"hello only", &fakeServer{name: "cmd/hello", pid: 10}, nil, 10, 0},
		{"nginx only (the ceilings)", nil, &fakeServer{name: "nginx", pid: 20}, 0, 20},
		{"both", &fakeServer{name: "java-netty", pid: 11}, &fakeServer{name: "nginx", pid: 21}, 11, 21},
		{"agents have no pid here", &agentServer{name: "cmd/hello"}, &agentServer{name: "nginx"}, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stack{backend: tt.backend, nginx: tt.nginx}
			assert.Equal(t, tt.wantSrv, s.ServerPid())
			assert.Equal(t, tt.wantNgx, s.NginxPid())
		})
	}
}

func TestStackString(t *testing.T) {
	for _, tt := range []struct {
		name           string
		backend, nginx Server
		want           string
	}{
		{"none", nil, nil, ""},
		{"hello", &fakeServer{name: "cmd/hello", pid: 7}, nil, "cmd/hello pid 7"},
		{"target and nginx", &fakeServer{name: "erlang", pid: 7}, &fakeServer{name: "nginx", pid: 9}, "erlang pid 7, nginx pid 9"},
		{"nginx alone", nil, &fakeServer{name: "nginx", pid: 9}, "nginx pid 9"},
		{"agents", &agentServer{name: "cmd/hello", client: &supervise.Client{URL: "http://hello:7070"}},
			&agentServer{name: "nginx", client: &supervise.Client{URL: "http://nginx:7070"}},
			"cmd/hello via http://hello:7070, nginx via http://nginx:7070"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, (&Stack{backend: tt.backend, nginx: tt.nginx}).String())
		})
	}
}

// TestAliveNamesTheServerAndItsTail: the first server that exited is
// named, with the last lines of its stderr indented below; a live stack
// is nil.
func TestAliveNamesTheServerAndItsTail(t *testing.T) {
	long := strings.Repeat("line\n", 30) + "panic: boom"
	for _, tt := range []struct {
		name           string
		backend, nginx *fakeServer
		want           string
	}{
		{"both alive", &fakeServer{name: "cmd/hello"}, &fakeServer{name: "nginx"}, ""},
		{"backend exited, no tail", &fakeServer{name: "cmd/hello", exited: true}, &fakeServer{name: "nginx"}, "cmd/hello exited"},
		{"target exited with a tail", &fakeServer{name: "java-pool", exited: true, tail: "Exception in thread main\n"}, nil,
			"java-pool exited\n    Exception in thread main"},
		{"nginx exited", &fakeServer{name: "cmd/hello"}, &fakeServer{name: "nginx", exited: true, tail: "[emerg] bind() failed"},
			"nginx exited\n    [emerg] bind() failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stack{}
			if tt.backend != nil {
				s.backend = tt.backend
			}
			if tt.nginx != nil {
				s.nginx = tt.nginx
			}
			err := s.Alive()
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
	t.Run("a long tail keeps its last 10 lines", func(t *testing.T) {
		err := (&Stack{backend: &fakeServer{name: "cmd/hello", exited: true, tail: long}}).Alive()
		require.Error(t, err)
		lines := strings.Split(err.Error(), "\n")
		assert.Len(t, lines, 11)
		assert.Equal(t, "    panic: boom", lines[10])
	})
}

// TestStopOrderAndErrors: nginx stops before the server it fronts (so it
// does not log upstream errors for a server going away), every error is
// reported, the logs are closed once, and a second Stop does no harm.
func TestStopOrderAndErrors(t *testing.T) {
	var order []string
	be := &fakeServer{name: "cmd/hello", stops: &order, stopErr: errors.New("cmd/hello left its socket behind")}
	ng := &fakeServer{name: "nginx", stops: &order, stopErr: errors.New("nginx exited early")}
	logs := &countCloser{}
	s := &Stack{backend: be, nginx: ng, closers: []io.Closer{logs}}
	err := s.Stop()
	require.Error(t, err)
	assert.Equal(t, []string{"nginx", "cmd/hello"}, order)
	assert.Contains(t, err.Error(), "left its socket")
	assert.Contains(t, err.Error(), "exited early")
	assert.Equal(t, 1, logs.n)
	_ = s.Stop()
	assert.Equal(t, 1, logs.n, "logs are closed once")

	t.Run("nothing running", func(t *testing.T) {
		assert.NoError(t, (&Stack{}).Stop())
	})
}

// agentAPI is a procd agent's API answering status with st and stop with
// stopCode; it counts the stops.
func agentAPI(t *testing.T, st supervise.Status, stopCode int) (url string, stops *int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/status":
			_ = json.NewEncoder(w).Encode(st)
		case "/stop":
			mu.Lock()
			n++
			mu.Unlock()
			w.WriteHeader(stopCode)
			_ = json.NewEncoder(w).Encode(supervise.Status{Error: http.StatusText(stopCode)})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func TestAgentServer(t *testing.T) {
	t.Run("running", func(t *testing.T) {
		url, _ := agentAPI(t, supervise.Status{Running: true, Ready: true}, http.StatusOK)
		a := &agentServer{name: "cmd/hello", client: &supervise.Client{URL: url}}
		assert.False(t, a.Exited())
		assert.Equal(t, "", a.Tail())
		assert.NoError(t, (&Stack{backend: a}).Alive())
	})
	t.Run("exited: the agent's account is the tail", func(t *testing.T) {
		url, _ := agentAPI(t, supervise.Status{Error: "exit status 2\n    panic: listen tcp :8080: bind: address already in use"}, http.StatusOK)
		a := &agentServer{name: "cmd/hello", client: &supervise.Client{URL: url}}
		err := (&Stack{backend: a}).Alive()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cmd/hello exited\n")
		assert.Contains(t, err.Error(), "address already in use")
	})
	t.Run("an agent that does not answer counts as exited", func(t *testing.T) {
		url, _ := agentAPI(t, supervise.Status{}, http.StatusOK)
		a := &agentServer{name: "nginx", client: &supervise.Client{URL: url + "/nowhere"}}
		assert.True(t, a.Exited())
		assert.Contains(t, a.Tail(), "asking its agent")
	})
	t.Run("stop once, errors kept", func(t *testing.T) {
		url, stops := agentAPI(t, supervise.Status{}, http.StatusInternalServerError)
		a := &agentServer{name: "nginx", client: &supervise.Client{URL: url}}
		err := a.Stop()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "stopping nginx via "+url)
		assert.Equal(t, err, a.Stop())
		assert.Equal(t, 1, *stops)
	})
}

func TestNeedsHello(t *testing.T) {
	for _, tt := range []struct {
		names []string
		want  bool
	}{
		{[]string{"nginx-return", "nginx-static"}, false},
		{[]string{"nginx-return", "standalone"}, true},
		{[]string{"nginx-fcgi-unix"}, true},
	} {
		t.Run(strings.Join(tt.names, ","), func(t *testing.T) {
			ts, err := lookupAll(tt.names)
			require.NoError(t, err)
			assert.Equal(t, tt.want, NeedsHello(ts))
		})
	}
}

func lookupAll(names []string) ([]topology.Topology, error) { return topology.LookupAll(names) }

// TestCPU: a server started here is read from /proc (here: this test
// process), one an agent runs from the agent's /cpu, and a server the
// stack lacks is ErrNoServer, not zero.
func TestCPU(t *testing.T) {
	ctx := context.Background()
	self := &fakeServer{name: "cmd/hello", pid: os.Getpid()}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/cpu" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(supervise.CPU{Pid: 42, User: 1.5, System: 0.25})
	}))
	t.Cleanup(api.Close)
	s := &Stack{backend: self, nginx: &agentServer{name: "nginx", client: &supervise.Client{URL: api.URL}}}

	// /proc counts in ticks: spend a few before reading them.
	for x := 0; ; x++ {
		var ru syscall.Rusage
		require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		if time.Duration(ru.Utime.Nano()) > 50*time.Millisecond {
			break
		}
	}
	server, err := s.ServerCPU(ctx)
	require.NoError(t, err)
	assert.Positive(t, server.Total(), "this process has used some CPU")
	nginx, err := s.NginxCPU(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, nginx.User)
	assert.Equal(t, 250*time.Millisecond, nginx.System)

	_, err = (&Stack{}).ServerCPU(ctx)
	assert.ErrorIs(t, err, ErrNoServer)
	_, err = (&Stack{}).NginxCPU(ctx)
	assert.ErrorIs(t, err, ErrNoServer)

	t.Run("an old agent without /cpu", func(t *testing.T) {
		old := httptest.NewServer(http.NotFoundHandler())
		t.Cleanup(old.Close)
		_, err := (&Stack{backend: &agentServer{name: "cmd/hello", client: &supervise.Client{URL: old.URL}}}).ServerCPU(ctx)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrNoServer)
		assert.Contains(t, err.Error(), "cmd/hello: asking")
	})
	t.Run("a process that is gone", func(t *testing.T) {
		_, err := (&Stack{backend: &fakeServer{name: "cmd/hello", pid: 1 << 30}}).ServerCPU(ctx)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cmd/hello: process")
	})
}

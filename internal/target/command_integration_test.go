package target_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
)

// buildCmd parses and builds a command target.
func buildCmd(t *testing.T, spec string) *target.Program {
	t.Helper()
	tg, err := target.ParseCommand(spec)
	require.NoError(t, err)
	p, err := tg.Build(t.Context(), "")
	require.NoError(t, err)
	return p
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// free reports whether nothing listens at addr any more.
func free(addr string) bool {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func getJSON(t *testing.T, network, addr, path string) (int, map[string]any) {
	t.Helper()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Get("http://x" + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(b, &doc), "%s", b)
	return resp.StatusCode, doc
}

// TestCommandTargetLifeCycle runs examples/jsonapi as a command target on
// TCP and a unix socket, as docs/own-service.md does.
func TestCommandTargetLifeCycle(t *testing.T) {
	bin := testenv.JSONAPIBin(t)
	p := buildCmd(t, "cmd:"+bin+" -listen {addr} -unix {unix} -grace 2s")
	addr := testenv.FreeAddr(t)
	sock := filepath.Join(testenv.ShortDir(t), "api.sock")
	var stderr testenv.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := p.Start(ctx, target.Config{Addr: addr, Unix: sock, Path: "/api/x", Procs: 1, Stderr: &stderr})
	require.NoError(t, err)
	assert.Equal(t, p.Target.Name, s.Name())
	assert.Equal(t, addr, s.Addr)
	assert.Equal(t, sock, s.Unix)

	for _, e := range [][2]string{{"tcp", addr}, {"unix", sock}} {
		status, doc := getJSON(t, e[0], e[1], "/api/x")
		assert.Equal(t, 200, status)
		assert.Equal(t, "/api/x", doc["path"])
	}
	env, err := os.ReadFile("/proc/" + strconv.Itoa(s.Pid()) + "/environ")
	require.NoError(t, err)
	assert.Contains(t, string(env), "\x00GOMAXPROCS=1\x00", "the processor value is in its environment")

	pid := s.Pid()
	require.NoError(t, s.Stop())
	require.NoError(t, s.Stop(), "Stop twice")
	assert.True(t, s.Exited())
	assert.True(t, gone(pid))
	assert.True(t, free(addr), "%s still taken", addr)
	_, err = os.Lstat(sock)
	assert.True(t, os.IsNotExist(err), "socket left behind")
	assert.Contains(t, stderr.String(), "jsonapi: listening on tcp "+addr)

	// Cancelling the context stops it too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	s, err = p.Start(ctx2, target.Config{Addr: addr, Unix: sock})
	require.NoError(t, err)
	pid = s.Pid()
	cancel2()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after its context ended")
	}
	s.Stop() // exec reports the cancelled context as its error
	assert.True(t, gone(pid))
	assert.True(t, free(addr))
	_, err = os.Lstat(sock)
	assert.True(t, os.IsNotExist(err), "socket left behind")
}

// TestCommandTargetForks: a command that is a shell starting the server
// leaves nothing running after Stop, the server included.
func TestCommandTargetForks(t *testing.T) {
	bin := testenv.JSONAPIBin(t)
	p := buildCmd(t, `cmd:sh -c '"$0" -listen "$1" & echo "child $!" >&2; wait' `+bin+` {addr}`)
	addr := testenv.FreeAddr(t)
	var stderr testenv.Buffer
	s, err := p.Start(context.Background(), target.Config{Addr: addr, Stderr: &stderr})
	require.NoError(t, err)
	m := regexp.MustCompile(`child (\d+)`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	child, _ := strconv.Atoi(m[1])
	require.False(t, gone(child))
	require.NoError(t, s.Stop())
	assert.Eventually(t, func() bool { return gone(child) }, 5*time.Second, 10*time.Millisecond, "the server the shell started is still running")
	assert.True(t, free(addr))
}

// TestCommandTargetFailures: a command that fails to start, exits, or
// never answers is one error naming it with its stderr, and nothing of it
// is left running.
func TestCommandTargetFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	dir := testenv.ShortDir(t)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))

	tests := []struct {
		name, spec string
		addr, unix string
		deadline   time.Duration
		want       []string
	}{
		{name: "exits at once", spec: `cmd:sh -c 'echo "pid $$"; echo "jsonapi: -listen: bad address" >&2; exit 2' sh {addr}`,
			want: []string{"it exited before it answered (exit status 2)", "jsonapi: -listen: bad address"}},
		{name: "never listens", spec: `cmd:sh -c 'echo "pid $$" >&2; echo "warming up" >&2; exec sleep 60' sh {addr}`,
			deadline: time.Second, want: []string{"no answer to GET / on 127.0.0.1:", "context deadline exceeded", "connection refused", "warming up"}},
		{name: "listens elsewhere", spec: `cmd:sh -c 'echo "pid $$" >&2; exec sleep 60' sh {unix}`,
			deadline: time.Second, want: []string{"no answer to GET / on unix socket "}},
		{name: "address taken", spec: "cmd:sleep 60 {addr}", addr: busy.Addr().String(),
			want: []string{"address " + busy.Addr().String() + " is not free"}},
		{name: "socket path is a file", spec: "cmd:sleep 60 {unix}", unix: file,
			want: []string{file + " exists and is not a socket"}},
		{name: "no socket path", spec: "cmd:sleep 60 {unix}", unix: "-",
			want: []string{"no socket path was given"}},
		{name: "bad address", spec: "cmd:sleep 60 {addr}", addr: "localhost:80",
			want: []string{`want an IP address, not a name`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := buildCmd(t, tt.spec)
			addr, unix := tt.addr, tt.unix
			if addr == "" {
				addr = testenv.FreeAddr(t)
			}
			switch unix {
			case "":
				unix = filepath.Join(testenv.ShortDir(t), "s.sock")
			case "-":
				unix = ""
			}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			began := time.Now()
			s, err := p.Start(ctx, target.Config{Addr: addr, Unix: unix, Grace: time.Second})
			require.Error(t, err)
			assert.Nil(t, s)
			assert.Less(t, time.Since(began), tt.deadline+10*time.Second)
			msg := err.Error()
			t.Log(msg)
			assert.Regexp(t, `^starting `+regexp.QuoteMeta(tt.spec)+` on `, msg, "the first line names the target")
			for _, w := range tt.want {
				assert.Contains(t, msg, w)
			}
			if m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(msg); m != nil {
				pid, _ := strconv.Atoi(m[1])
				assert.True(t, gone(pid), "pid %d left running", pid)
			}
			if tt.addr == "" {
				assert.True(t, free(addr))
			}
		})
	}

	t.Run("missing program", func(t *testing.T) {
		tg, err := target.ParseCommand("cmd:./no-such-api -listen {addr}")
		require.NoError(t, err)
		_, err = tg.Build(t.Context(), "")
		assert.ErrorContains(t, err, "target cmd:./no-such-api -listen {addr}: program ./no-such-api:")
	})
}

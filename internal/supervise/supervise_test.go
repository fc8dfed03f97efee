package supervise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

// The test binary doubles as the supervised program: "helper MODE ARGS".
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "helper" {
		os.Exit(helper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	// serve answers HTTP until SIGTERM, unless the mode ignores SIGTERM:
	// Notify after Ignore would take the signal back.
	stubborn := mode == "stubborn"
	serve := func(network, addr string) int {
		ln, err := net.Listen(network, addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "helper: listening on", addr)
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		mux.HandleFunc("/env", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, os.Getenv("GOMAXPROCS")) })
		mux.HandleFunc("/burn", func(w http.ResponseWriter, r *http.Request) {
			// 300 ms of CPU time (not wall time: the machine is
			// shared), for GET /cpu to see.
			cpu := func() time.Duration {
				var ru syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
				return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			}
			n, start := 0, cpu()
			for cpu()-start < 300*time.Millisecond {
				n++
			}
			fmt.Fprint(w, n)
		})
		srv := &http.Server{Handler: mux}
		if !stubborn {
			sig := make(chan os.Signal, 1)
			signal.Notify(sig, syscall.SIGTERM)
			go func() { <-sig; srv.Close() }()
		}
		_ = srv.Serve(ln)
		return 0
	}
	switch mode {
	case "serve":
		return serve("tcp", args[0])
	case "version":
		fmt.Fprintln(os.Stderr, "\nhelper version: helper/1.2.3")
		return 0
	case "crash":
		fmt.Fprintln(os.Stderr, "boom: flag -nope not defined")
		return 3
	case "sleep":
		time.Sleep(time.Minute)
		return 0
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		return serve("tcp", args[0])
	case "forker":
		// Like nginx: a worker in the same process group that outlives a
		// master which exits on SIGTERM.
		exe, _ := os.Executable()
		w := exec.Command(exe, "helper", "worker")
		if err := w.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "worker %d\n", w.Process.Pid)
		return serve("tcp", args[0])
	case "worker":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
		return 0
	case "count":
		f, err := os.OpenFile(args[0], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return 1
		}
		fmt.Fprintln(f, "prepared")
		f.Close()
		return 0
	case "fail-prepare":
		fmt.Fprintln(os.Stderr, "render failed: no such template")
		return 1
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

func exe(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	require.NoError(t, err)
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// gone reports whether pid no longer runs (absent or a zombie).
func gone(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func eventuallyGone(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "pid %d still running", pid)
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

func newSupervisor(t *testing.T, cfg Config) *Supervisor {
	t.Helper()
	if cfg.Program == "" {
		cfg.Program = exe(t)
	}
	s, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	return s
}

func TestRestartSetsEnvAndReplacesTheProgram(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Env:   []string{"GOMAXPROCS"},
		Ready: []string{"http://" + addr + "/"},
	})
	ctx := context.Background()

	st1, err := s.Start(ctx, []string{"GOMAXPROCS=3"})
	require.NoError(t, err)
	assert.True(t, st1.Running)
	assert.True(t, st1.Ready)
	assert.Equal(t, []string{"GOMAXPROCS=3"}, st1.Env)
	assert.Equal(t, "3", get(t, "http://"+addr+"/env"))

	// The same port is free again for the new copy: the old one has exited.
	st2, err := s.Start(ctx, []string{"GOMAXPROCS=5"})
	require.NoError(t, err)
	assert.NotEqual(t, st1.Pid, st2.Pid)
	assert.True(t, gone(st1.Pid), "old copy still running")
	assert.Equal(t, "5", get(t, "http://"+addr+"/env"))
	assert.Equal(t, 2, st2.Starts)

	require.NoError(t, s.Stop())
	eventuallyGone(t, st2.Pid)
	assert.False(t, s.Status().Running)
	_, err = net.Dial("tcp", addr)
	assert.Error(t, err, "port still served after Stop")
}

func TestVersionIsRecorded(t *testing.T) {
	addr := freeAddr(t)
	prefix := []string{"helper", "serve", addr}
	s := newSupervisor(t, Config{Args: prefix, Ready: []string{"tcp:" + addr}})
	// The helper takes its mode from the first arguments: "helper version".
	s.cfg.VersionArgs = []string{"helper", "version"}
	st, err := s.Start(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "helper version: helper/1.2.3", st.Version)

	s.cfg.VersionArgs = []string{"helper", "crash"}
	s.smu.Lock()
	s.st.Version = ""
	s.smu.Unlock()
	_, err = s.Start(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "helper crash: exit status 3: boom")
}

func TestRefusedEnvLeavesTheProgramRunning(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Env:   []string{"GOMAXPROCS"},
		Ready: []string{"tcp:" + addr},
	})
	st, err := s.Start(context.Background(), nil)
	require.NoError(t, err)

	tests := []struct {
		env, want string
		bad       bool // a *ValueError: allowed name, value the program would ignore
	}{
		{"LD_PRELOAD=/x.so", "LD_PRELOAD may not be set", false},
		{"GOMAXPROCS", "want NAME=VALUE", false},
		{"GOMAXPROCS=abc", `GOMAXPROCS must be a positive integer, not "abc"`, true},
		{"GOMAXPROCS=", `not ""`, true},
		{"GOMAXPROCS=0", `not "0"`, true},
		{"GOMAXPROCS=-2", `not "-2"`, true},
		{"GOMAXPROCS=+2", `not "+2"`, true},
		{"GOMAXPROCS= 2", `not " 2"`, true},
		{"GOMAXPROCS=2.5", `not "2.5"`, true},
		{"GOMAXPROCS=0x10", `not "0x10"`, true},
		{"GOMAXPROCS=99999999999", `not "99999999999"`, true},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			_, err := s.Start(context.Background(), []string{tt.env})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.env)
			assert.Contains(t, err.Error(), tt.want)
			var ve *ValueError
			assert.Equal(t, tt.bad, errors.As(err, &ve), "errors.As(%v, *ValueError)", err)
			now := s.Status()
			assert.True(t, now.Running)
			assert.Equal(t, st.Pid, now.Pid)
		})
	}
}

// TestNewRejectsInheritedBadValue: a start without env hands the
// supervisor's own GOMAXPROCS to the program, so it is checked up front.
func TestNewRejectsInheritedBadValue(t *testing.T) {
	t.Setenv("GOMAXPROCS", "abc")
	_, err := New(Config{Program: exe(t), Env: []string{"GOMAXPROCS"}})
	var ve *ValueError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, ValueError{Name: "GOMAXPROCS", Value: "abc", Want: "a positive integer"}, *ve)
	assert.Equal(t, `environment GOMAXPROCS=abc: GOMAXPROCS must be a positive integer, not "abc"`, err.Error())

	// Not a variable restarts may set: not the supervisor's business.
	_, err = New(Config{Program: exe(t)})
	require.NoError(t, err)
}

func TestStartFailureCarriesStderr(t *testing.T) {
	s := newSupervisor(t, Config{
		Args:         []string{"helper", "crash"},
		Ready:        []string{"tcp:" + freeAddr(t)},
		ReadyTimeout: 5 * time.Second,
	})
	st, err := s.Start(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exited before it was ready: exit status 3")
	assert.Contains(t, err.Error(), "boom: flag -nope not defined")
	assert.False(t, st.Running)
	assert.Equal(t, err.Error(), st.Error)
}

func TestNotReadyInTimeIsStopped(t *testing.T) {
	s := newSupervisor(t, Config{
		Args:         []string{"helper", "sleep"},
		Ready:        []string{"tcp:" + freeAddr(t)},
		ReadyTimeout: 300 * time.Millisecond,
	})
	start := time.Now()
	_, err := s.Start(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not answering after 300ms")
	assert.Less(t, time.Since(start), 5*time.Second)
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, err.Error())
	pid, _ := strconv.Atoi(m[1])
	eventuallyGone(t, pid)
}

func TestStubbornProgramIsKilledAfterGrace(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "stubborn", addr},
		Ready: []string{"http://" + addr + "/"},
		Grace: 200 * time.Millisecond,
	})
	st, err := s.Start(context.Background(), nil)
	require.NoError(t, err)
	err = s.Stop()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not exit within 200ms of terminated; killed")
	eventuallyGone(t, st.Pid)
}

func TestWorkersGoWithTheProgram(t *testing.T) {
	addr := freeAddr(t)
	var stderr testenv.Buffer
	s := newSupervisor(t, Config{
		Args:   []string{"helper", "forker", addr},
		Ready:  []string{"http://" + addr + "/"},
		Stderr: &stderr,
	})
	st, err := s.Start(context.Background(), nil)
	require.NoError(t, err)
	m := regexp.MustCompile(`worker (\d+)`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, stderr.String())
	worker, _ := strconv.Atoi(m[1])
	require.False(t, gone(worker))

	// The program exits on SIGTERM at once; its worker ignores it and
	// would live on without the process-group kill.
	require.NoError(t, s.Stop())
	eventuallyGone(t, st.Pid)
	eventuallyGone(t, worker)
}

func TestPrepareRunsBeforeEveryStart(t *testing.T) {
	addr := freeAddr(t)
	count := filepath.Join(t.TempDir(), "count")
	s := newSupervisor(t, Config{
		Args:    []string{"helper", "serve", addr},
		Prepare: []string{exe(t), "helper", "count", count},
		Ready:   []string{"tcp:" + addr},
	})
	for range 2 {
		_, err := s.Start(context.Background(), nil)
		require.NoError(t, err)
	}
	data, err := os.ReadFile(count)
	require.NoError(t, err)
	assert.Equal(t, "prepared\nprepared\n", string(data))
}

func TestFailedPrepareStartsNothing(t *testing.T) {
	s := newSupervisor(t, Config{
		Args:    []string{"helper", "serve", freeAddr(t)},
		Prepare: []string{exe(t), "helper", "fail-prepare"},
	})
	st, err := s.Start(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exit status 1")
	assert.Contains(t, err.Error(), "render failed: no such template")
	assert.False(t, st.Running)
	assert.Zero(t, st.Pid)
}

func TestUnexpectedExitIsReported(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Ready: []string{"http://" + addr + "/"},
	})
	st, err := s.Start(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(st.Pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return !s.Status().Running }, 5*time.Second, 10*time.Millisecond)
	now := s.Status()
	assert.False(t, now.Ready)
	assert.Contains(t, now.Error, fmt.Sprintf("(pid %d) exited: signal: killed", st.Pid))
	assert.Contains(t, now.Error, "helper: listening on")
}

func TestHTTPAPI(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Env:   []string{"GOMAXPROCS"},
		Ready: []string{"http://" + addr + "/"},
	})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	c := Client{URL: srv.URL}
	ctx := context.Background()
	health := srv.URL + "/healthz"

	err := Check(ctx, health, 5*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "503")
	assert.Contains(t, err.Error(), "not running")

	st, err := c.Restart(ctx, "GOMAXPROCS=2")
	require.NoError(t, err)
	assert.True(t, st.Ready)
	assert.Equal(t, "2", get(t, "http://"+addr+"/env"))
	require.NoError(t, Check(ctx, health, 5*time.Second))

	_, err = c.Restart(ctx, "HOME=/")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request")
	assert.Contains(t, err.Error(), "HOME may not be set")

	_, err = c.Restart(ctx, "GOMAXPROCS=abc")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request")
	assert.Contains(t, err.Error(), `GOMAXPROCS must be a positive integer, not "abc"`)

	resp, err := http.Post(srv.URL+"/restart", "application/json", strings.NewReader("{"))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)

	now, err := c.Status(ctx)
	require.NoError(t, err)
	assert.Equal(t, st.Pid, now.Pid)
	assert.True(t, now.Running)

	now, err = c.Stop(ctx)
	require.NoError(t, err)
	assert.False(t, now.Running)
	eventuallyGone(t, st.Pid)
	assert.Error(t, Check(ctx, health, 5*time.Second))
}

// TestHTTPAPIRefusesBrowsers: what a web page can make a browser on the
// host send (a text/plain form POST, a request with an Origin, a rebound
// DNS name as Host) does not reach the program.
func TestHTTPAPIRefusesBrowsers(t *testing.T) {
	addr := freeAddr(t)
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "serve", addr},
		Ready: []string{"http://" + addr + "/"},
	})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	st, err := Client{URL: srv.URL}.Restart(context.Background())
	require.NoError(t, err)
	require.True(t, st.Running)
	tests := []struct {
		name, method, path, host, ctype, origin string
		want                                    int
	}{
		{"text/plain POST", "POST", "/restart", "", "text/plain", "", http.StatusUnsupportedMediaType},
		{"form POST", "POST", "/restart", "", "application/x-www-form-urlencoded", "", http.StatusUnsupportedMediaType},
		{"POST without type", "POST", "/stop", "", "", "", http.StatusUnsupportedMediaType},
		{"cross-origin JSON", "POST", "/restart", "", "application/json", "http://evil.example", http.StatusForbidden},
		{"rebound host", "POST", "/restart", "evil.example:" + port, "application/json", "", http.StatusForbidden},
		{"rebound host GET", "GET", "/status", "evil.example", "", "", http.StatusForbidden},
		{"localhost", "GET", "/status", "localhost:" + port, "", "", http.StatusOK},
		{"ipv6 loopback", "GET", "/status", "[::1]:" + port, "", "", http.StatusOK},
		{"JSON POST", "POST", "/restart", "", "application/json; charset=utf-8", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.Status()
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(""))
			require.NoError(t, err)
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.ctype != "" {
				req.Header.Set("Content-Type", tt.ctype)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, tt.want, resp.StatusCode, "%s", body)
			if tt.want != http.StatusOK {
				after := s.Status()
				assert.Equal(t, before.Pid, after.Pid, "refused, yet the program changed")
				assert.Equal(t, before.Running, after.Running)
			}
		})
	}
}

// TestHTTPAPIAllowHosts: an address given in AllowHosts is answered as
// Host, others are not, and the browser rules still hold for it.
func TestHTTPAPIAllowHosts(t *testing.T) {
	handler := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), []netip.Addr{netip.MustParseAddr("169.254.201.2")})
	tests := []struct {
		name, method, host, origin string
		want                       int
	}{
		{"allowed address", "GET", "169.254.201.2:7070", "", http.StatusOK},
		{"allowed address, no port", "GET", "169.254.201.2", "", http.StatusOK},
		{"allowed address, POST", "POST", "169.254.201.2:7070", "", http.StatusOK},
		{"other address", "GET", "169.254.201.3:7070", "", http.StatusForbidden},
		{"a name", "GET", "node-b:7070", "", http.StatusForbidden},
		{"allowed address, cross-origin", "POST", "169.254.201.2:7070", "http://evil.example", http.StatusForbidden},
		{"loopback still", "GET", "127.0.0.1:7070", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/status", strings.NewReader("{}"))
			req.Host = tt.host
			if tt.method == "POST" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			w := httptest.NewRecorder()
			handler.ServeHTTP(w, req)
			assert.Equal(t, tt.want, w.Code, w.Body.String())
		})
	}
}

func TestHTTPRestartFailureIs503WithTheReason(t *testing.T) {
	s := newSupervisor(t, Config{
		Args:  []string{"helper", "crash"},
		Ready: []string{"tcp:" + freeAddr(t)},
	})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	st, err := Client{URL: srv.URL}.Restart(context.Background())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "restarting via "+srv.URL)
	assert.Contains(t, err.Error(), "boom: flag -nope not defined")
	assert.False(t, st.Running)
}

func TestNewRejects(t *testing.T) {
	self := exe(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"relative program", Config{Program: "hello"}, `program "hello": want an absolute path`},
		{"missing program", Config{Program: filepath.Join(dir, "nope")}, "no such file"},
		{"not executable", Config{Program: plain}, "not an executable file"},
		{"directory", Config{Program: dir}, "not an executable file"},
		{"relative prepare", Config{Program: self, Prepare: []string{"topobench"}}, "prepare program"},
		{"bad ready scheme", Config{Program: self, Ready: []string{"https://127.0.0.1:1/"}}, "want http://HOST:PORT/PATH"},
		{"ready without port", Config{Program: self, Ready: []string{"tcp:127.0.0.1"}}, "missing port"},
		{"relative socket", Config{Program: self, Ready: []string{"unix:go.sock"}}, "absolute socket path"},
		{"bad env name", Config{Program: self, Env: []string{"A=B"}}, "not a variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

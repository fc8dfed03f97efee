package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer collects run's stderr while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// shortDir is a temporary directory whose paths fit a unix socket.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "ja")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// started is jsonapi running in-process.
type started struct {
	tcp  string // the TCP address it listens on
	stop func() error
}

// start runs jsonapi with args (plus -listen 127.0.0.1:0 unless given) and
// waits for its listening lines.
func start(t *testing.T, args ...string) started {
	t.Helper()
	if !strings.Contains(strings.Join(args, " "), "-listen") {
		args = append([]string{"-listen", "127.0.0.1:0"}, args...)
	}
	want := 0
	for _, a := range args {
		if a == "-listen" || a == "-unix" {
			want++
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, &stderr) }()
	var s started
	require.Eventually(t, func() bool {
		return strings.Count(stderr.String(), "jsonapi: listening on") == want
	}, 10*time.Second, 5*time.Millisecond, "stderr: %s", stderr.String())
	for line := range strings.Lines(stderr.String()) {
		if a, ok := strings.CutPrefix(strings.TrimSpace(line), "jsonapi: listening on tcp "); ok {
			s.tcp = a
		}
	}
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(15 * time.Second):
				err = errors.New("run did not return after cancel")
			}
		})
		return err
	}
	t.Cleanup(func() { s.stop() })
	return s
}

func get(t *testing.T, c net.Conn, br *bufio.Reader, method, path string) (*http.Response, []byte) {
	t.Helper()
	_, err := io.WriteString(c, method+" "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	return resp, b
}

func TestServesJSON(t *testing.T) {
	sock := filepath.Join(shortDir(t), "api.sock")
	s := start(t, "-unix", sock)
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666), fi.Mode().Perm())

	for _, a := range [][2]string{{"tcp", s.tcp}, {"unix", sock}} {
		t.Run(a[0], func(t *testing.T) {
			c, err := net.Dial(a[0], a[1])
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			for _, path := range []string{"/api/x", "/", "/api/x"} { // kept alive
				resp, body := get(t, c, br, "GET", path)
				assert.Equal(t, 200, resp.StatusCode)
				assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				var doc Document
				require.NoError(t, json.Unmarshal(body, &doc))
				assert.Equal(t, path, doc.Path)
				assert.Equal(t, 5, doc.Count)
				assert.Len(t, doc.Items, 5)
			}
			resp, body := get(t, c, br, "HEAD", "/api/x")
			assert.Equal(t, 200, resp.StatusCode)
			assert.Empty(t, body)
			resp, body = get(t, c, br, "POST", "/api/x")
			assert.Equal(t, 405, resp.StatusCode)
			assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
			assert.JSONEq(t, `{"error":"method not allowed"}`, string(body))
		})
	}
	require.NoError(t, s.stop())
	_, err = os.Lstat(sock)
	assert.True(t, os.IsNotExist(err), "socket left behind")
}

// closedWithin reads from c until the server closes it and returns how
// long that took; it fails the test if it takes longer than limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	c.SetReadDeadline(began.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", limit)
	}
	return time.Since(began)
}

// TestHostilePeers: idle, slow, half-sent and never-reading peers are
// dropped by the timeouts, and the service keeps answering others.
func TestHostilePeers(t *testing.T) {
	const rht, idle, write = 300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond
	s := start(t, "-read-header-timeout", rht.String(), "-idle-timeout", idle.String(),
		"-write-timeout", write.String(), "-read-timeout", "1s")
	dial := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", s.tcp)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	served := func(t *testing.T) {
		c := dial(t)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		resp, _ := get(t, c, bufio.NewReader(c), "GET", "/")
		assert.Equal(t, 200, resp.StatusCode)
	}
	tests := []struct {
		name  string
		peer  func(t *testing.T, c net.Conn)
		limit time.Duration
	}{
		{"idle from the start", func(t *testing.T, c net.Conn) {}, rht},
		{"half-sent header", func(t *testing.T, c net.Conn) {
			_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost:")
			require.NoError(t, err)
		}, rht},
		{"slow header", func(t *testing.T, c net.Conn) {
			go func() {
				for _, b := range []byte("GET / HTTP/1.1\r\nHost: x\r\nX-Slow: yes\r\n\r\n") {
					if _, err := c.Write([]byte{b}); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
		}, rht},
		{"idle after a request", func(t *testing.T, c net.Conn) {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			resp, _ := get(t, c, bufio.NewReader(c), "GET", "/")
			require.Equal(t, 200, resp.StatusCode)
			c.SetDeadline(time.Time{})
		}, idle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t)
			tt.peer(t, c)
			served(t)
			took := closedWithin(t, c, tt.limit+3*time.Second)
			assert.GreaterOrEqual(t, took, tt.limit/2, "closed before its limit")
			served(t)
		})
	}

	t.Run("never reading", func(t *testing.T) {
		// A small receive buffer, so the answers back up at once.
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			})
			return errors.Join(err, serr)
		}}
		c, err := d.Dial("tcp", s.tcp)
		require.NoError(t, err)
		defer c.Close()
		batch := bytes.Repeat([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 100)
		began := time.Now()
		c.SetWriteDeadline(began.Add(20 * time.Second))
		for {
			if _, err = c.Write(batch); err != nil {
				break
			}
		}
		var ne net.Error
		require.False(t, errors.As(err, &ne) && ne.Timeout(), "the service still reads from a peer that never reads after 20s")
		t.Logf("writes failed after %v: %v", time.Since(began).Round(time.Millisecond), err)
		served(t)
	})
}

func TestArgs(t *testing.T) {
	dir := shortDir(t)
	file := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	live := filepath.Join(dir, "live.sock")
	l, err := net.Listen("unix", live)
	require.NoError(t, err)
	defer l.Close()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()

	tests := []struct {
		args  []string
		err   string
		usage bool
	}{
		{[]string{"-listen", "nonsense"}, `-listen: "nonsense" is not a host:port address`, true},
		{[]string{"-listen", ""}, "give -listen ADDR, -unix PATH or both", true},
		{[]string{"-idle-timeout", "0s"}, "-idle-timeout: must be positive", true},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus", true},
		{[]string{"extra"}, `unexpected argument "extra"`, true},
		{[]string{"-listen", busy.Addr().String()}, "address already in use", false},
		{[]string{"-listen", "127.0.0.1:0", "-unix", file}, "exists and is not a socket", false},
		{[]string{"-listen", "127.0.0.1:0", "-unix", live}, "another server is listening there", false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
			var ue usageError
			assert.Equal(t, tt.usage, errors.As(err, &ue))
		})
	}
	assert.ErrorIs(t, run(context.Background(), []string{"-h"}, io.Discard), flag.ErrHelp)

	// A stale socket (nobody listening) is replaced.
	stale := filepath.Join(dir, "stale.sock")
	sl, err := net.Listen("unix", stale)
	require.NoError(t, err)
	sl.(*net.UnixListener).SetUnlinkOnClose(false)
	sl.Close()
	start(t, "-unix", stale)
	c, err := net.Dial("unix", stale)
	require.NoError(t, err)
	c.Close()
}

// TestBinarySIGTERM builds jsonapi and stops it as a harness does: SIGTERM
// with a kept-alive connection open; it closes it, exits 0 and removes its
// socket.
func TestBinarySIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := shortDir(t)
	bin := filepath.Join(dir, "jsonapi")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	sock := filepath.Join(dir, "api.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-listen", "127.0.0.1:0", "-unix", sock)
	cmd.WaitDelay = 5 * time.Second
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	for n := 0; n < 2 && sc.Scan(); n++ {
	}
	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	resp, _ := get(t, c, br, "GET", "/")
	require.Equal(t, 200, resp.StatusCode)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for sc.Scan() {
	}
	require.NoError(t, cmd.Wait())
	_, err = os.Lstat(sock)
	assert.True(t, os.IsNotExist(err), "socket left behind")
	_, err = br.ReadByte()
	assert.ErrorIs(t, err, io.EOF, "the idle kept-alive connection is closed at shutdown")
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fcgiclient"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

// These tests build the real binary and speak to it with real clients.

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// backendTopologies are the topologies that end at a cmd/hello listener,
// one per listener.
func backendTopologies() []topology.Topology {
	var out []topology.Topology
	seen := map[topology.Backend]bool{}
	for _, t := range topology.All() {
		if t.Backend != topology.NoBackend && !seen[t.Backend] {
			seen[t.Backend] = true
			out = append(out, t)
		}
	}
	return out
}

func startHello(t *testing.T, tops []topology.Topology) (*hellorun.Server, topology.Layout) {
	t.Helper()
	b := testenv.HelloBin(t)
	layout, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	s, err := hellorun.Start(context.Background(), hellorun.Config{Bin: b, Layout: layout, Topologies: tops})
	require.NoError(t, err)
	t.Cleanup(func() { s.Stop() })
	return s, layout
}

// rawHTTP sends one request and returns the header block exactly as read
// and the body.
func rawHTTP(t *testing.T, c net.Conn, br *bufio.Reader, method string) (string, []byte) {
	t.Helper()
	_, err := io.WriteString(c, method+" / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	require.NoError(t, err)
	var block strings.Builder
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		block.WriteString(line)
		if line == "\r\n" {
			break
		}
	}
	if method == "HEAD" {
		return block.String(), nil
	}
	body := make([]byte, 12)
	_, err = io.ReadFull(br, body)
	require.NoError(t, err)
	return block.String(), body
}

// headerSet is what must match across every path: names and values, Date
// reduced to being parseable.
func headerSet(t *testing.T, h http.Header) map[string]string {
	t.Helper()
	m := map[string]string{}
	for k, v := range h {
		require.Len(t, v, 1, "header %s sent %d times", k, len(v))
		m[k] = v[0]
	}
	_, err := http.ParseTime(m["Date"])
	require.NoError(t, err, "Date %q", m["Date"])
	m["Date"] = "(valid)"
	return m
}

var wantHeaders = map[string]string{
	"Server":         "gophr",
	"Connection":     "keep-alive",
	"Content-Type":   "text/plain",
	"Content-Length": "12",
	"Date":           "(valid)",
}

func TestBinaryEveryListener(t *testing.T) {
	s, layout := startHello(t, backendTopologies())
	for _, top := range backendTopologies() {
		network, addr, _ := layout.BackendAddr(top)
		t.Run(top.Name, func(t *testing.T) {
			c, err := net.Dial(network, addr)
			require.NoError(t, err)
			defer c.Close()
			c.SetDeadline(time.Now().Add(30 * time.Second))

			switch top.Backend {
			case topology.HTTPTCP, topology.HTTPUnix:
				br := bufio.NewReader(c)
				for _, m := range []string{"GET", "HEAD", "GET"} {
					block, body := rawHTTP(t, c, br, m)
					assert.Len(t, block, 141, "header block as a client sees it (curl -sI | wc -c):\n%s", block)
					assert.True(t, strings.HasPrefix(block, "HTTP/1.1 200 OK\r\n"), block)
					resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(block)), &http.Request{Method: "HEAD"})
					require.NoError(t, err)
					assert.Equal(t, wantHeaders, headerSet(t, resp.Header))
					if m == "GET" {
						assert.Equal(t, "Hello World\n", string(body))
					}
				}
			default:
				fc := fcgiclient.NewConn(c)
				ctx := context.Background()
				// nginx with fastcgi_keep_conn: one connection, request id
				// 1 every time.
				for i := range 1000 {
					resp, err := fc.Do(ctx, &fcgiclient.Request{ID: 1, Host: "localhost"})
					require.NoError(t, err, "request %d", i)
					require.Equal(t, fcgiclient.StatusRequestComplete, resp.ProtocolStatus, "request %d", i)
					require.Equal(t, 200, resp.Status, "request %d", i)
					require.Equal(t, "Hello World\n", string(resp.Body), "request %d", i)
					if i == 0 || i == 999 {
						assert.Equal(t, wantHeaders, headerSet(t, resp.Header))
						names := slices.Sorted(slices.Values(resp.HeaderNames))
						assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, names)
						assert.Empty(t, resp.Stderr)
					}
				}
				resp, err := fc.Do(ctx, &fcgiclient.Request{Method: "HEAD"})
				require.NoError(t, err)
				assert.Equal(t, 200, resp.Status)
				assert.Equal(t, wantHeaders, headerSet(t, resp.Header))
				resp, err = fc.Do(ctx, &fcgiclient.Request{Method: "DELETE"})
				require.NoError(t, err)
				assert.Equal(t, 405, resp.Status)
				assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
			}
		})
	}
	require.NoError(t, s.Stop())
	for _, p := range []string{layout.FCGIUnix, layout.FastUnix, layout.HTTPUnix} {
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s left behind", p)
	}
}

func TestBinaryStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			unix, _ := topology.Lookup("nginx-fcgi-unix")
			s, layout := startHello(t, []topology.Topology{unix})
			require.NoError(t, syscall.Kill(s.Pid(), sig))
			select {
			case <-s.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("hello did not exit")
			}
			assert.NoError(t, s.Wait(), "exit status 0")
			_, err := os.Lstat(layout.FCGIUnix)
			assert.True(t, os.IsNotExist(err), "socket left behind")
			assert.Contains(t, s.Tail(), "hello: stopped")
		})
	}
}

func TestBinaryErrors(t *testing.T) {
	b := testenv.HelloBin(t)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	file := testenv.ShortDir(t) + "/plain"
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"bad flag value", []string{"-gomaxprocs", "many"}, 2, `hello: invalid value "many" for flag -gomaxprocs: parse error`},
		{"port in use", []string{"-http", busy.Addr().String(), "-fcgi-tcp=", "-fcgi-unix="}, 1,
			"hello: -http: address " + busy.Addr().String() + " already in use"},
		{"not a socket", []string{"-http=", "-fcgi-tcp=", "-fcgi-unix", file}, 1,
			"hello: -fcgi-unix: unix socket " + file + ": file exists and is not a socket (regular file); refusing to replace it"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			cmd := exec.CommandContext(ctx, b, tt.args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "want a non-zero exit, got %v", err)
			assert.Equal(t, tt.code, ee.ExitCode())
			assert.Equal(t, tt.want+"\n", stderr.String(), "exactly one line")
		})
	}
}

// TestBinarySIGTERMHalfSentHeaders: with half-sent HTTP headers on two
// listeners, the grace period ends with one error per listener; every line
// hello writes keeps its prefix.
func TestBinarySIGTERMHalfSentHeaders(t *testing.T) {
	b := testenv.HelloBin(t)
	sock := testenv.ShortDir(t) + "/h.sock"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, b, "-http", "127.0.0.1:0", "-http-unix", sock, "-fcgi-tcp=", "-fcgi-unix=", "-grace", "5s")
	cmd.WaitDelay = time.Second
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	var lines []string
	var tcpAddr string
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if a, ok := strings.CutPrefix(line, "hello: http on tcp "); ok {
			tcpAddr, _, _ = strings.Cut(a, " ")
		}
		if strings.HasPrefix(line, "hello: ready") {
			break
		}
	}
	require.NotEmpty(t, tcpAddr, "%q", lines)
	for _, a := range [][2]string{{"tcp", tcpAddr}, {"unix", sock}} {
		c, err := net.Dial(a[0], a[1])
		require.NoError(t, err)
		defer c.Close()
		_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost:")
		require.NoError(t, err)
	}
	time.Sleep(100 * time.Millisecond) // let both servers read them
	began := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	// Half-sent requests do not hold the stop: cut at once, exit 0.
	require.NoError(t, cmd.Wait(), "%q", lines)
	assert.Less(t, time.Since(began), time.Second, "the stop waited for half-sent requests")
	joined := strings.Join(lines, "\n")
	assert.Contains(t, joined, "hello: stopped; cut 2 connections")
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "hello: "), "line without the prefix: %q", l)
	}
}

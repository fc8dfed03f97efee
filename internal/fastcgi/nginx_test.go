package fastcgi_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fastcgi"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestThroughNginx puts real nginx in front of net/http/fcgi and of this
// package, with the project's vhosts (upstream keepalive,
// fastcgi_keep_conn on), and wants clients to see the same responses.
func TestThroughNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	bin, err := nginx.Find()
	require.NoError(t, err)
	layout, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)

	std, err := net.Listen("tcp", layout.FCGITCP)
	require.NoError(t, err)
	go fcgi.Serve(std, fastcgi.EchoHandler)
	t.Cleanup(func() { std.Close() })

	fast := &fastcgi.Server{Handler: fastcgi.EchoHandler}
	tcpL, err := net.Listen("tcp", layout.FastTCP)
	require.NoError(t, err)
	fastTCP := &countingListener{Listener: tcpL}
	unixL, err := net.Listen("unix", layout.FastUnix)
	require.NoError(t, err)
	served := make(chan error, 2)
	go func() { served <- fast.Serve(fastTCP) }()
	go func() { served <- fast.Serve(unixL) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, fast.Shutdown(ctx))
		for range 2 {
			assert.ErrorIs(t, <-served, fastcgi.ErrServerClosed)
		}
	})

	params, err := nginxconf.DefaultParams(layout)
	require.NoError(t, err)
	params.Vhosts = []string{"go.fcgi.tcp", "go.fcgi.fast.tcp", "go.fcgi.fast.unix"}
	params.WorkerProcesses = 1
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ngx, err := nginx.Start(ctx, nginx.Config{Bin: bin, Dir: t.TempDir(), Params: params})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, ngx.Stop()) })
	base := func(vhost string) string {
		return "http://127.0.0.1:" + strconv.Itoa(layout.NginxPorts[vhost])
	}

	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	do := func(t *testing.T, method, url string, body []byte, hdr map[string]string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		require.NoError(t, err)
		if body == nil {
			req.Body = nil
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, b
	}

	big := bytes.Repeat([]byte("nginx-upload "), 20000)
	cases := []struct {
		name, method, path string
		body               []byte
		hdr                map[string]string
	}{
		{"hello", "GET", "/hello", nil, nil},
		{"head hello", "HEAD", "/hello", nil, nil},
		{"echo", "GET", "/echo?x=1&y=%20", nil, map[string]string{"X-Custom": "v", "Cookie": "a=b"}},
		{"escaped", "GET", "/a%20b/c", nil, nil},
		{"post", "POST", "/form", []byte("a=1&b=2"), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		{"post big", "POST", "/upload", big, nil},
		{"html", "GET", "/html", nil, nil},
		{"not found", "GET", "/notfound", nil, nil},
		{"not modified", "GET", "/notmodified", nil, nil},
		{"teapot", "GET", "/teapot", nil, nil},
		{"weird headers", "GET", "/weird-headers", nil, nil},
		{"empty", "GET", "/empty", nil, nil},
		{"flush", "GET", "/flush", nil, nil},
		{"big response", "GET", "/big?n=300000", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, wantBody := do(t, tc.method, base("go.fcgi.tcp")+tc.path, tc.body, tc.hdr)
			for _, vhost := range []string{"go.fcgi.fast.tcp", "go.fcgi.fast.unix"} {
				got, gotBody := do(t, tc.method, base(vhost)+tc.path, tc.body, tc.hdr)
				assert.Equal(t, want.StatusCode, got.StatusCode, vhost)
				assert.Equal(t, withoutDate(want.Header), withoutDate(got.Header), vhost)
				assert.Equal(t, want.ContentLength, got.ContentLength, vhost)
				assert.Equal(t, want.TransferEncoding, got.TransferEncoding, vhost)
				// The echo reports the client's port and the vhost's
				// own address, which differ.
				assert.Equal(t,
					normalize(wantBody, layout.NginxPorts["go.fcgi.tcp"]),
					normalize(gotBody, layout.NginxPorts[vhost]), vhost)
			}
		})
	}

	t.Run("141-byte header block", func(t *testing.T) {
		for _, vhost := range []string{"go.fcgi.tcp", "go.fcgi.fast.tcp", "go.fcgi.fast.unix"} {
			block, body := rawGet(t, layout.NginxPorts[vhost], "/hello")
			assert.Len(t, block, 141, "%s: %q", vhost, block)
			assert.Equal(t, "Hello World\n", body, vhost)
		}
	})

	t.Run("keep-alive reuses upstream connections", func(t *testing.T) {
		before := fastTCP.n.Load()
		n := 1200
		for i := range n {
			resp, body := do(t, "GET", base("go.fcgi.fast.tcp")+"/hello?i="+strconv.Itoa(i), nil, nil)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, "Hello World\n", string(body))
		}
		// One nginx worker, one request at a time: one upstream connection
		// carries each run of requests, all with request id 1, until
		// nginx's upstream keepalive_requests (1000 by default since
		// nginx 1.19.10) retires it.
		assert.LessOrEqual(t, fastTCP.n.Load()-before, int64(n/1000+1), "new upstream connections for %d requests", n)
	})
}

func withoutDate(h http.Header) http.Header {
	h = h.Clone()
	h.Del("Date")
	return h
}

// normalize drops the echo's remote address and its vhost port.
func normalize(b []byte, port int) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "remote=") {
			out = append(out, strings.ReplaceAll(l, ":"+strconv.Itoa(port), ":PORT"))
		}
	}
	return strings.Join(out, "\n")
}

// rawGet sends a GET like curl does and returns the response's header
// block and body.
func rawGet(t *testing.T, port int, path string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1:"+strconv.Itoa(port)+"\r\nUser-Agent: curl/8\r\nAccept: */*\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	var block strings.Builder
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		block.WriteString(line)
		if line == "\r\n" {
			break
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(block.String())), nil)
	require.NoError(t, err)
	body := make([]byte, resp.ContentLength)
	_, err = io.ReadFull(br, body)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	require.NoError(t, err)
	return block.String(), string(body)
}

package fcgiclient_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/fcgiclient"
	"github.com/topobench/topobench/internal/testenv"
)

// serveFCGI runs net/http/fcgi on a fresh listener and returns its network
// and address.
func serveFCGI(t *testing.T, network string, h http.Handler) (string, string) {
	t.Helper()
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(testenv.ShortDir(t), "s.sock")
	}
	l, err := net.Listen(network, addr)
	require.NoError(t, err)
	go fcgi.Serve(l, h)
	t.Cleanup(func() { l.Close() })
	return network, l.Addr().String()
}

func echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Method", r.Method)
		w.Header().Set("X-URI", r.URL.RequestURI())
		w.Header().Set("X-Host", r.Host)
		w.Header().Set("X-Trace", r.Header.Get("X-Trace"))
		if r.URL.Path == "/teapot" {
			w.WriteHeader(http.StatusTeapot)
		}
		w.Write(body)
	})
}

func TestDoAgainstNetHTTPFCGI(t *testing.T) {
	for _, network := range []string{"tcp", "unix"} {
		t.Run(network, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			n, a := serveFCGI(t, network, echo())
			c, err := fcgiclient.Dial(ctx, n, a)
			require.NoError(t, err)
			defer c.Close()

			resp, err := c.Do(ctx, &fcgiclient.Request{Method: "POST", URI: "/p?q=1", Host: "h.test",
				Header: http.Header{"X-Trace": {"abc"}}, Body: []byte("payload")})
			require.NoError(t, err)
			assert.Equal(t, uint16(1), resp.ID)
			assert.Equal(t, fcgiclient.StatusRequestComplete, resp.ProtocolStatus)
			assert.Equal(t, 200, resp.Status)
			assert.Equal(t, "200 OK", resp.StatusLine)
			assert.Equal(t, "POST", resp.Header.Get("X-Method"))
			assert.Equal(t, "/p?q=1", resp.Header.Get("X-Uri"))
			assert.Equal(t, "h.test", resp.Header.Get("X-Host"))
			assert.Equal(t, "abc", resp.Header.Get("X-Trace"))
			assert.Equal(t, "payload", string(resp.Body))
			assert.True(t, strings.HasPrefix(string(resp.RawHeader), "Status: 200 OK\r\n"))
			assert.True(t, strings.HasSuffix(string(resp.RawHeader), "\r\n\r\n"))

			// The same connection and request id, again and again, as nginx
			// with fastcgi_keep_conn does.
			for i := range 200 {
				resp, err := c.Do(ctx, &fcgiclient.Request{URI: "/teapot"})
				require.NoError(t, err, "request %d", i)
				require.Equal(t, http.StatusTeapot, resp.Status)
			}

			// A body larger than one record.
			big := strings.Repeat("0123456789", 10_000)
			resp, err = c.Do(ctx, &fcgiclient.Request{Method: "PUT", Body: []byte(big)})
			require.NoError(t, err)
			assert.Equal(t, big, string(resp.Body))
			assert.Greater(t, resp.StdoutRecords, 1)

			vals, err := c.GetValues(ctx, "FCGI_MPXS_CONNS")
			require.NoError(t, err)
			assert.Equal(t, "1", vals["FCGI_MPXS_CONNS"])
		})
	}
}

func TestDoCloseConn(t *testing.T) {
	ctx := context.Background()
	n, a := serveFCGI(t, "tcp", echo())
	c, err := fcgiclient.Dial(ctx, n, a)
	require.NoError(t, err)
	defer c.Close()
	resp, err := c.Do(ctx, &fcgiclient.Request{CloseConn: true})
	require.NoError(t, err)
	assert.Equal(t, 200, resp.Status)
	_, err = c.ReadRecord()
	assert.ErrorIs(t, err, io.EOF, "the application should close the connection without FCGI_KEEP_CONN")
}

func TestDoUnknownRole(t *testing.T) {
	ctx := context.Background()
	n, a := serveFCGI(t, "tcp", echo())
	c, err := fcgiclient.Dial(ctx, n, a)
	require.NoError(t, err)
	defer c.Close()
	resp, err := c.Do(ctx, &fcgiclient.Request{Role: fcgiclient.RoleFilter})
	require.NoError(t, err)
	assert.Equal(t, fcgiclient.StatusUnknownRole, resp.ProtocolStatus)
}

func TestDoDeadline(t *testing.T) {
	// A listener that accepts and never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	c, err := fcgiclient.Dial(context.Background(), "tcp", l.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = c.Do(ctx, &fcgiclient.Request{})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}

package hello

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var fixedNow = time.Date(2013, time.June, 5, 7, 8, 9, 0, time.FixedZone("x", 3600))

const fixedDate = "Wed, 05 Jun 2013 06:08:09 GMT"

// wantBlock is the exact header block for GET and HEAD at fixedNow.
const wantBlock = "HTTP/1.1 200 OK\r\n" +
	"Connection: keep-alive\r\n" +
	"Content-Length: 12\r\n" +
	"Content-Type: text/plain\r\n" +
	"Date: " + fixedDate + "\r\n" +
	"Server: gophr\r\n" +
	"\r\n"

func fixedHandler() *Handler {
	h := NewHandler()
	h.Now = func() time.Time { return fixedNow }
	return h
}

// readBlock reads one response's header block, byte for byte.
func readBlock(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		b.WriteString(line)
		if line == "\r\n" {
			return b.String()
		}
	}
}

func TestHandlerRawBytes(t *testing.T) {
	require.Len(t, wantBlock, HeaderBlockLen)
	srv := httptest.NewServer(fixedHandler())
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)

	// Several requests on one kept-alive connection, as wrk sends them.
	for _, path := range []string{"/", "/any/path?q=1", "/"} {
		_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		assert.Equal(t, wantBlock, readBlock(t, br))
		body := make([]byte, len(Body))
		_, err = io.ReadFull(br, body)
		require.NoError(t, err)
		assert.Equal(t, Body, string(body))
	}

	// HEAD: the same block, no body; the connection stays usable.
	_, err = io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, wantBlock, readBlock(t, br))
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, wantBlock, readBlock(t, br), "after HEAD, the next response starts right away (no body was sent)")
}

func TestHandlerMethods(t *testing.T) {
	srv := httptest.NewServer(fixedHandler())
	defer srv.Close()
	tests := []struct {
		method string
		status int
		body   string
	}{
		{http.MethodGet, 200, Body},
		{http.MethodHead, 200, ""},
		{http.MethodPost, 405, "Method Not Allowed\n"},
		{http.MethodPut, 405, "Method Not Allowed\n"},
		{http.MethodDelete, 405, "Method Not Allowed\n"},
		{http.MethodOptions, 405, "Method Not Allowed\n"},
		{http.MethodPatch, 405, "Method Not Allowed\n"},
		{"BREW", 405, "Method Not Allowed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+"/x", strings.NewReader("some body"))
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, tt.body, string(body))
			assert.Equal(t, "gophr", resp.Header.Get("Server"))
			assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))
			assert.Equal(t, fixedDate, resp.Header.Get("Date"))
			if tt.status == 405 {
				assert.Equal(t, "GET, HEAD", resp.Header.Get("Allow"))
				assert.Equal(t, "19", resp.Header.Get("Content-Length"))
			} else {
				assert.Empty(t, resp.Header.Get("Allow"))
				assert.Equal(t, "12", resp.Header.Get("Content-Length"))
			}
		})
	}
}

func TestHandlerDateAdvances(t *testing.T) {
	now := fixedNow
	h := NewHandler()
	h.Now = func() time.Time { return now }
	get := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Header().Get("Date")
	}
	assert.Equal(t, fixedDate, get())
	now = now.Add(999 * time.Millisecond)
	assert.Equal(t, fixedDate, get(), "same second")
	now = now.Add(time.Millisecond)
	assert.Equal(t, "Wed, 05 Jun 2013 06:08:10 GMT", get())

	// The real clock gives a parseable, current Date.
	d, err := http.ParseTime(func() string {
		rec := httptest.NewRecorder()
		NewHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Header().Get("Date")
	}())
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), d, 2*time.Second)
}

// bareWriter is the least a ResponseWriter can be, to count the handler's
// own allocations.
type bareWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *bareWriter) Header() http.Header    { return w.h }
func (w *bareWriter) WriteHeader(status int) { w.status = status }
func (w *bareWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

func TestHandlerAllocatesNothing(t *testing.T) {
	h := fixedHandler()
	w := &bareWriter{h: http.Header{}}
	for _, method := range []string{"GET", "HEAD", "POST"} {
		r := httptest.NewRequest(method, "/", nil)
		h.ServeHTTP(w, r) // warm the Date cache and the header map
		allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) })
		assert.Zero(t, allocs, method)
	}
}

func TestHandlerSharedValuesStayIntact(t *testing.T) {
	// Appending to a header value downstream must not change what the
	// next request gets.
	h := fixedHandler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	rec.Header().Add("Server", "other")
	rec2 := httptest.NewRecorder()
	h.ServeHTTP(rec2, httptest.NewRequest("GET", "/", nil))
	assert.Equal(t, []string{"gophr"}, rec2.Header()["Server"])
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query      string
		wait, work time.Duration
		bad        string
	}{
		{query: "wait=100ms", wait: 100 * time.Millisecond},
		{query: "a=1&wait=1s&b", wait: time.Second},
		{query: "wait=0"},
		{query: "wait=60s", wait: MaxWait},
		{query: "q=1"},
		{query: "waiting=5"},
		{query: "wait=61s", bad: "wait"},
		{query: "wait=-1ms", bad: "wait"},
		{query: "wait=100", bad: "wait"},
		{query: "wait=", bad: "wait"},
		{query: "wait", bad: "wait"},
		{query: "wait=abc", bad: "wait"},
		{query: "wait=1ms&wait=2ms", bad: "wait"},

		{query: "work=200us", work: 200 * time.Microsecond},
		{query: "work=0"},
		{query: "work=100ms", work: MaxWork},
		{query: "x=1&work=1.5ms&y", work: 1500 * time.Microsecond},
		{query: "workload=5"},
		{query: "work=100.001ms", bad: "work"},
		{query: "work=1s", bad: "work"},
		{query: "work=-1us", bad: "work"},
		{query: "work=200", bad: "work"},
		{query: "work=", bad: "work"},
		{query: "work", bad: "work"},
		{query: "work=1us&work=2us", bad: "work"},

		{query: "wait=10ms&work=200us", wait: 10 * time.Millisecond, work: 200 * time.Microsecond},
		{query: "work=200us&wait=10ms", wait: 10 * time.Millisecond, work: 200 * time.Microsecond},
		{query: "wait=10ms&work=2s", bad: "work"},
		{query: "work=2s&wait=10ms", bad: "work"},
		{query: "work=1ms&wait=2m", bad: "wait"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, bad := parseQuery(tt.query)
			assert.Equal(t, tt.bad, bad)
			if tt.bad == "" {
				assert.Equal(t, tt.wait, q.wait, "wait")
				assert.Equal(t, tt.work, q.work, "work")
			}
		})
	}
}

// TestHandlerWait checks that ?wait= holds the answer and then sends the
// identical header block and body, on a kept-alive connection, and that a
// bad value gets a plain 400 without breaking the connection.
func TestHandlerWait(t *testing.T) {
	srv := httptest.NewServer(fixedHandler())
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)

	for _, path := range []string{"/?wait=150ms", "/x/y?a=b&wait=0.15s"} {
		start := time.Now()
		_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		assert.Equal(t, wantBlock, readBlock(t, br))
		body := make([]byte, len(Body))
		_, err = io.ReadFull(br, body)
		require.NoError(t, err)
		assert.Equal(t, Body, string(body))
		assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond, path)
	}

	for _, path := range []string{"/?wait=2m", "/?wait=fast"} {
		_, err = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, path)
		assert.Equal(t, "text/plain", resp.Header.Get("Content-Type"))
		assert.Contains(t, string(b), "wait must be a duration")
	}

	// The connection still serves the plain path.
	_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	assert.Equal(t, wantBlock, readBlock(t, br))
}

// TestHandlerWaitClientGone: a client that leaves during the wait frees the
// handler at once instead of holding it for the whole wait.
func TestHandlerWaitClientGone(t *testing.T) {
	h := fixedHandler()
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	_, err = io.WriteString(c, "GET /?wait=30s HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)
	c.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("handler still waiting 5s after the client left")
	}
}

func TestHandlerWithQueryAllocatesLittle(t *testing.T) {
	h := fixedHandler()
	w := &bareWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/?a=1&b=2", nil) // a query without wait
	allocs := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) })
	assert.Zero(t, allocs, "a query string without wait is scanned in place")
}

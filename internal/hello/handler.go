// Package hello is the system under test: one handler that answers every GET
// and HEAD with the same 12-byte body and the same five headers, and Serve,
// which puts that handler behind already-open listeners speaking HTTP
// (net/http), FastCGI (net/http/fcgi) or FastCGI through internal/fastcgi,
// and shuts them all down gracefully.
//
// The header block a client sees is 141 bytes on every path:
//
//	HTTP/1.1 200 OK\r\n                       17
//	Connection: keep-alive\r\n                24
//	Content-Length: 12\r\n                    20
//	Content-Type: text/plain\r\n              26
//	Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n   37
//	Server: gophr\r\n                         15
//	\r\n                                       2
//
// A query parameter wait=DURATION (Go syntax: 100ms, 1s; at most MaxWait)
// on any path holds the answer for that long and then sends the same bytes;
// it stands in for the work of a slow handler in the 2016 scenarios. A bad
// value gets a plain 400. Requests without a query string never look at it.
//
// Serve survives idle, slow, half-sent and never-reading peers on every
// listener: Options bound a request header or FastCGI head in time
// (ReadHeaderTimeout), a silence between requests or inside a request body
// (IdleTimeout) and a write the peer does not drain (WriteTimeout); the
// FastCGI servers also bound in bytes what one connection can make them
// hold (64 KiB of PARAMS per request, answered 431 beyond; a few requests
// outstanding at once). See fcgiServer for how net/http/fcgi, which has
// none of these, is held to them from outside.
package hello

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Body is the response body on every path.
const Body = "Hello World\n"

// HeaderBlockLen is the length of the header block a client sees: status
// line, headers and the empty line.
const HeaderBlockLen = 141

// ServerName is the Server header value; nginx's "nginx" has the same length.
const ServerName = "gophr"

// MaxWait bounds the wait=DURATION query parameter.
const MaxWait = 60 * time.Second

// Handler answers GET and HEAD of any path with Body, and every other
// method with 405. It allocates nothing per request except, once a second,
// the new Date value: header values are pre-built slices assigned straight
// into the header map (no canonicalisation, no copies), and the body is a
// pre-allocated []byte.
type Handler struct {
	// Now is the clock for the Date header (time.Now if nil).
	Now func() time.Time

	body, body405, body400                               []byte
	server, keepAlive, textPlain, clen, clen405, clen400 []string
	allow                                                []string
	date                                                 atomic.Pointer[dateValue]
}

type dateValue struct {
	unix int64
	v    []string
}

// NewHandler returns the hello handler.
func NewHandler() *Handler {
	const msg405 = "Method Not Allowed\n"
	const msg400 = "Bad Request: wait must be a duration from 0 to 60s, like wait=100ms\n"
	// Every value slice has len == cap, so an Add by anyone downstream
	// reallocates instead of writing into the shared array.
	return &Handler{
		body:      []byte(Body),
		body405:   []byte(msg405),
		body400:   []byte(msg400),
		server:    []string{ServerName},
		keepAlive: []string{"keep-alive"},
		textPlain: []string{"text/plain"},
		clen:      []string{strconv.Itoa(len(Body))},
		clen405:   []string{strconv.Itoa(len(msg405))},
		clen400:   []string{strconv.Itoa(len(msg400))},
		allow:     []string{"GET, HEAD"},
	}
}

// dateHeader returns the Date value for now, formatting it at most once a
// second. net/http would add Date itself; setting it here gives every
// listener, net/http/fcgi and internal/fastcgi included, the same header
// without a per-request format.
func (h *Handler) dateHeader() []string {
	var now time.Time
	if h.Now != nil {
		now = h.Now()
	} else {
		now = time.Now()
	}
	sec := now.Unix()
	if d := h.date.Load(); d != nil && d.unix == sec {
		return d.v
	}
	d := &dateValue{unix: sec, v: []string{now.UTC().Format(http.TimeFormat)}}
	h.date.Store(d)
	return d.v
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The hot path has no query string and skips this test in one compare.
	if r.URL.RawQuery != "" {
		d, ok := parseWait(r.URL.RawQuery)
		if !ok {
			h.badRequest(w)
			return
		}
		if d > 0 && !sleep(r, d) {
			return // the client went away; nobody reads an answer
		}
	}
	hdr := w.Header()
	hdr["Server"] = h.server
	hdr["Date"] = h.dateHeader()
	hdr["Connection"] = h.keepAlive
	hdr["Content-Type"] = h.textPlain
	switch r.Method {
	case http.MethodGet:
		hdr["Content-Length"] = h.clen
		w.Write(h.body)
	case http.MethodHead:
		hdr["Content-Length"] = h.clen
		w.WriteHeader(http.StatusOK)
	default:
		hdr["Allow"] = h.allow
		hdr["Content-Length"] = h.clen405
		w.WriteHeader(http.StatusMethodNotAllowed)
		w.Write(h.body405)
	}
}

func (h *Handler) badRequest(w http.ResponseWriter) {
	hdr := w.Header()
	hdr["Server"] = h.server
	hdr["Date"] = h.dateHeader()
	hdr["Connection"] = h.keepAlive
	hdr["Content-Type"] = h.textPlain
	hdr["Content-Length"] = h.clen400
	w.WriteHeader(http.StatusBadRequest)
	w.Write(h.body400)
}

// parseWait finds wait=DURATION in a raw query string. Other parameters are
// ignored; a missing wait is zero; a wait that is not a Go duration, is
// negative, above MaxWait or given twice is not ok.
func parseWait(rawQuery string) (d time.Duration, ok bool) {
	seen := false
	for q := rawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k != "wait" {
			continue
		}
		if seen {
			return 0, false
		}
		seen = true
		var err error
		if d, err = time.ParseDuration(v); err != nil || d < 0 || d > MaxWait {
			return 0, false
		}
	}
	return d, true
}

// sleep waits for d or until the request's context ends (the client closed
// the connection or the server shuts down), and reports whether d passed.
func sleep(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

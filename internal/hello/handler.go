// Package hello is the system under test: one handler that answers every GET
// and HEAD with the same 12-byte body and the same five headers, and Serve,
// which puts that handler behind already-open listeners speaking HTTP
// (net/http), HTTPS (net/http over crypto/tls, HTTP/1.1 and HTTP/2 by
// ALPN), FastCGI (net/http/fcgi) or FastCGI through internal/fastcgi,
// and shuts them all down gracefully.
//
// The header block a client sees is 141 bytes on every HTTP/1.1 path
// (HTTP/2 sends the same headers but Connection, which it forbids):
//
//	HTTP/1.1 200 OK\r\n                       17
//	Connection: keep-alive\r\n                24
//	Content-Length: 12\r\n                    20
//	Content-Type: text/plain\r\n              26
//	Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n   37
//	Server: gophr\r\n                         15
//	\r\n                                       2
//
// Two query parameters make the handler slower without changing its
// answer, on any path and every listener (net/http, net/http/fcgi and
// internal/fastcgi all run this one handler, so nginx's vhosts reach it
// with the query as the client sent it):
//
//   - wait=DURATION (Go syntax: 100ms, 1s; at most MaxWait) holds the
//     answer for that long, a sleep that costs no CPU; it stands in for a
//     slow backend in the 2016 scenarios.
//   - work=DURATION (e.g. 200us; at most MaxWork) spends that much CPU time
//     on deterministic work (Spin: repeated SHA-256) before answering. The
//     duration is converted to units of work with a Calibration measured
//     against the thread's CPU clock (Calibrate), so work=200us costs about
//     200 µs of this machine's CPU whatever else runs beside it; under
//     contention it takes longer in wall time, as a real handler would.
//
// Both may be given; the work comes first, then the wait (a client that
// leaves during the wait gets no answer, but the work is spent). A bad or
// excessive value, or either parameter given twice, gets a plain 400.
// Requests without a query string never look at them and allocate
// nothing.
//
// Serve survives idle, slow, half-sent and never-reading peers on every
// listener: Options bound a request header, a FastCGI head or a TLS
// handshake in time (ReadHeaderTimeout), a silence between requests or inside a request body
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
	"sync"
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
	// Calibration converts work=DURATION into units of work. If it is
	// zero, the first request that asks for work runs Calibrate; set it
	// (cmd/hello calibrates at start-up) to keep that off the request path.
	// It must not change once the handler serves.
	Calibration Calibration

	body, body405, body400wait, body400work                               []byte
	server, keepAlive, textPlain, clen, clen405, clen400wait, clen400work []string
	allow                                                                 []string
	date                                                                  atomic.Pointer[dateValue]

	calOnce sync.Once
	cal     Calibration
	calErr  error
}

type dateValue struct {
	unix int64
	v    []string
}

// NewHandler returns the hello handler.
func NewHandler() *Handler {
	const msg405 = "Method Not Allowed\n"
	const msg400wait = "Bad Request: wait must be a duration from 0 to 60s, like wait=100ms\n"
	const msg400work = "Bad Request: work must be a duration from 0 to 100ms, like work=200us\n"
	// Every value slice has len == cap, so an Add by anyone downstream
	// reallocates instead of writing into the shared array.
	return &Handler{
		body:        []byte(Body),
		body405:     []byte(msg405),
		body400wait: []byte(msg400wait),
		body400work: []byte(msg400work),
		server:      []string{ServerName},
		keepAlive:   []string{"keep-alive"},
		textPlain:   []string{"text/plain"},
		clen:        []string{strconv.Itoa(len(Body))},
		clen405:     []string{strconv.Itoa(len(msg405))},
		clen400wait: []string{strconv.Itoa(len(msg400wait))},
		clen400work: []string{strconv.Itoa(len(msg400work))},
		allow:       []string{"GET, HEAD"},
	}
}

// calibration returns h.Calibration, or calibrates once if it is zero.
func (h *Handler) calibration() (Calibration, error) {
	h.calOnce.Do(func() {
		h.cal = h.Calibration
		if h.cal.UnitsPerMicrosecond <= 0 {
			h.cal, h.calErr = Calibrate()
		}
	})
	return h.cal, h.calErr
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
		q, bad := parseQuery(r.URL.RawQuery)
		if bad != "" {
			h.badRequest(w, bad)
			return
		}
		if q.work > 0 {
			cal, err := h.calibration()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			Spin(cal.Units(q.work))
		}
		if q.wait > 0 && !sleep(r, q.wait) {
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

// badRequest answers 400 naming the parameter that was wrong.
func (h *Handler) badRequest(w http.ResponseWriter, param string) {
	body, clen := h.body400wait, h.clen400wait
	if param == "work" {
		body, clen = h.body400work, h.clen400work
	}
	hdr := w.Header()
	hdr["Server"] = h.server
	hdr["Date"] = h.dateHeader()
	hdr["Connection"] = h.keepAlive
	hdr["Content-Type"] = h.textPlain
	hdr["Content-Length"] = clen
	w.WriteHeader(http.StatusBadRequest)
	w.Write(body)
}

// query is what a request's query string asks of the handler.
type query struct {
	wait, work time.Duration
}

// parseQuery finds wait=DURATION and work=DURATION in a raw query string.
// Other parameters are ignored; a missing one is zero. bad names the first
// parameter that is not a Go duration, is negative, is above its bound
// (MaxWait, MaxWork) or is given twice; it is empty when all is well.
func parseQuery(rawQuery string) (q query, bad string) {
	var seenWait, seenWork bool
	for rest := rawQuery; rest != ""; {
		var kv string
		kv, rest, _ = strings.Cut(rest, "&")
		k, v, _ := strings.Cut(kv, "=")
		var d *time.Duration
		var seen *bool
		var limit time.Duration
		switch k {
		case "wait":
			d, seen, limit = &q.wait, &seenWait, MaxWait
		case "work":
			d, seen, limit = &q.work, &seenWork, MaxWork
		default:
			continue
		}
		if *seen {
			return query{}, k
		}
		*seen = true
		var err error
		if *d, err = time.ParseDuration(v); err != nil || *d < 0 || *d > limit {
			return query{}, k
		}
	}
	return q, ""
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

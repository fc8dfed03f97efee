package fastcgi

// A FastCGI client for the tests and benchmarks of this package, built on
// the package's own encoders: it frames requests the way nginx does and
// splits a response back into its streams. It allocates nothing per
// request once warm, so benchmark allocation counts are the server's.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
)

// pair is one CGI parameter.
type pair struct{ name, value string }

// nginxParams is what nginx's stock fastcgi_params sends for a GET of
// uri, plus the headers a load generator sends.
func nginxParams(method, uri string) []pair {
	path, query, _ := strings.Cut(uri, "?")
	return []pair{
		{"QUERY_STRING", query},
		{"REQUEST_METHOD", method},
		{"CONTENT_TYPE", ""},
		{"CONTENT_LENGTH", ""},
		{"SCRIPT_NAME", path},
		{"REQUEST_URI", uri},
		{"DOCUMENT_URI", path},
		{"DOCUMENT_ROOT", "/usr/share/nginx/html"},
		{"SERVER_PROTOCOL", "HTTP/1.1"},
		{"REQUEST_SCHEME", "http"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "nginx"},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"REMOTE_PORT", "41234"},
		{"SERVER_ADDR", "127.0.0.1"},
		{"SERVER_PORT", "8082"},
		{"SERVER_NAME", "go.fcgi.fast.tcp"},
		{"REDIRECT_STATUS", "200"},
		{"HTTP_HOST", "127.0.0.1:8082"},
		{"HTTP_USER_AGENT", "wrk"},
		{"HTTP_ACCEPT", "*/*"},
	}
}

// appendParams encodes pairs as PARAMS records (split at maxContent)
// followed by the empty record that ends the stream.
func appendParams(b []byte, id uint16, pairs []pair) []byte {
	var enc []byte
	for _, p := range pairs {
		enc = appendPair(enc, p.name, p.value)
	}
	for len(enc) > 0 {
		n := min(len(enc), maxContent)
		b = appendRecord(b, typeParams, id, enc[:n])
		enc = enc[n:]
	}
	return appendRecord(b, typeParams, id, nil)
}

// appendStdin encodes body as STDIN records and the closing empty one.
func appendStdin(b []byte, id uint16, body []byte) []byte {
	for len(body) > 0 {
		n := min(len(body), 32<<10)
		b = appendRecord(b, typeStdin, id, body[:n])
		body = body[n:]
	}
	return appendRecord(b, typeStdin, id, nil)
}

// appendBegin encodes BEGIN_REQUEST for the responder role.
func appendBegin(b []byte, id uint16, keep bool) []byte {
	var flags byte
	if keep {
		flags = flagKeepConn
	}
	return appendRecord(b, typeBeginRequest, id, []byte{0, roleResponder, flags, 0, 0, 0, 0, 0})
}

// encodeRequest is one whole request as nginx sends it.
func encodeRequest(id uint16, keep bool, pairs []pair, body []byte) []byte {
	b := appendBegin(nil, id, keep)
	b = appendParams(b, id, pairs)
	return appendStdin(b, id, body)
}

// result is a response split into its streams.
type result struct {
	stdout, stderr []byte
	protocolStatus uint8
	appStatus      uint32
	others         []header // records of other types, or for other ids
}

// recordReader reads records from a stream; content stays valid until
// the next call.
type recordReader struct {
	r   *bufio.Reader
	buf []byte
}

func newRecordReader(r io.Reader) *recordReader {
	return &recordReader{r: bufio.NewReaderSize(r, 64<<10), buf: make([]byte, maxRecord)}
}

func (rr *recordReader) next() (header, []byte, error) {
	if _, err := io.ReadFull(rr.r, rr.buf[:headerLen]); err != nil {
		return header{}, nil, err
	}
	h, err := parseHeader(rr.buf)
	if err != nil {
		return h, nil, err
	}
	if _, err := io.ReadFull(rr.r, rr.buf[headerLen:h.size()]); err != nil {
		return h, nil, fmt.Errorf("truncated record: %w", err)
	}
	return h, rr.buf[headerLen : headerLen+int(h.length)], nil
}

// readResult reads records until END_REQUEST for id, appending the
// streams to res (whose slices are reused).
func (rr *recordReader) readResult(id uint16, res *result) error {
	res.stdout, res.stderr, res.others = res.stdout[:0], res.stderr[:0], res.others[:0]
	for {
		h, content, err := rr.next()
		if err != nil {
			return err
		}
		if h.id != id {
			res.others = append(res.others, h)
			continue
		}
		switch h.typ {
		case typeStdout:
			res.stdout = append(res.stdout, content...)
		case typeStderr:
			res.stderr = append(res.stderr, content...)
		case typeEndRequest:
			if len(content) != 8 {
				return errors.New("END_REQUEST body is not 8 bytes")
			}
			res.appStatus = uint32(content[0])<<24 | uint32(content[1])<<16 | uint32(content[2])<<8 | uint32(content[3])
			res.protocolStatus = content[4]
			return nil
		default:
			res.others = append(res.others, h)
		}
	}
}

// cgiResponse is a parsed STDOUT stream.
type cgiResponse struct {
	status     string   // the Status line's value
	lines      []string // header lines in order, as sent
	header     http.Header
	headerSize int
	body       []byte
}

func parseCGI(stdout []byte) (cgiResponse, error) {
	var r cgiResponse
	end := bytes.Index(stdout, []byte("\r\n\r\n"))
	if end < 0 {
		return r, fmt.Errorf("no end of header in %q", stdout)
	}
	r.headerSize = end + 4
	r.body = stdout[end+4:]
	r.header = http.Header{}
	for _, l := range strings.Split(string(stdout[:end]), "\r\n") {
		k, v, ok := strings.Cut(l, ": ")
		if !ok {
			return r, fmt.Errorf("bad header line %q", l)
		}
		if k == "Status" {
			r.status = v
			continue
		}
		r.lines = append(r.lines, l)
		r.header[textproto.CanonicalMIMEHeaderKey(k)] = append(r.header[textproto.CanonicalMIMEHeaderKey(k)], v)
	}
	return r, nil
}

// withoutDate drops the Date line, the one line that may differ between
// two runs of the same request.
func (r cgiResponse) withoutDate() []string {
	var out []string
	for _, l := range r.lines {
		if !strings.HasPrefix(l, "Date: ") {
			out = append(out, l)
		}
	}
	return out
}

// echoHandler describes the request it got, so that two responders can be
// compared on what they hand the handler, and has a few paths that
// exercise the ResponseWriter.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/hello":
		helloHandler(w, r)
		return
	case "/html":
		io.WriteString(w, "<!DOCTYPE html><html><body>hi</body></html>")
		return
	case "/empty":
		return
	case "/notfound":
		http.NotFound(w, r)
		return
	case "/notmodified":
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Length", "5")
		w.Header().Set("Etag", `"x"`)
		w.WriteHeader(http.StatusNotModified)
		return
	case "/teapot":
		w.WriteHeader(http.StatusTeapot)
		w.WriteHeader(http.StatusOK) // ignored
		w.Write([]byte("short and stout\n"))
		return
	case "/oddcode":
		w.WriteHeader(599)
		return
	case "/weird-headers":
		h := w.Header()
		h["X-Multi"] = []string{"one", "two"}
		h["X-Crlf"] = []string{"a\r\nInjected: yes", " padded\t "}
		h["Bad Name"] = []string{"dropped"}
		h["lower-case"] = []string{"kept as is"}
		h["X-Empty"] = []string{""}
		h["Date"] = []string{"Mon, 02 Jan 2006 15:04:05 GMT"}
		w.Write([]byte("ok\n"))
		return
	case "/flush":
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: 2\n\n")
		return
	case "/big":
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 1024)
		for n > 0 {
			k := min(n, len(chunk))
			w.Write(chunk[:k])
			n -= k
		}
		return
	}
	body, err := io.ReadAll(r.Body)
	var b strings.Builder
	fmt.Fprintf(&b, "method=%q\nurl=%q\nscheme=%q host=%q path=%q rawpath=%q query=%q force=%v\n",
		r.Method, r.URL.String(), r.URL.Scheme, r.URL.Host, r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.URL.ForceQuery)
	fmt.Fprintf(&b, "proto=%q %d.%d close=%v\nhost=%q\nremote=%q\ntls=%v\nrequesturi=%q\n",
		r.Proto, r.ProtoMajor, r.ProtoMinor, r.Close, r.Host, r.RemoteAddr, r.TLS != nil, r.RequestURI)
	fmt.Fprintf(&b, "contentlength=%d trailer=%v\n", r.ContentLength, r.Trailer)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := append([]string(nil), r.Header[k]...)
		sort.Strings(v)
		fmt.Fprintf(&b, "header %q=%q\n", k, v)
	}
	fmt.Fprintf(&b, "body=%d bytes err=%v sum=%x\n", len(body), err, sum(body))
	if r.Method != http.MethodHead {
		w.Header().Set("X-Echo", "1")
	}
	io.WriteString(w, b.String())
}

func sum(b []byte) uint32 {
	var s uint32 = 2166136261
	for _, c := range b {
		s = (s ^ uint32(c)) * 16777619
	}
	return s
}

// The hello response of cmd/hello: headers by map assignment, a 12-byte
// body. The values are allocated once, as a tuned handler would.
var (
	helloServer = []string{"gophr"}
	helloConn   = []string{"keep-alive"}
	helloType   = []string{"text/plain"}
	helloLen    = []string{"12"}
	helloBody   = []byte("Hello World\n")
)

func helloHandler(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Server"] = helloServer
	h["Connection"] = helloConn
	h["Content-Type"] = helloType
	h["Content-Length"] = helloLen
	w.Write(helloBody)
}

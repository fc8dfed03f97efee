package fcgiclient

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Request is one FastCGI request as a web server would send it.
type Request struct {
	// ID is the request id; 0 means 1, the id nginx uses for every request
	// on a kept-alive connection.
	ID uint16
	// Method is the HTTP method; empty means GET.
	Method string
	// URI is the request URI, path and query; empty means "/".
	URI string
	// Proto is SERVER_PROTOCOL; empty means HTTP/1.1.
	Proto string
	// Host is sent as HTTP_HOST and SERVER_NAME; empty means "localhost".
	Host string
	// Header is sent as HTTP_* parameters, as nginx passes request headers.
	Header http.Header
	// Body is sent on STDIN; its length is CONTENT_LENGTH.
	Body []byte
	// Extra parameters replace standard ones of the same name or are added
	// after them.
	Extra []Param
	// Role is the BEGIN_REQUEST role; 0 means responder.
	Role uint16
	// CloseConn clears FCGI_KEEP_CONN: the application should close the
	// connection after this request.
	CloseConn bool
}

func (r *Request) id() uint16 {
	if r.ID == 0 {
		return 1
	}
	return r.ID
}

// CGIParams returns the parameters sent for r: those of nginx's
// fastcgi_params (empty CONTENT_TYPE and CONTENT_LENGTH when there is no
// body, as nginx sends them), then HTTP_HOST and the other headers, then
// Extra.
func (r *Request) CGIParams() []Param {
	method := cmpOr(r.Method, http.MethodGet)
	uri := cmpOr(r.URI, "/")
	proto := cmpOr(r.Proto, "HTTP/1.1")
	host := cmpOr(r.Host, "localhost")
	path, query, _ := strings.Cut(uri, "?")
	clen := ""
	if len(r.Body) > 0 {
		clen = strconv.Itoa(len(r.Body))
	}
	ps := []Param{
		{"QUERY_STRING", query},
		{"REQUEST_METHOD", method},
		{"CONTENT_TYPE", r.Header.Get("Content-Type")},
		{"CONTENT_LENGTH", clen},
		{"SCRIPT_NAME", path},
		{"REQUEST_URI", uri},
		{"DOCUMENT_URI", path},
		{"DOCUMENT_ROOT", "/var/www"},
		{"SERVER_PROTOCOL", proto},
		{"REQUEST_SCHEME", "http"},
		{"GATEWAY_INTERFACE", "CGI/1.1"},
		{"SERVER_SOFTWARE", "fcgiclient"},
		{"REMOTE_ADDR", "127.0.0.1"},
		{"REMOTE_PORT", "40000"},
		{"SERVER_ADDR", "127.0.0.1"},
		{"SERVER_PORT", "80"},
		{"SERVER_NAME", host},
		{"HTTP_HOST", host},
	}
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.EqualFold(k, "Host") {
			continue
		}
		name := "HTTP_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		ps = append(ps, Param{name, strings.Join(r.Header[k], ", ")})
	}
extra:
	for _, e := range r.Extra {
		for i := range ps {
			if ps[i].Name == e.Name {
				ps[i].Value = e.Value
				continue extra
			}
		}
		ps = append(ps, e)
	}
	return ps
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Encode appends the whole request to dst: BEGIN_REQUEST, the PARAMS
// stream, and the STDIN stream.
func (r *Request) Encode(dst []byte) []byte {
	id := r.id()
	role := r.Role
	if role == 0 {
		role = RoleResponder
	}
	var flags uint8
	if !r.CloseConn {
		flags = FlagKeepConn
	}
	dst = AppendBeginRequest(dst, id, role, flags)
	dst = AppendStream(dst, TypeParams, id, AppendPairs(nil, r.CGIParams()))
	return AppendStream(dst, TypeStdin, id, r.Body)
}

// Response is what the application sent for one request.
type Response struct {
	ID uint16
	// Status is the code of the Status header, or 200 without one.
	Status int
	// StatusLine is the value of the Status header as sent ("200 OK"),
	// empty if there was none.
	StatusLine string
	// Header holds the response headers except Status.
	Header http.Header
	// HeaderNames lists the header names (except Status) in the order they
	// were sent, as sent.
	HeaderNames []string
	// RawHeader is the header block exactly as sent on STDOUT, Status line
	// and the empty line that ends it included.
	RawHeader []byte
	// Body is the rest of STDOUT.
	Body []byte
	// Stderr is everything sent on STDERR.
	Stderr []byte
	// AppStatus and ProtocolStatus come from END_REQUEST.
	AppStatus      uint32
	ProtocolStatus uint8
	// StdoutRecords counts the non-empty STDOUT records.
	StdoutRecords int
}

// ParseStdout splits the STDOUT stream of a responder into status, headers
// and body. Lines may end in CRLF or LF.
func ParseStdout(stdout []byte) (*Response, error) {
	end, sep := bytes.Index(stdout, []byte("\r\n\r\n")), 4
	if i := bytes.Index(stdout, []byte("\n\n")); i >= 0 && (end < 0 || i < end) {
		end, sep = i, 2
	}
	if end < 0 {
		return nil, fmt.Errorf("no end of headers in %d bytes of STDOUT", len(stdout))
	}
	resp := &Response{
		Status:    http.StatusOK,
		Header:    http.Header{},
		RawHeader: stdout[:end+sep],
		Body:      stdout[end+sep:],
	}
	for i, line := range strings.Split(string(stdout[:end]), "\n") {
		line = strings.TrimSuffix(line, "\r")
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("header line %d: malformed %q", i+1, line)
		}
		value = strings.TrimSpace(value)
		if strings.EqualFold(name, "Status") {
			code, _, _ := strings.Cut(value, " ")
			n, err := strconv.Atoi(code)
			if err != nil || n < 100 || n > 999 {
				return nil, fmt.Errorf("header line %d: bad status %q", i+1, value)
			}
			resp.Status, resp.StatusLine = n, value
			continue
		}
		resp.HeaderNames = append(resp.HeaderNames, name)
		key := textproto.CanonicalMIMEHeaderKey(name)
		resp.Header[key] = append(resp.Header[key], value)
	}
	return resp, nil
}

// Conn is a client connection to a FastCGI application. It is not safe
// for concurrent use; requests on one Conn run one after another, as nginx
// sends them on a kept-alive upstream connection.
type Conn struct {
	nc   net.Conn
	rd   *Reader
	wbuf []byte
}

// Dial connects to a FastCGI application; network is "tcp" or "unix".
func Dial(ctx context.Context, network, addr string) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return NewConn(nc), nil
}

// NewConn wraps an open connection.
func NewConn(nc net.Conn) *Conn {
	return &Conn{nc: nc, rd: NewReader(bufio.NewReaderSize(nc, 16<<10))}
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// Write sends raw bytes, e.g. hand-built records.
func (c *Conn) Write(b []byte) (int, error) { return c.nc.Write(b) }

// ReadRecord reads one record; its Content is valid until the next read.
func (c *Conn) ReadRecord() (Record, error) { return c.rd.Next() }

// Do sends req and reads its response. The context's deadline, or its
// cancellation, bounds the whole exchange. A response whose END_REQUEST
// reports a protocol status other than REQUEST_COMPLETE is returned
// without error; callers check ProtocolStatus.
func (c *Conn) Do(ctx context.Context, req *Request) (*Response, error) {
	defer c.watch(ctx)()
	c.wbuf = req.Encode(c.wbuf[:0])
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return nil, c.ctxErr(ctx, fmt.Errorf("sending request %d: %w", req.id(), err))
	}
	resp, err := c.ReadResponse(req.id())
	return resp, c.ctxErr(ctx, err)
}

// watch applies ctx's deadline and cancellation to the connection until the
// returned function is called.
func (c *Conn) watch(ctx context.Context) func() {
	dl, _ := ctx.Deadline()
	_ = c.nc.SetDeadline(dl)
	if ctx.Done() == nil {
		return func() {}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	return func() {
		stop()
		_ = c.nc.SetDeadline(time.Time{})
	}
}

func (c *Conn) ctxErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	// The connection's deadline can fire a moment before the context's.
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
	}
	return err
}

// ReadResponse reads STDOUT and STDERR records of request id until its
// END_REQUEST. A record for another request id, or a management record, is
// an error.
func (c *Conn) ReadResponse(id uint16) (*Response, error) {
	var stdout, stderr []byte
	records := 0
	for {
		rec, err := c.rd.Next()
		if err != nil {
			return nil, fmt.Errorf("reading response to request %d: %w", id, err)
		}
		if rec.ID != id {
			return nil, fmt.Errorf("got %s record for request id %d while reading request %d", TypeName(rec.Type), rec.ID, id)
		}
		switch rec.Type {
		case TypeStdout:
			if len(rec.Content) > 0 {
				records++
			}
			stdout = append(stdout, rec.Content...)
		case TypeStderr:
			stderr = append(stderr, rec.Content...)
		case TypeEndRequest:
			end, err := ParseEndRequest(rec.Content)
			if err != nil {
				return nil, err
			}
			resp := &Response{}
			if end.ProtocolStatus == StatusRequestComplete {
				if resp, err = ParseStdout(stdout); err != nil {
					return nil, fmt.Errorf("response to request %d: %w", id, err)
				}
			}
			resp.ID, resp.Stderr, resp.StdoutRecords = id, stderr, records
			resp.AppStatus, resp.ProtocolStatus = end.AppStatus, end.ProtocolStatus
			return resp, nil
		default:
			return nil, fmt.Errorf("unexpected %s record for request %d", TypeName(rec.Type), id)
		}
	}
}

// GetValues asks the application for management variables such as
// FCGI_MAX_CONNS, FCGI_MAX_REQS and FCGI_MPXS_CONNS.
func (c *Conn) GetValues(ctx context.Context, names ...string) (map[string]string, error) {
	defer c.watch(ctx)()
	ps := make([]Param, len(names))
	for i, n := range names {
		ps[i] = Param{Name: n}
	}
	c.wbuf = AppendRecord(c.wbuf[:0], TypeGetValues, 0, AppendPairs(nil, ps))
	if _, err := c.nc.Write(c.wbuf); err != nil {
		return nil, c.ctxErr(ctx, fmt.Errorf("sending GET_VALUES: %w", err))
	}
	rec, err := c.rd.Next()
	if err != nil {
		return nil, c.ctxErr(ctx, fmt.Errorf("reading GET_VALUES_RESULT: %w", err))
	}
	if rec.Type != TypeGetValuesResult || rec.ID != 0 {
		return nil, fmt.Errorf("got %s record for request id %d, want GET_VALUES_RESULT for id 0", TypeName(rec.Type), rec.ID)
	}
	got, err := ParsePairs(rec.Content)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(got))
	for _, p := range got {
		m[p.Name] = p.Value
	}
	return m, nil
}

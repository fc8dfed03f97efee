package fastcgi

// This file turns a request's PARAMS stream into an *http.Request with the
// same fields net/http/cgi.RequestFromMap (which net/http/fcgi uses) would
// produce, without allocating in the common case. The Request, its Header,
// Trailer, URL and TLS state belong to the connection's request slot and
// are reset and refilled for every request.
//
// All strings handed to the handler are substrings of one string per
// request, the "arena": the raw PARAMS bytes followed by the few values
// that have to be computed (RemoteAddr, a URI assembled from SCRIPT_NAME,
// PATH_INFO and QUERY_STRING). When a request's arena has the same bytes
// as the previous request's on that slot, the previous string is reused,
// so a client repeating the same request costs no allocation at all; any
// other request costs one.

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
)

// Parameters net/http/cgi reads; every other parameter except HTTP_* is
// ignored, as in net/http/fcgi (which only passes them to ProcessEnv).
const (
	kMethod = iota
	kProto
	kHost
	kContentLength
	kContentType
	kRequestURI
	kScriptName
	kPathInfo
	kQueryString
	kHTTPS
	kRemoteAddr
	kRemotePort
	nKnown

	kHeader = -1 // HTTP_* other than HTTP_HOST
	kOther  = -2
)

func classify(name []byte) int {
	switch string(name) {
	case "REQUEST_METHOD":
		return kMethod
	case "SERVER_PROTOCOL":
		return kProto
	case "HTTP_HOST":
		return kHost
	case "CONTENT_LENGTH":
		return kContentLength
	case "CONTENT_TYPE":
		return kContentType
	case "REQUEST_URI":
		return kRequestURI
	case "SCRIPT_NAME":
		return kScriptName
	case "PATH_INFO":
		return kPathInfo
	case "QUERY_STRING":
		return kQueryString
	case "HTTPS":
		return kHTTPS
	case "REMOTE_ADDR":
		return kRemoteAddr
	case "REMOTE_PORT":
		return kRemotePort
	}
	if len(name) >= 5 && string(name[:5]) == "HTTP_" {
		return kHeader
	}
	return kOther
}

// span locates a substring of the arena.
type span struct{ off, len int32 }

func (s span) of(arena string) string { return arena[s.off : s.off+s.len] }

// pairRef is one parsed name-value pair.
type pairRef struct {
	name, value span
	kind        int
}

// maxNameCache bounds the per-slot cache of header names that are not in
// commonHeaderKey, so a peer inventing names cannot grow it without end.
const maxNameCache = 64

// builder holds everything a request slot reuses to build requests.
type builder struct {
	pairs []pairRef
	known [nKnown]int // index in pairs of the last occurrence, or -1
	arena []byte
	prev  string // the previous request's arena string
	vals  []string
	names map[string]string // HTTP_ parameter name -> header key

	req     http.Request
	url     url.URL
	header  http.Header
	trailer http.Header
	tls     tls.ConnectionState
}

func newBuilder() *builder {
	return &builder{header: make(http.Header), trailer: make(http.Header)}
}

// errTooManyParams reports more pairs than Server.MaxParams allows.
var errTooManyParams = errors.New("fastcgi: too many params")

// parse splits params into pairs, at most max of them. Like net/http/fcgi
// it stops quietly at the first malformed pair.
func (b *builder) parse(params []byte, max int) error {
	b.pairs = b.pairs[:0]
	for i := range b.known {
		b.known[i] = -1
	}
	off := 0
	rest := params
	for len(rest) > 0 {
		name, value, r, ok := nextPair(rest)
		if !ok {
			break
		}
		if len(b.pairs) == max {
			return errTooManyParams
		}
		nOff := off + (len(rest) - len(r)) - len(name) - len(value)
		p := pairRef{
			name:  span{int32(nOff), int32(len(name))},
			value: span{int32(nOff + len(name)), int32(len(value))},
			kind:  classify(name),
		}
		if p.kind >= 0 {
			b.known[p.kind] = len(b.pairs)
		}
		b.pairs = append(b.pairs, p)
		off += len(rest) - len(r)
		rest = r
	}
	return nil
}

// build fills b.req from params (parsed by b.parse) the way
// cgi.RequestFromMap does, returning its errors word for word. base
// carries the request context.
func (b *builder) build(params []byte, base *http.Request) (*http.Request, error) {
	remote, uri, s := b.layout(params)
	r := &b.req
	*r = *base
	r.Method = b.val(s, kMethod)
	if r.Method == "" {
		return nil, errors.New("cgi: no REQUEST_METHOD in environment")
	}
	r.Proto = b.val(s, kProto)
	if r.Proto == "INCLUDED" {
		r.ProtoMajor, r.ProtoMinor = 1, 0
	} else {
		var ok bool
		if r.ProtoMajor, r.ProtoMinor, ok = http.ParseHTTPVersion(r.Proto); !ok {
			return nil, errors.New("cgi: invalid SERVER_PROTOCOL version")
		}
	}
	r.Close = true
	clear(b.trailer)
	r.Trailer = b.trailer
	clear(b.header)
	r.Header = b.header
	r.Host = b.val(s, kHost)
	if lenstr := b.val(s, kContentLength); lenstr != "" {
		clen, err := strconv.ParseInt(lenstr, 10, 64)
		if err != nil {
			return nil, errors.New("cgi: bad CONTENT_LENGTH in environment: " + lenstr)
		}
		r.ContentLength = clen
	}
	b.headers(s)
	if ct := b.val(s, kContentType); ct != "" {
		// RequestFromMap sets it before adding HTTP_CONTENT_TYPE.
		if old, ok := b.header["Content-Type"]; ok {
			b.header["Content-Type"] = append([]string{ct}, old...)
		} else {
			b.vals = append(b.vals, ct)
			b.header["Content-Type"] = b.vals[len(b.vals)-1:]
		}
	}
	if https := b.val(s, kHTTPS); https == "on" || https == "ON" || https == "1" {
		b.tls = tls.ConnectionState{HandshakeComplete: true}
		r.TLS = &b.tls
	}
	if err := b.setURL(r.Host, uri.of(s), r.TLS != nil); err != nil {
		return nil, err
	}
	r.URL = &b.url
	r.RemoteAddr = remote.of(s)
	return r, nil
}

// layout lays out the arena, params then the computed RemoteAddr and,
// without REQUEST_URI, the URI, and returns it as one string (the
// previous request's where the bytes are the same) with their spans.
func (b *builder) layout(params []byte) (remote, uri span, s string) {
	b.arena = append(b.arena[:0], params...)
	// RemoteAddr is net.JoinHostPort(REMOTE_ADDR, strconv.Itoa(port)),
	// where an unset or invalid port is 0.
	remote = span{off: int32(len(b.arena))}
	addr := b.valBytes(params, kRemoteAddr)
	port := 0
	if p := b.valBytes(params, kRemotePort); len(p) > 0 {
		port, _ = strconv.Atoi(string(p)) // 0 if invalid, as in RequestFromMap
	}
	if bytes.IndexByte(addr, ':') >= 0 {
		b.arena = append(b.arena, '[')
		b.arena = append(b.arena, addr...)
		b.arena = append(b.arena, ']')
	} else {
		b.arena = append(b.arena, addr...)
	}
	b.arena = append(b.arena, ':')
	b.arena = strconv.AppendInt(b.arena, int64(port), 10)
	remote.len = int32(len(b.arena)) - remote.off
	// Without REQUEST_URI the URI is SCRIPT_NAME+PATH_INFO[?QUERY_STRING].
	if i := b.known[kRequestURI]; i >= 0 && b.pairs[i].value.len > 0 {
		uri = b.pairs[i].value
	} else {
		uri.off = int32(len(b.arena))
		b.arena = append(b.arena, b.valBytes(params, kScriptName)...)
		b.arena = append(b.arena, b.valBytes(params, kPathInfo)...)
		if q := b.valBytes(params, kQueryString); len(q) > 0 {
			b.arena = append(b.arena, '?')
			b.arena = append(b.arena, q...)
		}
		uri.len = int32(len(b.arena)) - uri.off
	}
	if string(b.arena) == b.prev {
		s = b.prev
	} else {
		s = string(b.arena)
		b.prev = s
	}
	return remote, uri, s
}

// valBytes is the value of known parameter k in params, nil if unset.
func (b *builder) valBytes(params []byte, k int) []byte {
	if i := b.known[k]; i >= 0 {
		v := b.pairs[i].value
		return params[v.off : v.off+v.len]
	}
	return nil
}

// val is the value of known parameter k in the arena string s, "" if
// unset.
func (b *builder) val(s string, k int) string {
	if i := b.known[k]; i >= 0 {
		return b.pairs[i].value.of(s)
	}
	return ""
}

// setURL sets b.url from the host and the URI as RequestFromMap does,
// by the fast path where it can.
func (b *builder) setURL(host, uri string, https bool) error {
	if host == "" {
		if b.fastURL("", uri, false) {
			return nil
		}
		u, err := url.Parse(uri)
		if err != nil {
			return errors.New("cgi: failed to parse REQUEST_URI into a URL: " + uri)
		}
		b.url = *u
		return nil
	}
	if b.fastURL(host, uri, https) {
		return nil
	}
	scheme := "http://"
	if https {
		scheme = "https://"
	}
	rawurl := scheme + host + uri
	u, err := url.Parse(rawurl)
	if err != nil {
		return errors.New("cgi: failed to parse host and REQUEST_URI into a URL: " + rawurl)
	}
	b.url = *u
	return nil
}

// headers adds the HTTP_* parameters to b.header as RequestFromMap does:
// "HTTP_FOO_BAR" becomes "Foo-Bar". Pairs are visited last to first so
// that a repeated parameter name keeps its last value, as it would in
// net/http/fcgi's params map.
func (b *builder) headers(s string) {
	b.vals = b.vals[:0]
	for i := len(b.pairs) - 1; i >= 0; i-- {
		p := b.pairs[i]
		if p.kind != kHeader {
			continue
		}
		name := p.name.of(s)
		key := b.headerKey(name)
		v := p.value.of(s)
		if old, ok := b.header[key]; ok {
			if b.seenLater(s, i, name) {
				continue
			}
			b.header[key] = append(old, v)
			continue
		}
		b.vals = append(b.vals, v)
		// The three-index slice keeps a handler's append from writing
		// into the next header's value.
		b.header[key] = b.vals[len(b.vals)-1 : len(b.vals) : len(b.vals)]
	}
}

// seenLater reports whether a pair after index i has the given name.
func (b *builder) seenLater(s string, i int, name string) bool {
	for _, p := range b.pairs[i+1:] {
		if p.kind == kHeader && p.name.of(s) == name {
			return true
		}
	}
	return false
}

// headerKey maps an HTTP_ parameter name to its header key.
func (b *builder) headerKey(param string) string {
	if k := commonHeaderKey(param); k != "" {
		return k
	}
	if k, ok := b.names[param]; ok {
		return k
	}
	k := textproto.CanonicalMIMEHeaderKey(strings.ReplaceAll(param[len("HTTP_"):], "_", "-"))
	if b.names == nil {
		b.names = make(map[string]string)
	}
	if len(b.names) < maxNameCache {
		b.names[strings.Clone(param)] = k
	}
	return k
}

// commonHeaderKey knows the request headers browsers, load generators
// and proxies send, so that they cost no allocation.
func commonHeaderKey(param string) string {
	switch param {
	case "HTTP_ACCEPT":
		return "Accept"
	case "HTTP_ACCEPT_CHARSET":
		return "Accept-Charset"
	case "HTTP_ACCEPT_ENCODING":
		return "Accept-Encoding"
	case "HTTP_ACCEPT_LANGUAGE":
		return "Accept-Language"
	case "HTTP_AUTHORIZATION":
		return "Authorization"
	case "HTTP_CACHE_CONTROL":
		return "Cache-Control"
	case "HTTP_CONNECTION":
		return "Connection"
	case "HTTP_CONTENT_LENGTH":
		return "Content-Length"
	case "HTTP_CONTENT_TYPE":
		return "Content-Type"
	case "HTTP_COOKIE":
		return "Cookie"
	case "HTTP_DNT":
		return "Dnt"
	case "HTTP_EXPECT":
		return "Expect"
	case "HTTP_FORWARDED":
		return "Forwarded"
	case "HTTP_IF_MATCH":
		return "If-Match"
	case "HTTP_IF_MODIFIED_SINCE":
		return "If-Modified-Since"
	case "HTTP_IF_NONE_MATCH":
		return "If-None-Match"
	case "HTTP_IF_RANGE":
		return "If-Range"
	case "HTTP_IF_UNMODIFIED_SINCE":
		return "If-Unmodified-Since"
	case "HTTP_ORIGIN":
		return "Origin"
	case "HTTP_PRAGMA":
		return "Pragma"
	case "HTTP_RANGE":
		return "Range"
	case "HTTP_REFERER":
		return "Referer"
	case "HTTP_SEC_FETCH_DEST":
		return "Sec-Fetch-Dest"
	case "HTTP_SEC_FETCH_MODE":
		return "Sec-Fetch-Mode"
	case "HTTP_SEC_FETCH_SITE":
		return "Sec-Fetch-Site"
	case "HTTP_TE":
		return "Te"
	case "HTTP_UPGRADE_INSECURE_REQUESTS":
		return "Upgrade-Insecure-Requests"
	case "HTTP_USER_AGENT":
		return "User-Agent"
	case "HTTP_VIA":
		return "Via"
	case "HTTP_X_FORWARDED_FOR":
		return "X-Forwarded-For"
	case "HTTP_X_FORWARDED_HOST":
		return "X-Forwarded-Host"
	case "HTTP_X_FORWARDED_PROTO":
		return "X-Forwarded-Proto"
	case "HTTP_X_REAL_IP":
		return "X-Real-Ip"
	case "HTTP_X_REQUESTED_WITH":
		return "X-Requested-With"
	}
	return ""
}

// fastURL fills b.url for the URLs nginx sends in the common case — an
// absolute path with an optional query, under a plain host name — with
// exactly what url.Parse would return, and reports false for anything it
// is not sure about so that the caller falls back to url.Parse.
func (b *builder) fastURL(host, uri string, https bool) bool {
	if len(uri) == 0 || uri[0] != '/' {
		return false
	}
	if host == "" && len(uri) > 1 && uri[1] == '/' {
		return false // "//x" would parse as an authority
	}
	if !plainHost(host) {
		return false
	}
	path, query := uri, ""
	forceQuery := false
	if q := strings.IndexByte(uri, '?'); q >= 0 {
		path, query = uri[:q], uri[q+1:]
		if query == "" {
			forceQuery = true
		}
	}
	for i := 0; i < len(path); i++ {
		if !plainPathByte(path[i]) {
			return false
		}
	}
	for i := 0; i < len(query); i++ {
		// Control bytes make url.Parse fail; '#' starts a fragment;
		// a second '?' is fine inside RawQuery except when the URI
		// ends in '?' (ForceQuery), which the check below excludes.
		if c := query[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	if forceQuery && strings.Count(uri, "?") != 1 {
		return false
	}
	b.url = url.URL{Path: path, RawQuery: query, ForceQuery: forceQuery, Host: host}
	if host != "" {
		b.url.Scheme = "http"
		if https {
			b.url.Scheme = "https"
		}
	}
	return true
}

// plainPathByte reports whether c stands for itself in a URL path: the
// bytes url.URL.EscapedPath leaves alone, minus '%', so that Path equals
// the raw path and RawPath stays empty.
func plainPathByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '/', '$', '&', '+', ',', ':', ';', '=', '@':
		return true
	}
	return false
}

// plainHost reports whether host is a DNS name or IPv4 address with an
// optional numeric port, which url.Parse keeps verbatim.
func plainHost(host string) bool {
	name, port, hasPort := strings.Cut(host, ":")
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	if hasPort {
		for i := 0; i < len(port); i++ {
			if port[i] < '0' || port[i] > '9' {
				return false
			}
		}
	}
	return true
}

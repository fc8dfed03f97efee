package fastcgi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cgi"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdlibParams decodes params the way net/http/fcgi does: into a map,
// last value winning, stopping at the first malformed pair.
func stdlibParams(b []byte) map[string]string {
	m := map[string]string{}
	for len(b) > 0 {
		name, value, rest, ok := nextPair(b)
		if !ok {
			break
		}
		m[string(name)] = string(value)
		b = rest
	}
	return m
}

func encodePairs(pairs []pair) []byte {
	var b []byte
	for _, p := range pairs {
		b = appendPair(b, p.name, p.value)
	}
	return b
}

// checkBuild builds a request from params with a builder and compares it
// with what net/http/cgi.RequestFromMap makes of the same parameters.
func checkBuild(t testing.TB, b *builder, params []byte) {
	t.Helper()
	want, wantErr := cgi.RequestFromMap(stdlibParams(params))
	require.NoError(t, b.parse(params, len(params)+1))
	base := new(http.Request).WithContext(context.Background())
	got, err := b.build(params, base)
	if wantErr != nil || err != nil {
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "error for %q", params)
		return
	}
	ctx := fmt.Sprintf("params %q", params)
	assert.Equal(t, want.Method, got.Method, ctx)
	assert.Equal(t, want.Proto, got.Proto, ctx)
	assert.Equal(t, want.ProtoMajor, got.ProtoMajor, ctx)
	assert.Equal(t, want.ProtoMinor, got.ProtoMinor, ctx)
	assert.Equal(t, want.Close, got.Close, ctx)
	assert.Equal(t, want.Host, got.Host, ctx)
	assert.Equal(t, want.ContentLength, got.ContentLength, ctx)
	assert.Equal(t, want.RemoteAddr, got.RemoteAddr, ctx)
	assert.Equal(t, want.RequestURI, got.RequestURI, ctx)
	assert.Equal(t, want.TLS != nil, got.TLS != nil, ctx)
	if want.TLS != nil && got.TLS != nil {
		assert.Equal(t, want.TLS.HandshakeComplete, got.TLS.HandshakeComplete, ctx)
	}
	if !reflect.DeepEqual(want.URL, got.URL) {
		t.Errorf("%s: URL\n got %#v\nwant %#v", ctx, got.URL, want.URL)
	}
	assert.Equal(t, sortedValues(want.Header), sortedValues(got.Header), ctx)
	assert.Empty(t, got.Trailer, ctx)
	assert.NotNil(t, got.Trailer, ctx)
}

// sortedValues orders each key's values: net/http/cgi adds values in
// map order when several parameters map to one header.
func sortedValues(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		out[k] = slices.Sorted(slices.Values(v))
	}
	return out
}

func TestBuildMatchesRequestFromMap(t *testing.T) {
	b := newBuilder()
	for _, tc := range conformanceCorpus() {
		t.Run(tc.name, func(t *testing.T) {
			checkBuild(t, b, encodePairs(tc.params))
		})
	}
	extra := map[string][]pair{
		"empty":              nil,
		"only method":        {{"REQUEST_METHOD", "GET"}},
		"method and proto":   {{"REQUEST_METHOD", "GET"}, {"SERVER_PROTOCOL", "HTTP/1.1"}},
		"upper host":         with(nginxParams("GET", "/"), pair{"HTTP_HOST", "EXAMPLE.com"}),
		"host colon":         with(nginxParams("GET", "/"), pair{"HTTP_HOST", "h:"}),
		"host two colons":    with(nginxParams("GET", "/"), pair{"HTTP_HOST", "h:1:2"}),
		"host userinfo":      with(nginxParams("GET", "/"), pair{"HTTP_HOST", "u@h"}),
		"host percent":       with(nginxParams("GET", "/"), pair{"HTTP_HOST", "h%41"}),
		"uri no slash":       with(nginxParams("GET", "/"), pair{"REQUEST_URI", "x"}),
		"uri two questions":  with(nginxParams("GET", "/"), pair{"REQUEST_URI", "/a?b?"}),
		"uri ctl":            with(nginxParams("GET", "/"), pair{"REQUEST_URI", "/a\x01"}),
		"query del":          with(nginxParams("GET", "/"), pair{"REQUEST_URI", "/a?\x7f"}),
		"no host slashes":    without(with(nginxParams("GET", "/"), pair{"REQUEST_URI", "//h/p"}), "HTTP_HOST"),
		"no host colon path": without(with(nginxParams("GET", "/"), pair{"REQUEST_URI", "a:b"}), "HTTP_HOST"),
		"negative port":      with(nginxParams("GET", "/"), pair{"REMOTE_PORT", "-7"}),
		"plus port":          with(nginxParams("GET", "/"), pair{"REMOTE_PORT", "+7"}),
		"huge port":          with(nginxParams("GET", "/"), pair{"REMOTE_PORT", "99999999999999999999"}),
		"header collision":   append(nginxParams("GET", "/"), pair{"HTTP_X_A", "1"}, pair{"HTTP_X-A", "2"}, pair{"HTTP_X_A", "3"}),
		"uncommon headers":   append(nginxParams("GET", "/"), pair{"HTTP_X_ONE", "1"}, pair{"HTTP_SEC_CH_UA", "2"}),
		"many headers": func() []pair {
			p := nginxParams("GET", "/")
			for i := range 200 {
				p = append(p, pair{fmt.Sprintf("HTTP_X_H%d", i), strings.Repeat("v", i)})
			}
			return p
		}(),
	}
	for name, params := range extra {
		t.Run(name, func(t *testing.T) {
			checkBuild(t, b, encodePairs(params))
		})
	}
}

// TestBuildReusesStrings pins the allocation behaviour the package
// documents: none for a repeated request, one for a different one.
func TestBuildReusesStrings(t *testing.T) {
	b := newBuilder()
	base := new(http.Request).WithContext(context.Background())
	same := encodePairs(nginxParams("GET", "/index.html?x=1"))
	build := func(p []byte) {
		require.NoError(t, b.parse(p, 1000))
		_, err := b.build(p, base)
		require.NoError(t, err)
	}
	build(same)
	assert.Zero(t, testing.AllocsPerRun(100, func() { build(same) }))
	ports := [][]byte{
		encodePairs(with(nginxParams("GET", "/index.html?x=1"), pair{"REMOTE_PORT", "1000"})),
		encodePairs(with(nginxParams("GET", "/index.html?x=1"), pair{"REMOTE_PORT", "2000"})),
	}
	i := 0
	assert.Equal(t, 1.0, testing.AllocsPerRun(100, func() { build(ports[i%2]); i++ }))
}

func TestTooManyParams(t *testing.T) {
	b := newBuilder()
	p := encodePairs(nginxParams("GET", "/"))
	assert.NoError(t, b.parse(p, len(nginxParams("GET", "/"))))
	assert.ErrorIs(t, b.parse(p, 3), errTooManyParams)
}

// FuzzParams feeds arbitrary PARAMS streams to the request builder and
// to net/http/cgi.RequestFromMap and wants the same request or error.
func FuzzParams(f *testing.F) {
	for _, tc := range conformanceCorpus() {
		f.Add(encodePairs(tc.params))
	}
	f.Add([]byte{})
	f.Add([]byte{0x80, 0, 0, 1, 1, 'A', 'B'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add(encodePairs([]pair{{"REQUEST_METHOD", "GET"}, {"SERVER_PROTOCOL", "HTTP/1.1"}, {"REQUEST_URI", "/%41?%"}, {"HTTP_HOST", "x:1"}}))
	b := newBuilder()
	f.Fuzz(func(t *testing.T, params []byte) {
		checkBuild(t, b, params)
	})
}

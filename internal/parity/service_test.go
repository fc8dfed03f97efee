package parity

import (
	"bytes"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/topology"
)

// jsonapi reads examples/jsonapi's answers captured by
// TestCommandTargetParity (-update) with the topology they came through.
func jsonapi(t *testing.T, topo string) Result {
	t.Helper()
	r := captured(t, "jsonapi-"+topo)
	tp, err := topology.Parse(topo)
	require.NoError(t, err)
	r.Topology = tp[0]
	return r
}

func TestCheckSameAsCaptured(t *testing.T) {
	std := jsonapi(t, "standalone")
	via := jsonapi(t, "nginx-http")
	unix := jsonapi(t, "nginx-http-unix")
	all := []Result{std, via, unix}
	require.NoError(t, CheckSameAs(std, all))
	assert.Equal(t, []string{"Content-Length", "Content-Type", "Date"}, std.GET.HeaderNames)
	assert.Equal(t, []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}, via.GET.HeaderNames,
		"nginx adds its Server and Connection, which CheckSameAs leaves out")
	assert.Error(t, Check(all), "cmd/hello's rules do not hold for jsonapi")
	assert.EqualError(t, CheckSameAs(std, nil), "parity: no topologies checked")

	// cmd/hello's answers compared with jsonapi's.
	hello := captured(t, "standalone")
	hello.Topology = std.Topology
	assert.NoError(t, CheckSameAs(hello, []Result{hello}), "hello is the same as itself")
	err := CheckSameAs(std, []Result{hello})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "standalone: GET header names differ from standalone's: extra Connection, extra Server")
	assert.Contains(t, err.Error(), "standalone: body \"Hello World\\n\" differs")
}

func TestCheckSameAs(t *testing.T) {
	std := jsonapi(t, "standalone")
	via := jsonapi(t, "nginx-http")
	tests := []struct {
		name   string
		change func(r *Result)
		want   []string
	}{
		{"status", func(r *Result) { r.GET.Status, r.GET.StatusLine = 502, "HTTP/1.1 502 Bad Gateway" },
			[]string{`nginx-http: GET status "HTTP/1.1 502 Bad Gateway", standalone says "HTTP/1.1 200 OK"`}},
		{"HEAD status", func(r *Result) { r.HEAD.Status, r.HEAD.StatusLine = 405, "HTTP/1.1 405 Method Not Allowed" },
			[]string{`nginx-http: HEAD status "HTTP/1.1 405 Method Not Allowed"`}},
		{"an extra header", func(r *Result) { r.GET.HeaderNames = append(r.GET.HeaderNames, "X-Cache") },
			[]string{"nginx-http: GET header names differ from standalone's: extra X-Cache"}},
		{"a header gone", func(r *Result) { r.HEAD.HeaderNames = []string{"Connection", "Content-Type", "Date", "Server"} },
			[]string{"nginx-http: HEAD header names differ from standalone's: missing Content-Length"}},
		{"body", func(r *Result) { r.GET.Body, r.GET.BodySHA256 = []byte("{}"), "x" },
			[]string{`nginx-http: body "{}" differs from standalone's`}},
		{"HEAD body", func(r *Result) { r.HEAD.Body = []byte("x") }, []string{"nginx-http: HEAD returned a 1-byte body"}},
		{"failed", func(r *Result) { r.Err = errRefused }, []string{"refused"}},
		{"a Date value", func(r *Result) { r.GET.Fields = http.Header{"Date": {"Mon, 02 Jan 2006 15:04:05 GMT"}} }, nil},
		{"a longer header block", func(r *Result) { r.GET.Header = bytes.Repeat([]byte("x"), 500) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := via
			r.GET.HeaderNames = append([]string(nil), via.GET.HeaderNames...)
			tt.change(&r)
			err := CheckSameAs(std, []Result{std, r})
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.NotContains(t, err.Error(), "standalone: ", "the reference matches itself")
		})
	}

	// Standalone's answer is not excused nginx's headers: a service that
	// sends them standalone must send them on every path, and the other
	// way round.
	direct := std
	direct.GET.HeaderNames = append([]string{"Connection"}, std.GET.HeaderNames...)
	err := CheckSameAs(std, []Result{direct})
	assert.ErrorContains(t, err, "standalone: GET header names differ from standalone's: extra Connection")

	bad := std
	bad.Err = errRefused
	assert.ErrorContains(t, CheckSameAs(bad, []Result{via}), "parity: the reference failed: refused")
}

var errRefused = errors.New("refused")

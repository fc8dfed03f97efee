package stack

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// TestParityOfCommandTarget: a command target's answers are its own —
// any headers, any body — and every topology is held to its standalone
// answer, which is asked for even when standalone is not measured; a
// reference that is not a 2xx refuses every topology.
func TestParityOfCommandTarget(t *testing.T) {
	const (
		ok       = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: 7\r\nContent-Length: 11\r\n"
		notFound = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
		okVia    = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: application/json\r\nX-Request-Id: 8\r\nContent-Length: 11\r\nConnection: keep-alive\r\n"
	)
	api, err := target.ParseCommand("cmd:./api -listen {addr}")
	require.NoError(t, err)
	for _, tt := range []struct {
		name          string
		measured      []string
		direct, via   string // header blocks standalone and through nginx
		directB, viaB string
		want          map[string]string // topology -> what its refusal says
	}{
		{"same answer", []string{"standalone", "nginx-http"}, ok, okVia, `{"items":1}`, `{"items":1}`, nil},
		{"standalone not measured, still the reference", []string{"nginx-http"}, ok, okVia, `{"items":1}`, `{"items":2}`,
			map[string]string{"nginx-http": `nginx-http: body "{\"items\":2}" differs from standalone's`}},
		{"a header lost on the way", []string{"standalone", "nginx-http"}, ok, strings.Replace(okVia, "X-Request-Id: 8\r\n", "", 1), `{"items":1}`, `{"items":1}`,
			map[string]string{"nginx-http": "GET header names differ from standalone's: missing X-Request-Id; nginx-http: HEAD header names"}},
		{"not a route of the service", []string{"standalone", "nginx-http"}, notFound, notFound, "not found\n", "not found\n",
			map[string]string{"standalone": `standalone answers GET /api/x with "HTTP/1.1 404 Not Found", not 2xx`, "nginx-http": "not 2xx"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			direct, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			rawServer(t, direct, tt.direct, tt.directB)
			via, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			rawServer(t, via, tt.via, tt.viaB)
			nh, err := topology.Lookup("nginx-http")
			require.NoError(t, err)
			layout := topology.Layout{HTTP: direct.Addr().String(),
				NginxPorts: map[string]int{nh.Vhost: via.Addr().(*net.TCPAddr).Port}}
			s := &Stack{cfg: Config{Layout: layout, Topologies: tops(t, tt.measured...), Target: api.Name,
				Program: &target.Program{Target: api}, Path: "/api/x"}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rs, refused := s.Parity(ctx, 5*time.Second)
			require.Len(t, rs, len(tt.measured), "the reference is not a measured result")
			got := map[string]string{}
			for name, err := range refused {
				got[name] = err.Error()
				assert.NotContains(t, err.Error(), "\n", "one line")
			}
			require.Len(t, got, len(tt.want), "%v", got)
			for name, want := range tt.want {
				assert.Contains(t, got[name], want, name)
			}
		})
	}
}

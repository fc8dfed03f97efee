package stack

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/topology"
)

// rawServer answers every request on l with head (a header block without
// Date and the blank line) and body, keeping the connection open, as a
// target would.
func rawServer(t *testing.T, l net.Listener, head, body string) {
	t.Helper()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					b := head + "Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n"
					if req.Method != http.MethodHead {
						b += body
					}
					if _, err := c.Write([]byte(b)); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
}

// TestParityHoldsTargetsToHello: a server answering standalone with 141
// bytes in another order passes; the same length with another Server
// value, another header or another body is refused.
func TestParityHoldsTargetsToHello(t *testing.T) {
	const (
		status = "HTTP/1.1 200 OK\r\n"
		ka     = "Connection: keep-alive\r\n"
		cl     = "Content-Length: 12\r\n"
		ct     = "Content-Type: text/plain\r\n"
		srv    = "Server: gophr\r\n"
	)
	for _, tt := range []struct {
		name, head, body, want string
	}{
		{"cmd/hello's order", status + ka + cl + ct + srv, hello.Body, ""},
		{"Content-Length last, as Jetty", status + ka + ct + srv + cl, hello.Body, ""},
		{"another Server of the same length", status + ka + cl + ct + "Server: jetty\r\n", hello.Body, `Server "jetty"`},
		{"another header of the same length", status + "X-Powered-By: Servlets\r\n" + cl + ct + srv, hello.Body, "header names"},
		{"another body of the same length", status + ka + cl + ct + srv, "Hello Worlds", "body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Len(t, tt.head+"Date: Mon, 02 Jan 2006 15:04:05 GMT\r\n\r\n", hello.HeaderBlockLen, "the fixture must keep the length")
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			rawServer(t, ln, tt.head, tt.body)
			st, _ := topology.Lookup("standalone")
			s := &Stack{cfg: Config{Layout: topology.Layout{HTTP: ln.Addr().String()}, Topologies: []topology.Topology{st}}}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rs, refused := s.Parity(ctx, 5*time.Second)
			require.Len(t, rs, 1)
			require.NoError(t, rs[0].Err)
			if tt.want == "" {
				assert.Empty(t, refused)
				return
			}
			require.Error(t, refused["standalone"], fmt.Sprintf("%q", rs[0].GET.Header))
			assert.Contains(t, refused["standalone"].Error(), tt.want)
			assert.False(t, strings.Contains(refused["standalone"].Error(), "\n"))
		})
	}
}

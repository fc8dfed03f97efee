package fastcgi

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// stepConn is a memConn whose requests are released one at a time by the
// test, so that testing.AllocsPerRun can count the allocations of one
// request through the whole connection: reading, parsing, building the
// request, the handler, the response and the write.
type stepConn struct {
	*memConn
	allowed int
}

func (c *stepConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	for c.delivered >= c.allowed && !c.closed {
		c.cond.Wait()
	}
	c.mu.Unlock()
	return c.memConn.Read(p)
}

// step releases one request and waits for its END_REQUEST.
func (c *stepConn) step() {
	c.mu.Lock()
	c.allowed++
	n := c.allowed
	c.cond.Broadcast()
	c.mu.Unlock()
	c.wait(n)
}

func TestNoAllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	body := []byte("name=value&other=thing")
	post := with(nginxParams("POST", "/form"),
		pair{"CONTENT_TYPE", "application/x-www-form-urlencoded"},
		pair{"CONTENT_LENGTH", strconv.Itoa(len(body))})
	cases := []struct {
		name    string
		req     []byte
		handler http.HandlerFunc
	}{
		{"hello", encodeRequest(1, true, nginxParams("GET", "/"), nil), helloHandler},
		{"sniffed", encodeRequest(1, true, nginxParams("GET", "/?q=1"), nil), func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "<html>no content type</html>")
			w.(http.Flusher).Flush()
		}},
		{"post body", encodeRequest(1, true, post, body), func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusCreated)
		}},
	}
	for _, tc := range cases {
		for _, timeouts := range []bool{false, true} {
			name := tc.name
			if timeouts {
				name += "/timeouts"
			}
			t.Run(name, func(t *testing.T) {
				c := &stepConn{memConn: newMemConn([][]byte{tc.req}, 1<<30, true)}
				srv := &Server{Handler: tc.handler}
				if timeouts {
					srv.ReadHeaderTimeout, srv.IdleTimeout, srv.WriteTimeout = time.Second, time.Minute, time.Minute
				}
				done := make(chan struct{})
				go func() { newConn(srv, c).serve(); close(done) }()
				c.step() // warm up: pools, maps, the date
				allocs := testing.AllocsPerRun(200, c.step)
				c.Close()
				<-done
				assert.Zero(t, allocs, "allocations per request")
			})
		}
	}
}

package wrk

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// startServer serves, on a loopback port:
//
//	/         200 "Hello World\n"
//	/missing  every third request 404
//	/flaky    every 50th request answers after 1.5s (a timeout under
//	          --timeout 1s), every 70th gets a garbage reply (a read error)
//	/slow     every request answers after 1.2s
//	/hang     every request answers after 3s with an empty body
//
// It returns the base URL ("http://127.0.0.1:PORT").
func startServer(t testing.TB) string {
	t.Helper()
	var n atomic.Int64
	hello := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", "gophr")
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("Hello World\n"))
	}
	sleep := func(r *http.Request, d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-r.Context().Done():
			return false
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/", hello)
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 == 0 {
			http.NotFound(w, r)
			return
		}
		hello(w, r)
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%50 == 0:
			if !sleep(r, 1500*time.Millisecond) {
				return
			}
		case i%70 == 0:
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Write([]byte("garbage\r\n\r\n"))
				c.Close()
			}
			return
		}
		hello(w, r)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		if sleep(r, 1200*time.Millisecond) {
			hello(w, r)
		}
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		sleep(r, 3*time.Second)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("test server: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

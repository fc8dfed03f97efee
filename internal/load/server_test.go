package load

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

const okResponse = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: text/plain\r\n\r\nHello World\n"

// startServer serves ln with handle, one goroutine per connection, until
// the test ends; then it closes the listener and every connection.
func startServer(t testing.TB, ln net.Listener, handle func(net.Conn)) {
	t.Helper()
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
}

func listenTCP(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

func tcpTarget(t testing.TB, ln net.Listener) Target {
	t.Helper()
	tg, err := ParseTarget("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// readRequest reads one request's head into buf without allocating.
func readRequest(c net.Conn, buf []byte) error {
	n := 0
	for {
		m, err := c.Read(buf[n:])
		n += m
		if bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// answerEach answers every request on a connection with resp, after
// before() returns (nil: at once).
func answerEach(resp string, before func()) func(net.Conn) {
	r := []byte(resp)
	return func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if readRequest(c, buf) != nil {
				return
			}
			if before != nil {
				before()
			}
			if _, err := c.Write(r); err != nil {
				return
			}
		}
	}
}

func waitFor(t testing.TB, d time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in time")
}

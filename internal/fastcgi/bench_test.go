package fastcgi

// Benchmarks of this responder against net/http/fcgi serving the hello
// handler. Each op is one request; allocation counts include the client,
// which allocates nothing once warm.
//
//	go test -run '^$' -bench . -benchmem ./internal/fastcgi

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/fcgi"
	"strconv"
	"sync"
	"testing"
	"time"
)

// memConn is an in-memory connection that feeds requests to a responder
// and counts the END_REQUEST records it answers with. In lockstep mode
// it hands out the next request only once the previous one has been
// answered, like a kept-alive nginx upstream connection; otherwise it
// pipelines all of them.
type memConn struct {
	reqs     [][]byte // cycled through
	total    int      // requests to deliver
	lockstep bool

	mu        sync.Mutex
	cond      sync.Cond
	delivered int // requests fully handed to Read
	off       int // bytes of the current request already read
	completed int // END_REQUEST records seen
	closed    bool
	scan      recordScanner
}

func newMemConn(reqs [][]byte, total int, lockstep bool) *memConn {
	c := &memConn{reqs: reqs, total: total, lockstep: lockstep}
	c.cond.L = &c.mu
	return c
}

func (c *memConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.lockstep && !c.closed && c.off == 0 && c.completed < c.delivered {
		c.cond.Wait()
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	if c.delivered == c.total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && c.delivered < c.total {
		req := c.reqs[c.delivered%len(c.reqs)]
		k := copy(p[n:], req[c.off:])
		n += k
		c.off += k
		if c.off == len(req) {
			c.off = 0
			c.delivered++
			if c.lockstep {
				break
			}
		}
	}
	return n, nil
}

func (c *memConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	if ends := c.scan.feed(p); ends > 0 {
		c.completed += ends
		c.cond.Broadcast()
	}
	return len(p), nil
}

// wait blocks until n requests were answered.
func (c *memConn) wait(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.completed < n && !c.closed {
		c.cond.Wait()
	}
}

func (c *memConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.cond.Broadcast()
	return nil
}

func (c *memConn) LocalAddr() net.Addr                { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr               { return memAddr{} }
func (c *memConn) SetDeadline(t time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// recordScanner counts END_REQUEST records in a byte stream fed in
// arbitrary pieces.
type recordScanner struct {
	hdr  [headerLen]byte
	nhdr int
	skip int // content and padding left of the current record
}

func (s *recordScanner) feed(p []byte) (ends int) {
	for len(p) > 0 {
		if s.skip > 0 {
			k := min(s.skip, len(p))
			s.skip -= k
			p = p[k:]
			continue
		}
		k := copy(s.hdr[s.nhdr:], p)
		s.nhdr += k
		p = p[k:]
		if s.nhdr == headerLen {
			s.nhdr = 0
			if s.hdr[1] == typeEndRequest {
				ends++
			}
			s.skip = (int(s.hdr[4])<<8 | int(s.hdr[5])) + int(s.hdr[6])
		}
	}
	return ends
}

// oneConnListener hands out one connection, then blocks until closed.
type oneConnListener struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
}

func newOneConnListener(c net.Conn) *oneConnListener {
	return &oneConnListener{c: c, done: make(chan struct{})}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	var c net.Conn
	l.once.Do(func() { c = l.c })
	if c != nil {
		return c, nil
	}
	<-l.done
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	select {
	case <-l.done:
	default:
		close(l.done)
	}
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return memAddr{} }

// responder starts one of the two implementations on l.
type responder struct {
	name  string
	serve func(l net.Listener, h http.Handler) (stop func())
}

var responders = []responder{
	{"fast", func(l net.Listener, h http.Handler) func() {
		s := &Server{Handler: h}
		done := make(chan struct{})
		go func() { s.Serve(l); close(done) }()
		return func() { s.Close(); <-done }
	}},
	// With hello's deadlines: their cost on the hot path.
	{"fast-timeouts", func(l net.Listener, h http.Handler) func() {
		s := &Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 5 * time.Minute, WriteTimeout: 5 * time.Minute}
		done := make(chan struct{})
		go func() { s.Serve(l); close(done) }()
		return func() { s.Close(); <-done }
	}},
	{"stdlib", func(l net.Listener, h http.Handler) func() {
		done := make(chan struct{})
		go func() { fcgi.Serve(l, h); close(done) }()
		return func() { l.Close(); <-done }
	}},
}

// helloRequests are nginx's requests for the hello page; with vary set
// they differ in REMOTE_PORT, as requests from different clients do.
func helloRequests(vary bool) [][]byte {
	if !vary {
		return [][]byte{encodeRequest(1, true, nginxParams("GET", "/"), nil)}
	}
	var reqs [][]byte
	for i := range 64 {
		p := with(nginxParams("GET", "/"), pair{"REMOTE_PORT", strconv.Itoa(40000 + i)})
		reqs = append(reqs, encodeRequest(1, true, p, nil))
	}
	return reqs
}

// BenchmarkInMemory isolates the responders from the kernel: requests
// come from memory and responses go nowhere.
func BenchmarkInMemory(b *testing.B) {
	modes := []struct {
		name           string
		lockstep, vary bool
	}{
		{"lockstep", true, false},
		{"lockstep-varying", true, true},
		{"pipelined", false, false},
	}
	for _, m := range modes {
		for _, r := range responders {
			b.Run(m.name+"/"+r.name, func(b *testing.B) {
				c := newMemConn(helloRequests(m.vary), b.N, m.lockstep)
				b.ReportAllocs()
				b.ResetTimer()
				stop := r.serve(newOneConnListener(c), http.HandlerFunc(helloHandler))
				c.wait(b.N)
				b.StopTimer()
				c.Close()
				stop()
				reportRate(b)
			})
		}
	}
}

// BenchmarkLoopback serves over real sockets: one kept-alive connection,
// one request at a time, as an nginx upstream connection carries them.
func BenchmarkLoopback(b *testing.B) {
	for _, network := range []string{"tcp", "unix"} {
		for _, r := range responders {
			b.Run(network+"/"+r.name, func(b *testing.B) {
				var l net.Listener
				if network == "tcp" {
					l = listenTCP(b)
				} else {
					l = listenUnix(b)
				}
				stop := r.serve(l, http.HandlerFunc(helloHandler))
				defer stop()
				c, err := net.Dial(network, l.Addr().String())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				runClient(b, c, b.N)
				reportRate(b)
			})
		}
	}
}

// BenchmarkLoopbackParallel drives one connection per client goroutine.
func BenchmarkLoopbackParallel(b *testing.B) {
	for _, r := range responders {
		b.Run("tcp/"+r.name, func(b *testing.B) {
			l := listenTCP(b)
			stop := r.serve(l, http.HandlerFunc(helloHandler))
			defer stop()
			b.SetParallelism(4)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				c, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				req := helloRequests(false)[0]
				rr := newRecordReader(c)
				var res result
				for pb.Next() {
					if _, err := c.Write(req); err != nil {
						b.Error(err)
						return
					}
					if err := rr.readResult(1, &res); err != nil {
						b.Error(err)
						return
					}
				}
			})
			reportRate(b)
		})
	}
}

// runClient sends n hello requests over c one at a time, checking each
// answer's size against the first.
func runClient(b *testing.B, c net.Conn, n int) {
	req := helloRequests(false)[0]
	rr := newRecordReader(c)
	var res result
	if _, err := c.Write(req); err != nil {
		b.Fatal(err)
	}
	if err := rr.readResult(1, &res); err != nil {
		b.Fatal(err)
	}
	want := len(res.stdout)
	b.ReportAllocs()
	b.ResetTimer()
	for range n {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if err := rr.readResult(1, &res); err != nil {
			b.Fatal(err)
		}
		if len(res.stdout) != want {
			b.Fatal(errors.New("response size changed"))
		}
	}
	b.StopTimer()
}

func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "req/s")
	}
}

package hello

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/topobench/topobench/internal/fcgiclient"
)

// The listener benchmarks run Serve in-process and one client on one
// kept-alive connection, sequentially, so ns/op is a round trip over
// loopback and allocs/op counts the server's allocations per request (the
// client loops reuse their buffers and allocate nothing).

func BenchmarkHTTP(b *testing.B)        { benchHTTP(b, targets[0]) }
func BenchmarkHTTPUnix(b *testing.B)    { benchHTTP(b, targets[1]) }
func BenchmarkFCGITCP(b *testing.B)     { benchFCGI(b, targets[2]) }
func BenchmarkFCGIUnix(b *testing.B)    { benchFCGI(b, targets[3]) }
func BenchmarkFastCGITCP(b *testing.B)  { benchFCGI(b, targets[4]) }
func BenchmarkFastCGIUnix(b *testing.B) { benchFCGI(b, targets[5]) }

func benchHTTP(b *testing.B, tg target) {
	l := listen(b, tg)
	start(b, []Listener{l}, Options{})
	c := dial(b, l)
	req := []byte("GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: bench\r\n\r\n")
	// The response has a fixed length: the 141-byte header block and the
	// 12-byte body.
	resp := make([]byte, HeaderBlockLen+len(Body))
	br := bufio.NewReader(c)
	roundTrip := func() error {
		if _, err := c.Write(req); err != nil {
			return err
		}
		_, err := io.ReadFull(br, resp)
		return err
	}
	if err := roundTrip(); err != nil {
		b.Fatal(err)
	}
	if got := string(resp[len(resp)-len(Body):]); got != Body {
		b.Fatalf("body %q, want %q (response %q)", got, Body, resp)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := roundTrip(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchFCGI(b *testing.B, tg target) {
	l := listen(b, tg)
	start(b, []Listener{l}, Options{})
	benchFCGIAt(b, l)
}

func benchFCGIAt(b *testing.B, l Listener) {
	c := dial(b, l)
	req := (&fcgiclient.Request{}).Encode(nil)
	rd := fcgiclient.NewReader(bufio.NewReader(c))
	roundTrip := func() (stdout int, err error) {
		if _, err := c.Write(req); err != nil {
			return 0, err
		}
		for {
			rec, err := rd.Next()
			if err != nil {
				return stdout, err
			}
			switch rec.Type {
			case fcgiclient.TypeStdout:
				stdout += len(rec.Content)
			case fcgiclient.TypeEndRequest:
				return stdout, nil
			default:
				return stdout, fmt.Errorf("unexpected %s record", fcgiclient.TypeName(rec.Type))
			}
		}
	}
	n, err := roundTrip()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if m, err := roundTrip(); err != nil || m != n {
			b.Fatalf("round trip: %d stdout bytes (want %d), %v", m, n, err)
		}
	}
}

// BenchmarkHandler is the handler alone, without any server.
func BenchmarkHandler(b *testing.B) {
	h := NewHandler()
	w := &bareWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// BenchmarkHandlerWork is the handler asked for 200 µs of work: ns/op is
// the work's wall time, 200 µs of CPU plus whatever else ran on the core.
func BenchmarkHandlerWork(b *testing.B) {
	h := NewHandler()
	cal, err := Calibrate()
	if err != nil {
		b.Fatal(err)
	}
	h.Calibration = cal
	w := &bareWriter{h: http.Header{}}
	r := httptest.NewRequest("GET", "/?work=200us", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

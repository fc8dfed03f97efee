// Package fastcgi is a FastCGI responder written for throughput. It serves an
// http.Handler like net/http/fcgi and produces the same response bytes.
package fastcgi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"sync"
	"time"
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = fmt.Errorf("fastcgi: server closed: %w", net.ErrClosed)

// Server serves FastCGI connections.
type Server struct {
	Handler http.Handler

	mu       sync.Mutex
	ls       map[net.Listener]struct{}
	conns    map[net.Conn]bool // value: idle
	shutdown bool
	wg       sync.WaitGroup
}

// Serve accepts connections on l and serves them until Shutdown.
func (s *Server) Serve(l net.Listener) error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if s.ls == nil {
		s.ls = map[net.Listener]struct{}{}
		s.conns = map[net.Conn]bool{}
	}
	s.ls[l] = struct{}{}
	s.mu.Unlock()
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			down := s.shutdown
			delete(s.ls, l)
			s.mu.Unlock()
			if down {
				return ErrServerClosed
			}
			return err
		}
		s.mu.Lock()
		if s.shutdown {
			s.mu.Unlock()
			c.Close()
			return ErrServerClosed
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// Shutdown stops accepting, closes idle connections and waits for in-flight
// requests until ctx is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.shutdown = true
	for l := range s.ls {
		l.Close()
	}
	for c, idle := range s.conns {
		if idle {
			c.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) setIdle(c net.Conn, idle bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = idle
	return !s.shutdown
}

func (s *Server) serveConn(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
		s.wg.Done()
	}()
	br := bufio.NewReader(c)
	var hdr [8]byte
	buf := make([]byte, 65535+255)
	var params, body []byte
	var id uint16
	var keep, active bool
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		if !active && !s.setIdle(c, false) {
			return
		}
		if hdr[0] != 1 {
			return
		}
		rid := binary.BigEndian.Uint16(hdr[2:])
		n := int(binary.BigEndian.Uint16(hdr[4:])) + int(hdr[6])
		if _, err := io.ReadFull(br, buf[:n]); err != nil {
			return
		}
		content := buf[:binary.BigEndian.Uint16(hdr[4:])]
		switch hdr[1] {
		case 1:
			if len(content) != 8 {
				return
			}
			if active {
				c.Write(endRequest(rid, 1))
				continue
			}
			if binary.BigEndian.Uint16(content) != 1 {
				c.Write(endRequest(rid, 3))
				continue
			}
			id, keep, active = rid, content[2]&1 != 0, true
			params, body = params[:0], body[:0]
		case 4:
			if active && rid == id {
				params = append(params, content...)
			}
		case 5:
			if !active || rid != id {
				continue
			}
			if len(content) > 0 {
				body = append(body, content...)
				continue
			}
			active = false
			s.serveRequest(c, id, params, body)
			if !keep {
				return
			}
			if !s.setIdle(c, true) {
				return
			}
		case 9:
			c.Write(record(10, 0, []byte("\x0f\x01FCGI_MPXS_CONNS0")))
		case 2:
			if active && rid == id {
				active = false
				c.Write(endRequest(rid, 0))
				if !keep {
					return
				}
			}
		case 3, 6, 7, 8, 10, 11:
		default:
			c.Write(record(11, 0, []byte{hdr[1], 0, 0, 0, 0, 0, 0, 0}))
		}
	}
}

func record(typ byte, id uint16, content []byte) []byte {
	pad := -len(content) & 7
	b := make([]byte, 8, 8+len(content)+pad)
	b[0], b[1] = 1, typ
	binary.BigEndian.PutUint16(b[2:], id)
	binary.BigEndian.PutUint16(b[4:], uint16(len(content)))
	b[6] = byte(pad)
	b = append(b, content...)
	return append(b, make([]byte, pad)...)
}

func endRequest(id uint16, status byte) []byte {
	return record(3, id, []byte{0, 0, 0, 0, status, 0, 0, 0})
}

func parsePairs(b []byte) map[string]string {
	m := map[string]string{}
	size := func() (int, bool) {
		if len(b) == 0 {
			return 0, false
		}
		if b[0]&0x80 == 0 {
			n := int(b[0])
			b = b[1:]
			return n, true
		}
		if len(b) < 4 {
			return 0, false
		}
		n := int(binary.BigEndian.Uint32(b) &^ (1 << 31))
		b = b[4:]
		return n, true
	}
	for len(b) > 0 {
		kl, ok := size()
		if !ok {
			break
		}
		vl, ok := size()
		if !ok || kl+vl > len(b) {
			break
		}
		m[string(b[:kl])] = string(b[kl : kl+vl])
		b = b[kl+vl:]
	}
	return m
}

type response struct {
	h        http.Header
	code     int
	wrote    bool
	cgiWrote bool
	out      bytes.Buffer
}

func (r *response) Header() http.Header { return r.h }
func (r *response) WriteHeader(code int) {
	if r.wrote {
		return
	}
	r.wrote, r.code = true, code
	if code == http.StatusNotModified {
		r.h.Del("Content-Type")
		r.h.Del("Content-Length")
		r.h.Del("Transfer-Encoding")
	}
	if r.h.Get("Date") == "" {
		r.h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	}
}
func (r *response) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if !r.cgiWrote {
		r.cgiWrote = true
		fmt.Fprintf(&r.out, "Status: %d %s\r\n", r.code, http.StatusText(r.code))
		if _, ok := r.h["Content-Type"]; r.code != http.StatusNotModified && !ok {
			r.h.Set("Content-Type", http.DetectContentType(p))
		}
		r.h.Write(&r.out)
		r.out.WriteString("\r\n")
	}
	return r.out.Write(p)
}

func (s *Server) serveRequest(c net.Conn, id uint16, params, body []byte) {
	rw := &response{h: http.Header{}}
	req, err := cgi.RequestFromMap(parsePairs(params))
	var stderr []byte
	if err != nil {
		rw.WriteHeader(http.StatusInternalServerError)
		stderr = record(7, id, []byte(err.Error()))
	} else {
		req.Body = io.NopCloser(bytes.NewReader(body))
		h := s.Handler
		if h == nil {
			h = http.DefaultServeMux
		}
		h.ServeHTTP(rw, req)
	}
	rw.Write(nil)
	var out []byte
	p := rw.out.Bytes()
	for len(p) > 0 {
		n := min(len(p), 65535)
		out = append(out, record(6, id, p[:n])...)
		p = p[n:]
	}
	out = append(out, stderr...)
	out = append(out, record(6, id, nil)...)
	out = append(out, endRequest(id, 0)...)
	c.Write(out)
}

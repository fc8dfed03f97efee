package parity

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"time"

	"github.com/topobench/topobench/internal/topology"
)

// WaitPath is the request CheckWait sends: cmd/hello's handler wait, short
// enough to cost nothing, long enough to take the waiting path.
const WaitPath = "/?wait=1ms"

// WorkPath and WaitWorkPath are requests for cmd/hello's handler work
// (?work=, CPU time spent before answering), alone and with a wait, for
// CheckPath: a sweep that asks for work checks parity on its path.
const (
	WorkPath     = "/?work=200us"
	WaitWorkPath = "/?wait=1ms&work=200us"
)

// CheckWait requests WaitPath from r's topology and checks that the answer
// is r's GET again: status, header names, the header block's size and the
// body. The open-loop scenarios ask for a wait on every request, so parity
// must hold on that path too.
// The request is made as via says, like FetchVia's.
func CheckWait(ctx context.Context, via Via, l topology.Layout, r Result, timeout time.Duration) error {
	return CheckPath(ctx, via, l, r, WaitPath, timeout)
}

// CheckPath is CheckWait for any request path, such as WorkPath or a
// "/?wait=100ms&work=500us" a sweep asks for.
func CheckPath(ctx context.Context, via Via, l topology.Layout, r Result, path string, timeout time.Duration) error {
	name := r.Topology.Name
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	a, err := via.addr(l, r.Topology)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if via.Dial == nil {
		var d net.Dialer
		via.Dial = d.DialContext
	}
	// Over TLS for the topologies that speak it, as GET / was.
	dial, err := via.dialer(r.Topology)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	got, err := getPath(ctx, dial, a, path, timeout)
	if err != nil {
		return fmt.Errorf("%s (%s): GET %s: %w", name, a, path, err)
	}
	want := r.GET
	switch {
	case got.Status != want.Status:
		return fmt.Errorf("%s: GET %s status %q, want %q as without the query", name, path, got.StatusLine, want.StatusLine)
	case len(got.Header) != len(want.Header):
		return fmt.Errorf("%s: GET %s header block is %d bytes, %d without the query: %q", name, path, len(got.Header), len(want.Header), got.Header)
	case !slices.Equal(got.HeaderNames, want.HeaderNames):
		return fmt.Errorf("%s: GET %s header names differ from those of GET /: %s", name, path, nameDiff(got.HeaderNames, want.HeaderNames))
	case got.BodySHA256 != want.BodySHA256:
		return fmt.Errorf("%s: GET %s body %q differs from %q without the query", name, path, clip(got.Body), clip(want.Body))
	}
	return nil
}

func getPath(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), addr, path string, timeout time.Duration) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return Response{}, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := Request{Path: path}
	if err := req.check(); err != nil {
		return Response{}, err
	}
	if _, err := io.WriteString(c, req.line("GET", addr)); err != nil {
		return Response{}, fmt.Errorf("sending: %w", err)
	}
	return ReadResponse(bufio.NewReader(c), false)
}

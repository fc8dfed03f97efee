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

// CheckWait requests WaitPath from r's topology and checks that the answer
// is r's GET again: status, header names, the header block's size and the
// body. The open-loop scenarios ask for a wait on every request, so parity
// must hold on that path too.
// The request is made as via says, like FetchVia's.
func CheckWait(ctx context.Context, via Via, l topology.Layout, r Result, timeout time.Duration) error {
	name := r.Topology.Name
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	a, err := addr(l, r.Topology, via.Allow)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	got, err := getPath(ctx, via, a, WaitPath, timeout)
	if err != nil {
		return fmt.Errorf("%s (%s): GET %s: %w", name, a, WaitPath, err)
	}
	want := r.GET
	switch {
	case got.Status != want.Status:
		return fmt.Errorf("%s: GET %s status %q, want %q as without the wait", name, WaitPath, got.StatusLine, want.StatusLine)
	case len(got.Header) != len(want.Header):
		return fmt.Errorf("%s: GET %s header block is %d bytes, %d without the wait: %q", name, WaitPath, len(got.Header), len(want.Header), got.Header)
	case !slices.Equal(got.HeaderNames, want.HeaderNames):
		return fmt.Errorf("%s: GET %s header names differ from those without the wait: %s", name, WaitPath, nameDiff(got.HeaderNames, want.HeaderNames))
	case got.BodySHA256 != want.BodySHA256:
		return fmt.Errorf("%s: GET %s body %q differs from %q without the wait", name, WaitPath, clip(got.Body), clip(want.Body))
	}
	return nil
}

func getPath(ctx context.Context, via Via, addr, path string, timeout time.Duration) (Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dial := via.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return Response{}, err
	}
	defer c.Close()
	deadline, _ := ctx.Deadline()
	_ = c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		return Response{}, fmt.Errorf("sending: %w", err)
	}
	return ReadResponse(bufio.NewReader(c), false)
}

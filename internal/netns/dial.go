package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// DialFunc dials like net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Dialer returns a DialFunc whose sockets are created inside the named
// network namespace, so the harness can probe and fetch from servers (or
// as the client) without a child process; empty name dials from the
// harness's own namespace. A socket stays in the namespace it was created
// in, so only its creation needs the switch.
func Dialer(name string) DialFunc {
	if name == "" {
		var d net.Dialer
		return d.DialContext
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return DialContext(ctx, name, network, addr)
	}
}

// DialContext dials addr from inside the named namespace: on a goroutine
// of its own, locked to its thread, it enters the namespace, dials and
// returns to the harness's namespace. If it cannot return, the thread stays
// locked, so the runtime discards it when the goroutine ends and no other
// goroutine ever runs in the wrong namespace.
func DialContext(ctx context.Context, name, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := dialIn(ctx, name, network, addr)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

func dialIn(ctx context.Context, name, network, addr string) (conn net.Conn, err error) {
	target, err := os.Open(filepath.Join(runDir, name))
	if err != nil {
		return nil, fmt.Errorf("dialing %s in network namespace %s: %w", addr, name, err)
	}
	defer target.Close()
	runtime.LockOSThread()
	// The thread's own namespace, to return to.
	home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("dialing %s in network namespace %s: %w", addr, name, err)
	}
	defer home.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("entering network namespace %s: %w", name, err)
	}
	defer func() {
		if rerr := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); rerr != nil {
			// Leave the thread locked: it dies with this goroutine.
			if conn != nil {
				conn.Close()
			}
			conn, err = nil, fmt.Errorf("leaving network namespace %s: %w", name, rerr)
			return
		}
		runtime.UnlockOSThread()
	}()
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

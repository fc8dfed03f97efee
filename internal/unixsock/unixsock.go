// Package unixsock opens unix-socket listeners without ever destroying
// something it should not: a socket file with a live server behind it is
// left alone, a file that is not a socket is refused, and only a stale socket
// (one nobody listens on any more, left by a crash) is removed and replaced.
package unixsock

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"time"
)

// MaxPath is the longest socket path the kernel accepts (sun_path is 108
// bytes including the terminating NUL).
const MaxPath = 107

// probeTimeout bounds the dial that tells a live socket from a stale one.
const probeTimeout = time.Second

// Listen listens on the unix socket path and sets its permission bits to
// mode (nginx workers usually run as another user, so they need write
// permission). Closing the listener removes the socket file.
func Listen(path string, mode fs.FileMode) (*net.UnixListener, error) {
	if path == "" {
		return nil, errors.New("empty unix socket path")
	}
	if len(path) > MaxPath {
		return nil, fmt.Errorf("unix socket %s: path is %d bytes, longer than the %d the kernel accepts", path, len(path), MaxPath)
	}
	if mode&^fs.ModePerm != 0 {
		return nil, fmt.Errorf("unix socket %s: mode %#o has bits beyond permissions", path, uint32(mode))
	}
	if err := clearStale(path); err != nil {
		return nil, err
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("unix socket %s: %w", path, err)
	}
	if err := os.Chmod(path, mode); err != nil {
		l.Close()
		return nil, fmt.Errorf("unix socket %s: setting mode %#o: %w", path, uint32(mode), err)
	}
	return l, nil
}

// clearStale makes path free for a new socket: nothing there is fine; a
// socket nobody accepts on is removed; anything else is an error.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unix socket %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("unix socket %s: file exists and is not a socket (%s); refusing to replace it", path, describe(fi.Mode()))
	}
	live, err := Live(path)
	if err != nil {
		return fmt.Errorf("unix socket %s: cannot tell whether a server is listening: %w", path, err)
	}
	if live {
		return fmt.Errorf("unix socket %s: another server is listening on it", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("unix socket %s: removing stale socket: %w", path, err)
	}
	return nil
}

// Live reports whether a server accepts connections on the socket at path.
// A refused connection means a stale socket (false, nil); errors other than
// that are returned, since they do not prove the socket is unused.
func Live(path string) (bool, error) {
	c, err := net.DialTimeout("unix", path, probeTimeout)
	if err == nil {
		c.Close()
		return true, nil
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT) {
		return false, nil
	}
	// A listener with a full backlog makes a unix dial fail with EAGAIN:
	// somebody is there.
	if errors.Is(err, syscall.EAGAIN) {
		return true, nil
	}
	return false, err
}

// Remove deletes path if it is still a socket, for cleanup after a listener
// closed (which normally removes it already). A missing file is not an
// error; a file that is not a socket is left alone.
func Remove(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("unix socket %s: now a %s, not removing it", path, describe(fi.Mode()))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func describe(m fs.FileMode) string {
	switch m.Type() {
	case 0:
		return "regular file"
	case fs.ModeDir:
		return "directory"
	case fs.ModeSymlink:
		return "symbolic link"
	case fs.ModeNamedPipe:
		return "named pipe"
	case fs.ModeDevice, fs.ModeDevice | fs.ModeCharDevice:
		return "device"
	}
	return m.Type().String()
}

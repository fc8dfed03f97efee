// Package testenv holds helpers for integration tests: short temporary
// directories that fit unix socket paths, free loopback addresses, a burst
// of connects at a full listen queue (ListenStorm), the connections a
// server holds open (Established), a TLS ClientHello to stall a handshake
// with (ClientHello), and the
// cmd/hello and examples/jsonapi binaries built once per test binary.
//
// A test binary that calls HelloBin or JSONAPIBin removes the builds from
// TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		testenv.Cleanup()
//		os.Exit(code)
//	}
package testenv

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
)

// ShortDir returns a new directory removed when t ends. Its paths are short
// enough for unix sockets (sun_path holds 107 bytes), which t.TempDir()
// paths, named after the test, can exceed.
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tb")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// FreeAddr returns a 127.0.0.1 address with a port the kernel reported
// free. Another process may take it before the caller listens; tests that
// can pass a listener in should do that instead.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().String()
}

// hello is the cmd/hello build shared by the tests of one test binary.
var hello struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// HelloBin returns the path of cmd/hello, built on first use. It skips the
// test under -short.
func HelloBin(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs cmd/hello")
	}
	hello.once.Do(func() {
		if hello.dir, hello.err = os.MkdirTemp("", "hellobin"); hello.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		hello.bin, hello.err = hellorun.Build(ctx, hello.dir)
	})
	require.NoError(t, hello.err, "building cmd/hello")
	return hello.bin
}

// built is a Go program built once for the tests of one test binary.
type built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

var jsonapi, topobench built

// JSONAPIBin returns the path of examples/jsonapi (the "your own service"
// example), built on first use. It skips the test under -short.
func JSONAPIBin(t testing.TB) string {
	return jsonapi.build(t, "github.com/topobench/topobench/examples/jsonapi", "jsonapi")
}

// TopobenchBin returns the path of cmd/topobench, built on first use: the
// binary whose load command is the built-in engine's session. It skips
// the test under -short.
func TopobenchBin(t testing.TB) string {
	return topobench.build(t, "github.com/topobench/topobench/cmd/topobench", "topobench")
}

func (b *built) build(t testing.TB, pkg, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("builds and runs %s", name)
	}
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", name+"bin"); b.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		b.bin = filepath.Join(b.dir, name)
		out, err := exec.CommandContext(ctx, "go", "build", "-o", b.bin, pkg).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
		}
	})
	require.NoError(t, b.err, "building %s", name)
	return b.bin
}

// Cleanup removes the binaries HelloBin, JSONAPIBin and TopobenchBin built, if any. Call
// it from TestMain after m.Run.
func Cleanup() {
	for _, dir := range []string{hello.dir, jsonapi.dir, topobench.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
}

// Buffer collects output written by another goroutine (a server under test,
// exec's copy goroutine) while the test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NeedNetns skips a test that creates network namespaces where it cannot:
// under -short, without root, or without the ip command (iproute2).
func NeedNetns(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("creates network namespaces; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("creating network namespaces needs root; run the tests as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("creating network namespaces needs the ip command (iproute2)")
	}
}

// ListenStorm opens a loopback listener with the given backlog that never
// accepts, sends n connects at it at once (each given up after 300 ms)
// and closes it: the kernel counts the connects the full queue turned
// away (TcpExtListenOverflows). It returns the listener's address.
func ListenStorm(backlog, n int) (string, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return "", err
	}
	if err := syscall.Listen(fd, backlog); err != nil {
		return "", err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return "", err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	var d net.Dialer
	for range n {
		wg.Go(func() {
			if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
				defer c.Close()
				<-ctx.Done()
			}
		})
	}
	wg.Wait()
	return addr, nil
}

// Established counts the established TCP connections whose local end is
// addr (an IPv4 host:port, the server's side), from /proc/net/tcp: a
// connection the server closed leaves the count even while its FIN waits
// behind data the peer does not read, so a test sees the close without
// reading.
func Established(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil || !ap.Addr().Is4() {
		return 0, fmt.Errorf("established connections: %q is not an IPv4 address and port", addr)
	}
	ip := ap.Addr().As4()
	// /proc/net/tcp prints the address as the host-order uint32 of its
	// network-order bytes, and the port in network order.
	local := fmt.Sprintf("%08X:%04X", binary.LittleEndian.Uint32(ip[:]), ap.Port())
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, fmt.Errorf("established connections: %w", err)
	}
	n := 0
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) > 3 && f[1] == local && f[3] == "01" { // TCP_ESTABLISHED
			n++
		}
	}
	return n, nil
}

// ClientHello returns the first record a Go TLS client sends (offering h2
// and http/1.1), for tests of peers that never finish a handshake.
func ClientHello() ([]byte, error) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}).Handshake()
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	head := make([]byte, 5)
	if _, err := io.ReadFull(b, head); err != nil {
		return nil, fmt.Errorf("reading a ClientHello: %w", err)
	}
	rest := make([]byte, int(binary.BigEndian.Uint16(head[3:])))
	if _, err := io.ReadFull(b, rest); err != nil {
		return nil, fmt.Errorf("reading a ClientHello: %w", err)
	}
	return append(head, rest...), nil
}

// RSSMB is the resident set of pid and of its children, in MB, from
// /proc: nginx's master and workers, or one process.
func RSSMB(t testing.TB, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	kb := 0
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: state, ppid.
		_, rest, _ := strings.Cut(string(stat), ") ")
		if f := strings.Fields(rest); p != pid && (len(f) < 2 || f[1] != strconv.Itoa(pid)) {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
				require.NoError(t, err)
				kb += n
			}
		}
	}
	return kb >> 10
}

// WaitNoneEstablished waits until no connection whose local end is addr
// is established (Established) and returns how long that took; it fails
// the test after limit.
func WaitNoneEstablished(t testing.TB, addr string, limit time.Duration) time.Duration {
	t.Helper()
	began := time.Now()
	for {
		n, err := Established(addr)
		require.NoError(t, err)
		took := time.Since(began)
		if n == 0 {
			return took
		}
		require.Less(t, took, limit, "%d connections still open", n)
		time.Sleep(10 * time.Millisecond)
	}
}

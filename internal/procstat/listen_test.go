package procstat

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The testdata was captured while a process listened on 127.0.0.1:47001
// (inode 1740333), [::1]:47002 (1740334), [::]:47003 (1740335) and the
// unix socket /tmp/topobench-listen-capture.sock (1740336).

func parseTestdata[T any](t *testing.T, name string, parse func(f *os.File) (T, error)) T {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	v, err := parse(f)
	require.NoError(t, err)
	return v
}

func TestParseNetTCP(t *testing.T) {
	v4 := parseTestdata(t, "net-tcp.txt", func(f *os.File) ([]Socket, error) { return ParseNetTCP(f) })
	v6 := parseTestdata(t, "net-tcp6.txt", func(f *os.File) ([]Socket, error) { return ParseNetTCP(f) })
	require.Len(t, v4, 7)
	require.Len(t, v6, 2)
	for _, tt := range []struct {
		ss     []Socket
		inode  uint64
		addr   string
		listen bool
	}{
		{v4, 1740333, "127.0.0.1:47001", true},
		{v4, 53, "0.0.0.0:2024", true},
		{v4, 0, "127.0.0.1:32840", false}, // TIME_WAIT: no inode
		{v6, 1740334, "[::1]:47002", true},
		{v6, 1740335, "[::]:47003", true},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			want := Socket{Inode: tt.inode, Listening: tt.listen, Addr: netip.MustParseAddrPort(tt.addr)}
			assert.Contains(t, tt.ss, want)
		})
	}
}

func TestParseNetUnix(t *testing.T) {
	ss := parseTestdata(t, "net-unix.txt", func(f *os.File) ([]Socket, error) { return ParseNetUnix(f) })
	assert.Contains(t, ss, Socket{Inode: 1740336, Listening: true, Path: "/tmp/topobench-listen-capture.sock"})
	assert.Contains(t, ss, Socket{Inode: 1693531}, "an unbound, connected socket")
	for _, s := range ss {
		if s.Path == "/var/run/docker.sock" {
			assert.True(t, s.Listening)
		}
	}
}

func TestParseNetBad(t *testing.T) {
	for _, tt := range []struct{ name, in string }{
		{"short", "header\n 0: 0100007F:1F90 00000000:0000 0A\n"},
		{"address", "header\n 0: 0100007:1F90 00000000:0000 0A a b c d e 12\n"},
		{"inode", "header\n 0: 0100007F:1F90 00000000:0000 0A a b c d e x\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseNetTCP(strings.NewReader(tt.in))
			assert.Error(t, err)
		})
	}
	_, err := ParseNetUnix(strings.NewReader("header\n0: 2 0 zz 0001 01 5 /x\n"))
	assert.Error(t, err)
}

func TestSocketAccepts(t *testing.T) {
	at := netip.MustParseAddrPort("127.0.0.1:8080")
	for _, tt := range []struct {
		bound  string
		listen bool
		want   bool
	}{
		{"127.0.0.1:8080", true, true},
		{"0.0.0.0:8080", true, true},
		{"[::]:8080", true, true},
		{"[::ffff:127.0.0.1]:8080", true, true},
		{"127.0.0.2:8080", true, false},
		{"127.0.0.1:8081", true, false},
		{"127.0.0.1:8080", false, false},
	} {
		t.Run(tt.bound, func(t *testing.T) {
			s := Socket{Listening: tt.listen, Addr: netip.MustParseAddrPort(tt.bound)}
			assert.Equal(t, tt.want, s.Accepts(at))
		})
	}
}

// TestListenerPid finds this test process as the owner of listeners it
// opens itself.
func TestListenerPid(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer tcp.Close()
	sock := filepath.Join(t.TempDir(), "l.sock")
	unix, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer unix.Close()
	fsys := FS("/proc")
	for _, tt := range []struct{ network, addr string }{
		{"tcp", tcp.Addr().String()},
		{"unix", sock},
	} {
		t.Run(tt.network, func(t *testing.T) {
			pid, err := fsys.ListenerPid(tt.network, tt.addr)
			require.NoError(t, err)
			assert.Equal(t, os.Getpid(), pid)
		})
	}
	t.Run("nobody", func(t *testing.T) {
		free, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := free.Addr().String()
		free.Close()
		_, err = fsys.ListenerPid("tcp", addr)
		assert.ErrorIs(t, err, ErrNoListener)
		_, err = fsys.ListenerPid("unix", sock+".none")
		assert.ErrorIs(t, err, ErrNoListener)
	})
}

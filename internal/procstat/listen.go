package procstat

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// The sockets a process listens on, for a server the harness did not
// start: /proc/net/tcp, tcp6 and unix list the sockets of the reader's
// network namespace with their inodes, and /proc/PID/fd/N links to
// "socket:[INODE]" for each socket a process holds.

// Socket is one line of /proc/net/tcp, tcp6 or unix.
type Socket struct {
	// Inode identifies the socket in the processes' fd links.
	Inode uint64
	// Listening is TCP's LISTEN state, or a unix socket that accepts.
	Listening bool
	// Addr is a TCP socket's local address; Path a unix socket's bound
	// path ("@name" for an abstract one, empty when unbound).
	Addr netip.AddrPort
	Path string
}

// tcpListen is the LISTEN state in /proc/net/tcp's st column.
const tcpListen = "0A"

// unixAcceptCon is __SO_ACCEPTCON in /proc/net/unix's Flags column: the
// socket listens.
const unixAcceptCon = 0x10000

// ParseNetTCP parses /proc/net/tcp or /proc/net/tcp6.
func ParseNetTCP(r io.Reader) ([]Socket, error) {
	var out []Socket
	sc := bufio.NewScanner(r)
	for n := 0; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if n == 0 || len(f) == 0 {
			continue // the header
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("line %d: %d fields, want at least 10", n+1, len(f))
		}
		addr, err := parseHexAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: local address %q: %w", n+1, f[1], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: inode %q: %w", n+1, f[9], err)
		}
		out = append(out, Socket{Inode: inode, Listening: f[3] == tcpListen, Addr: addr})
	}
	return out, sc.Err()
}

// parseHexAddr parses "0100007F:1F90": the address as the kernel holds it
// in memory, 32-bit words in host (little-endian) order, and the port.
func parseHexAddr(s string) (netip.AddrPort, error) {
	ip, port, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	b, err := hex.DecodeString(ip)
	if err != nil || (len(b) != 4 && len(b) != 16) {
		return netip.AddrPort{}, errors.New("want 8 or 32 hex digits")
	}
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:]))
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a, uint16(p)), nil
}

// ParseNetUnix parses /proc/net/unix.
func ParseNetUnix(r io.Reader) ([]Socket, error) {
	var out []Socket
	sc := bufio.NewScanner(r)
	for n := 0; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if n == 0 || len(f) == 0 {
			continue
		}
		if len(f) < 7 {
			return nil, fmt.Errorf("line %d: %d fields, want at least 7", n+1, len(f))
		}
		flags, err := strconv.ParseUint(f[3], 16, 32)
		if err != nil {
			return nil, fmt.Errorf("line %d: flags %q: %w", n+1, f[3], err)
		}
		inode, err := strconv.ParseUint(f[6], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: inode %q: %w", n+1, f[6], err)
		}
		s := Socket{Inode: inode, Listening: flags&unixAcceptCon != 0}
		if len(f) > 7 {
			s.Path = strings.Join(f[7:], " ")
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// Accepts reports whether a listening TCP socket takes connections to
// addr: bound to it, or to the unspecified address of its family (an
// IPv6 one takes IPv4 too, unless IPV6_V6ONLY, which /proc does not say)
// at its port.
func (s Socket) Accepts(addr netip.AddrPort) bool {
	if !s.Listening || s.Addr.Port() != addr.Port() {
		return false
	}
	a, want := s.Addr.Addr().Unmap(), addr.Addr().Unmap()
	return a == want || a.IsUnspecified()
}

// ListenersTCP are the inodes of the sockets listening where addr is
// reached, from net/tcp and net/tcp6.
func (fsys FS) ListenersTCP(addr netip.AddrPort) ([]uint64, error) {
	var inodes []uint64
	for _, name := range []string{"tcp", "tcp6"} {
		ss, err := parseFile(filepath.Join(string(fsys), "net", name), ParseNetTCP)
		if errors.Is(err, os.ErrNotExist) && name == "tcp6" {
			continue // no IPv6 in this kernel
		}
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			if s.Accepts(addr) {
				inodes = append(inodes, s.Inode)
			}
		}
	}
	return inodes, nil
}

// ListenersUnix are the inodes of the unix sockets listening at path.
func (fsys FS) ListenersUnix(path string) ([]uint64, error) {
	ss, err := parseFile(filepath.Join(string(fsys), "net", "unix"), ParseNetUnix)
	if err != nil {
		return nil, err
	}
	var inodes []uint64
	for _, s := range ss {
		if s.Listening && s.Path == path {
			inodes = append(inodes, s.Inode)
		}
	}
	return inodes, nil
}

// Holders are the processes whose open files include a socket of
// inodes, sorted; processes whose fds cannot be read (another user's,
// without privilege) are left out.
func (fsys FS) Holders(inodes []uint64) ([]int, error) {
	want := map[string]bool{}
	for _, n := range inodes {
		want["socket:["+strconv.FormatUint(n, 10)+"]"] = true
	}
	entries, err := os.ReadDir(string(fsys))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join(string(fsys), e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // gone, or not ours to read
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && want[link] {
				pids = append(pids, pid)
				break
			}
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// ErrNoListener is ListenerPid's error when no process it can see holds
// the socket: another user's without privilege, or one in another pid
// namespace (a container's).
var ErrNoListener = errors.New("no process found that holds the listening socket")

// ListenerPid is the process that listens at addr on network ("tcp",
// IP:PORT; "unix", a socket path): of the processes holding the socket,
// the first whose parent does not hold it too, so that its Tree holds
// the server's workers. pid 1 counts only when it alone holds it: init
// holding a socket others serve is socket activation, not the server.
func (fsys FS) ListenerPid(network, addr string) (int, error) {
	var inodes []uint64
	var err error
	switch network {
	case "tcp":
		ap, perr := netip.ParseAddrPort(addr)
		if perr != nil {
			return 0, perr
		}
		inodes, err = fsys.ListenersTCP(ap)
	case "unix":
		inodes, err = fsys.ListenersUnix(addr)
	default:
		return 0, fmt.Errorf("network %q, want tcp or unix", network)
	}
	if err != nil {
		return 0, err
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("%s: no socket listens there in this network namespace: %w", addr, ErrNoListener)
	}
	pids, err := fsys.Holders(inodes)
	if err != nil {
		return 0, err
	}
	if len(pids) > 1 {
		pids = slices.DeleteFunc(pids, func(p int) bool { return p == 1 })
	}
	for _, pid := range pids {
		p, err := parseFile(filepath.Join(string(fsys), strconv.Itoa(pid), "stat"), ParseProcess)
		if err == nil && !slices.Contains(pids, p.PPid) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("%s: %w", addr, ErrNoListener)
}

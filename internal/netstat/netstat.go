// Package netstat reads the TCP counters of a network namespace from
// /proc, so a run can say whether its servers' listen queues overflowed
// and how many connections were opened in their namespace:
//
//	/proc/PID/net/netstat  TcpExt: ListenOverflows, ListenDrops, SyncookiesSent
//	/proc/PID/net/snmp     Tcp: ActiveOpens, PassiveOpens
//
// /proc/PID/net shows the namespace of process PID, so reading it through
// a server's pid reads the servers' namespace without entering it. Both
// files are pairs of lines, a header of names and a line of values, each
// starting with the same "Prefix:". A caller takes a Counters before and
// after a run and subtracts. The parser is a pure function over io.Reader;
// FS reads a live /proc.
package netstat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Counters are the counters a run needs, as the kernel counts them since
// the namespace was created.
type Counters struct {
	// ListenOverflows counts connections refused, or SYNs dropped, because
	// a listener's accept queue was full; ListenDrops counts every drop at
	// a listener, those included.
	ListenOverflows, ListenDrops int64
	// SyncookiesSent counts SYN cookies sent: a SYN queue that overflowed.
	SyncookiesSent int64
	// ActiveOpens counts TCP connections opened (connect), PassiveOpens
	// those accepted.
	ActiveOpens, PassiveOpens int64
}

// Sub returns c - d.
func (c Counters) Sub(d Counters) Counters {
	return Counters{
		ListenOverflows: c.ListenOverflows - d.ListenOverflows,
		ListenDrops:     c.ListenDrops - d.ListenDrops,
		SyncookiesSent:  c.SyncookiesSent - d.SyncookiesSent,
		ActiveOpens:     c.ActiveOpens - d.ActiveOpens,
		PassiveOpens:    c.PassiveOpens - d.PassiveOpens,
	}
}

// Parse reads a /proc/net/netstat or /proc/net/snmp file into its
// counters, named prefix and field together: "TcpExtListenOverflows",
// "TcpActiveOpens" (as nstat names them).
func Parse(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var names []string
	var prefix string
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		p, rest, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: no \"Prefix:\" in %q", line, text)
		}
		fields := strings.Fields(rest)
		if names == nil {
			names, prefix = fields, p
			continue
		}
		if p != prefix {
			return nil, fmt.Errorf("line %d: values for %q after the names of %q", line, p, prefix)
		}
		if len(fields) != len(names) {
			return nil, fmt.Errorf("line %d: %d values for %d names of %s", line, len(fields), len(names), p)
		}
		for i, f := range fields {
			// Tcp's MaxConn is -1; every counter a run reads is unsigned.
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				u, uerr := strconv.ParseUint(f, 10, 64)
				if uerr != nil {
					return nil, fmt.Errorf("line %d: %s%s: %q is not a number", line, p, names[i], f)
				}
				v = int64(u)
			}
			out[p+names[i]] = v
		}
		names = nil
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if names != nil {
		return nil, fmt.Errorf("line %d: names of %s without values", line, prefix)
	}
	return out, nil
}

// ErrMissing is the error when a counter a run needs is absent.
var ErrMissing = errors.New("counter missing")

// FromMaps picks the run's counters from parsed netstat and snmp files.
func FromMaps(ms ...map[string]int64) (Counters, error) {
	var c Counters
	for _, f := range []struct {
		name string
		into *int64
	}{
		{"TcpExtListenOverflows", &c.ListenOverflows},
		{"TcpExtListenDrops", &c.ListenDrops},
		{"TcpExtSyncookiesSent", &c.SyncookiesSent},
		{"TcpActiveOpens", &c.ActiveOpens},
		{"TcpPassiveOpens", &c.PassiveOpens},
	} {
		found := false
		for _, m := range ms {
			if v, ok := m[f.name]; ok {
				*f.into, found = v, true
				break
			}
		}
		if !found {
			return Counters{}, fmt.Errorf("%w: %s", ErrMissing, f.name)
		}
	}
	return c, nil
}

// FS is a mounted proc file system ("/proc").
type FS string

// Read reads the counters of the network namespace process pid is in.
func (fsys FS) Read(pid int) (Counters, error) {
	var ms []map[string]int64
	for _, name := range []string{"netstat", "snmp"} {
		path := filepath.Join(string(fsys), strconv.Itoa(pid), "net", name)
		f, err := os.Open(path)
		if err != nil {
			return Counters{}, fmt.Errorf("reading TCP counters: %w", err)
		}
		m, err := Parse(f)
		f.Close()
		if err != nil {
			return Counters{}, fmt.Errorf("reading TCP counters: %s: %w", path, err)
		}
		ms = append(ms, m)
	}
	c, err := FromMaps(ms...)
	if err != nil {
		return Counters{}, fmt.Errorf("reading TCP counters of pid %d: %w", pid, err)
	}
	return c, nil
}

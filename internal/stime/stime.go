// Package stime runs OpenSSL's s_time handshake client and reads what it
// prints: a handshake client nobody here wrote, to check the built-in
// engine's handshakes a second under -close against.
//
// Each s_time process (openssl s_time -new -www PATH) opens one
// connection at a time for a duration: a full TLS handshake, one
// HTTP/1.0 GET read to its close, then the next connection; Procs
// processes run side by side for concurrency. s_time does not verify the
// server's certificate (no -verify is given): the load goes only to
// loopback or the run's own address (internal/loopurl), so trusting the
// answer buys nothing, and the handshake's cost is the server's either
// way. It sees no status codes either: an answer is its bytes.
//
// s_time stops at its first failed connection (with an error and no
// summary), so a run either succeeds whole or is an error. Its "real
// seconds" are whole seconds of time(), so Run times the connections
// itself, from the marks s_time prints as each ends (Result.Timed). Run
// starts the processes as children (pinned, in a network namespace or a
// control group, as internal/proc wraps them), bounds them in time,
// stops them gracefully when the context ends and returns the parsed
// Result with the raw output; Parse is the pure reader of that output.
package stime

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loopurl"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/tlscert"
)

// MaxProcs bounds Procs: each process is one connection in flight, and a
// process an OS process, so more than this many is a typo, not a load.
const MaxProcs = 64

// Options are one s_time run.
type Options struct {
	// Bin is the openssl binary; "openssl" from PATH when empty.
	Bin string
	// URL is https://HOST:PORT/PATH: s_time connects to HOST:PORT and
	// GETs PATH (with its query). It must point at loopback (or Allow).
	URL string
	// Procs are the s_time processes run side by side, each a connection
	// at a time: the concurrency.
	Procs int
	// Duration (-time) in whole seconds.
	Duration time.Duration
	// TLS, when set, pins the version and cipher suite the servers were
	// configured with (-tls1_3 -ciphersuites, or -tls1_2 -cipher); nil
	// leaves OpenSSL's defaults.
	TLS *tlscert.Settings
	// CPUs pins the processes to a CPU list; NetNS runs them in that
	// network namespace; Cgroup is the control group they run in.
	CPUs, NetNS string
	Cgroup      proc.Joiner
	// Allow is the one address besides loopback the load may go to.
	Allow netip.Addr
	// Overrun is how long s_time may run past Duration before Run stops
	// it as hung (DefaultOverrun if zero).
	Overrun time.Duration
}

// DefaultOverrun bounds s_time's start and stop around Duration when
// Options.Overrun is zero.
const DefaultOverrun = 15 * time.Second

// ErrHung is a run stopped because it overran its bound.
var ErrHung = errors.New("s_time overran its bound")

// Validate reports the first bad option, naming s_time's flag.
func (o Options) Validate() error {
	switch {
	case o.Procs < 1 || o.Procs > MaxProcs:
		return fmt.Errorf("s_time processes: %d, want 1 to %d", o.Procs, MaxProcs)
	case o.Duration < time.Second || o.Duration%time.Second != 0:
		return fmt.Errorf("s_time -time (duration) %s: need whole seconds, at least 1s", o.Duration)
	case o.Overrun < 0:
		return fmt.Errorf("s_time overrun %s: need zero (for %s) or more", o.Overrun, DefaultOverrun)
	}
	if _, _, err := o.target(); err != nil {
		return err
	}
	if o.TLS != nil {
		if err := o.TLS.Check(); err != nil {
			return fmt.Errorf("s_time: %w", err)
		}
	}
	if o.CPUs != "" {
		if _, err := cpuset.Parse(o.CPUs); err != nil {
			return fmt.Errorf("s_time: %w", err)
		}
	}
	return nil
}

// target is the URL's HOST:PORT for -connect and its path for -www.
func (o Options) target() (hostport, path string, err error) {
	u, err := loopurl.Check("s_time", o.URL, o.Allow)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "https" {
		return "", "", fmt.Errorf("s_time URL %q: s_time speaks TLS only; want https://", o.URL)
	}
	if u.Port() == "" {
		u.Host += ":443"
	}
	// RequestURI escapes what the request line cannot hold.
	return u.Host, u.RequestURI(), nil
}

// Args are one s_time process's arguments, without the binary.
func (o Options) Args() []string {
	hostport, path, _ := o.target()
	args := []string{"s_time", "-connect", hostport, "-new", "-time", strconv.Itoa(int(o.Duration / time.Second)), "-www", path}
	if s := o.TLS; s != nil {
		if s.Version == tlscert.TLS12 {
			args = append(args, "-tls1_2", "-cipher", s.OpenSSLCipher())
		} else {
			args = append(args, "-tls1_3", "-ciphersuites", s.OpenSSLCipher())
		}
	}
	return args
}

// Command is the command line of each of the Procs processes Run
// starts: the wrappers when asked for (proc.Command), the binary, Args.
func (o Options) Command() []string { return proc.Command(o.bin(), o.Args(), o.procOptions(nil)) }

func (o Options) bin() string {
	if o.Bin == "" {
		return "openssl"
	}
	return o.Bin
}

func (o Options) procOptions(stdout io.Writer) proc.Options {
	return proc.Options{Stop: syscall.SIGTERM, Grace: 2 * time.Second, CPUs: o.CPUs, NetNS: o.NetNS, Cgroup: o.Cgroup, Stdout: stdout}
}

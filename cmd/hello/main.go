// Command hello is the system under test of topobench: one Go process that
// answers every GET and HEAD with "Hello World\n" and the same five headers
// (Server: gophr, Connection: keep-alive, Content-Type: text/plain,
// Content-Length: 12, Date), a 141-byte header block as a client sees it,
// over plain HTTP, FastCGI on TCP and FastCGI on a unix socket at once.
// Other methods get 405 with "Allow: GET, HEAD".
//
// Two query parameters slow the handler down without changing the bytes:
// wait=DURATION sleeps (at most 60s) and work=DURATION spends that much CPU
// time on deterministic work (at most 100ms); a bad value gets a plain 400
// (see internal/hello). At start-up hello calibrates the work against its
// thread's CPU clock (about 50 ms) and reports the rate in its ready line.
//
// Usage:
//
//	hello [flags]
//
// With no flags it serves the addresses of the 2013 reference run:
//
//	-http 127.0.0.1:8080       net/http on TCP
//	-fcgi-tcp 127.0.0.1:9001   net/http/fcgi on TCP
//	-fcgi-unix /tmp/go.sock    net/http/fcgi on a unix socket
//
// and, off unless given an address:
//
//	-http-unix PATH            net/http on a unix socket
//	-fcgi-fast-tcp ADDR        internal/fastcgi on TCP
//	-fcgi-fast-unix PATH       internal/fastcgi on a unix socket
//	-https ADDR                net/http over Go's crypto/tls on TCP:
//	                           HTTP/1.1, and HTTP/2 by ALPN
//
// An HTTPS listener needs a certificate and its key (internal/tlscert
// generates a run's) and takes the TLS settings both servers of a
// comparison share (see internal/tlscert):
//
//	-tls-cert FILE             the certificate, PEM
//	-tls-key FILE              its private key, PEM
//	-tls-key-type TYPE         p256 (default) or rsa2048; must be the key's
//	-tls-version V             1.3 (default) or 1.2, and only that version
//	-tls-resume                session resumption by tickets (default off)
//
// The one cipher suite follows from the version and key type; the TLS
// handshake must end within -read-header-timeout of the accept.
//
// An empty value turns a listener off ("-fcgi-unix="); at least one must
// stay. Other flags:
//
//	-gomaxprocs N              GOMAXPROCS (0: the runtime's default); a
//	                           value above the CPUs available draws a warning
//	-socket-mode MODE          permissions of the unix sockets, octal
//	                           (default 0666: nginx workers run as another user)
//	-grace DURATION            how long in-flight requests may take to finish
//	                           on SIGINT or SIGTERM (default 5s)
//	-read-header-timeout D     limit for reading an HTTP request header, and a
//	                           FastCGI request's head (BEGIN_REQUEST until it
//	                           can be served), so half-sent requests end (10s)
//	-idle-timeout D            close kept-alive connections idle this long
//	                           (5m, like nginx's keepalive_timeout 300), and
//	                           a peer that stops sending a request body for
//	                           this long, on every listener
//	-write-timeout D           close a connection whose peer takes no byte of
//	                           a response for this long, on every listener
//	                           (30s)
//
// Both FastCGI servers refuse BEGIN_REQUEST with the management request id
// 0 by closing the connection, and bound in bytes what one connection can
// make them hold: the PARAMS of a request (64 KiB; over it the request is
// answered 431) and the requests outstanding at once (net/http/fcgi's
// wrapper 8, internal/fastcgi 1), so neither a peer that never reads nor
// one that never ends its requests can grow the process.
//
// On standard error it writes one line per listener (protocol, address,
// GOMAXPROCS), then a line starting "hello: ready" once every listener is
// being served; nothing per request. The ready line is
//
//	hello: ready: N listeners, GOMAXPROCS P, GOVERSION, pid PID, work R units/us
//
// where R is the calibration: units of work (one SHA-256 of 32 bytes each)
// per microsecond of CPU time (internal/hellorun.ParseReady reads it). Every line it writes, server errors
// and multi-line ones included, starts with "hello: ". On SIGINT or SIGTERM it stops accepting,
// closes at once the connections with no complete request (idle, or a
// request half sent) and those blocked writing to a peer that does not
// read (for 250 ms), lets requests being answered finish within the grace
// period, removes the unix socket files it created and exits 0 with
//
//	hello: stopped; cut N connections (request not fully arrived, or peer not reading)
//
// A request still being answered when the grace ends is closed and makes
// the exit status 1.
//
// Unix socket paths are handled with care: a stale socket file (nobody
// listening) is replaced, but a socket with a live server behind it, or a
// path that is not a socket, is an error and is left untouched. Any error
// (address in use, bad flag) is one line on standard error and a non-zero
// exit status: 2 for usage errors, 1 otherwise.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/unixsock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// After the first signal, a second one kills at once.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(prefixWriter{os.Stderr}, err)
		}
		os.Exit(exitCode(err))
	}
}

// prefixWriter starts every line written through it with "hello: ". Each
// Write must hold whole lines, as log.Logger and fmt.Fprintln give; errors
// joined by Serve and handler panic traces span several.
type prefixWriter struct{ w io.Writer }

func (p prefixWriter) Write(b []byte) (int, error) {
	const prefix = "hello: "
	out := make([]byte, 0, len(b)+len(prefix)*(1+bytes.Count(b, []byte("\n"))))
	for line := range bytes.Lines(b) {
		out = append(append(out, prefix...), line...)
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// usageError marks errors in the command line (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func exitCode(err error) int {
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// octalMode is a flag.Value for permission bits written in octal.
type octalMode fs.FileMode

func (m *octalMode) String() string { return fmt.Sprintf("%#o", uint32(*m)) }

func (m *octalMode) Set(s string) error {
	v, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return errors.New("not an octal number")
	}
	if v > 0o777 {
		return errors.New("more than permission bits (max 0777)")
	}
	*m = octalMode(v)
	return nil
}

// spec is one listener the flags ask for.
type spec struct {
	flag    string // flag name, for messages
	kind    hello.Kind
	network string // tcp or unix
	addr    string
}

type config struct {
	specs             []spec
	gomaxprocs        int
	socketMode        fs.FileMode
	grace             time.Duration
	readHeaderTimeout time.Duration
	idleTimeout       time.Duration
	writeTimeout      time.Duration
	tls               tlsFlags
}

// tlsFlags are the flags of the HTTPS listener.
type tlsFlags struct {
	cert, key string
	settings  tlscert.Settings
}

func (f *tlsFlags) register(flags *flag.FlagSet) {
	flags.StringVar(&f.cert, "tls-cert", "", "TLS certificate `file` (PEM) of the -https listener")
	flags.StringVar(&f.key, "tls-key", "", "TLS private key `file` (PEM) of the -https listener")
	flags.Var(&f.settings.Key, "tls-key-type", "type of the TLS key: p256 or rsa2048")
	flags.Var(&f.settings.Version, "tls-version", "the one TLS version served: 1.3 or 1.2")
	flags.BoolVar(&f.settings.Resume, "tls-resume", false, "TLS session resumption (tickets)")
}

// config loads the certificate and key into the listener's TLS config.
func (f *tlsFlags) config() (*tls.Config, error) {
	cfg, err := tlscert.ServerConfig(f.cert, f.key, f.settings)
	if err != nil {
		return nil, fmt.Errorf("-https: %w", err)
	}
	return cfg, nil
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	flags := flag.NewFlagSet("hello", flag.ContinueOnError)
	flags.SetOutput(io.Discard) // errors come back as one line; usage only on -h
	httpAddr := flags.String("http", "127.0.0.1:8080", "net/http on TCP `address` (empty: off)")
	fcgiTCP := flags.String("fcgi-tcp", "127.0.0.1:9001", "net/http/fcgi on TCP `address` (empty: off)")
	fcgiUnix := flags.String("fcgi-unix", "/tmp/go.sock", "net/http/fcgi on unix socket `path` (empty: off)")
	httpUnix := flags.String("http-unix", "", "net/http on unix socket `path` (empty: off)")
	fastTCP := flags.String("fcgi-fast-tcp", "", "internal/fastcgi on TCP `address` (empty: off)")
	fastUnix := flags.String("fcgi-fast-unix", "", "internal/fastcgi on unix socket `path` (empty: off)")
	gomaxprocs := flags.Int("gomaxprocs", 0, "GOMAXPROCS (0: runtime default)")
	mode := octalMode(0o666)
	flags.Var(&mode, "socket-mode", "permissions of the unix sockets, in octal")
	grace := flags.Duration("grace", hello.DefaultGrace, "time in-flight requests get to finish at shutdown")
	rht := flags.Duration("read-header-timeout", hello.DefaultReadHeaderTimeout, "limit for reading an HTTP request header or a FastCGI request's head")
	idle := flags.Duration("idle-timeout", hello.DefaultIdleTimeout, "close kept-alive connections idle this long, and peers that stop sending a request body for this long")
	write := flags.Duration("write-timeout", hello.DefaultWriteTimeout, "close connections whose peer takes no byte of a response for this long")
	httpsAddr := flags.String("https", "", "net/http over TLS on TCP `address`, HTTP/1.1 and HTTP/2 (empty: off)")
	var tf tlsFlags
	tf.register(flags)

	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "usage: hello [flags]")
			flags.SetOutput(stderr)
			flags.PrintDefaults()
			return config{}, err
		}
		return config{}, usageError{err}
	}
	if flags.NArg() > 0 {
		return config{}, usagef("unexpected argument %q", flags.Arg(0))
	}
	c := config{
		gomaxprocs:        *gomaxprocs,
		socketMode:        fs.FileMode(mode),
		grace:             *grace,
		readHeaderTimeout: *rht,
		idleTimeout:       *idle,
		writeTimeout:      *write,
		tls:               tf,
	}
	if c.gomaxprocs < 0 {
		return config{}, usagef("-gomaxprocs: must be 0 or more, got %d", c.gomaxprocs)
	}
	if err := c.checkDurations(); err != nil {
		return config{}, err
	}
	all := []spec{
		{"http", hello.HTTP, "tcp", *httpAddr},
		{"fcgi-tcp", hello.FCGI, "tcp", *fcgiTCP},
		{"fcgi-unix", hello.FCGI, "unix", *fcgiUnix},
		{"http-unix", hello.HTTP, "unix", *httpUnix},
		{"fcgi-fast-tcp", hello.FastCGI, "tcp", *fastTCP},
		{"fcgi-fast-unix", hello.FastCGI, "unix", *fastUnix},
		{"https", hello.HTTPS, "tcp", *httpsAddr},
	}
	if *httpsAddr != "" && (tf.cert == "" || tf.key == "") {
		return config{}, usagef("-https: needs -tls-cert and -tls-key")
	}
	for _, s := range all {
		if s.addr == "" {
			continue
		}
		if s.network == "tcp" {
			if _, port, err := net.SplitHostPort(s.addr); err != nil || port == "" {
				return config{}, usagef("-%s: %q is not a host:port address", s.flag, s.addr)
			}
		}
		c.specs = append(c.specs, s)
	}
	if len(c.specs) == 0 {
		return config{}, usagef("every listener is off; give at least one of -http, -fcgi-tcp, -fcgi-unix, -http-unix, -fcgi-fast-tcp, -fcgi-fast-unix, -https")
	}
	return c, nil
}

func (c config) checkDurations() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"grace", c.grace}, {"read-header-timeout", c.readHeaderTimeout}, {"idle-timeout", c.idleTimeout}, {"write-timeout", c.writeTimeout}} {
		if d.v <= 0 {
			return usagef("-%s: must be positive, got %v", d.name, d.v)
		}
	}
	return nil
}

// open opens one listener, turning the usual failures into one line that
// names the flag and the address.
func open(s spec, mode fs.FileMode) (net.Listener, error) {
	if s.network == "unix" {
		l, err := unixsock.Listen(s.addr, mode)
		if err != nil {
			return nil, fmt.Errorf("-%s: %w", s.flag, err)
		}
		return l, nil
	}
	l, err := net.Listen("tcp", s.addr)
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return nil, fmt.Errorf("-%s: address %s already in use", s.flag, s.addr)
	case err != nil:
		return nil, fmt.Errorf("-%s: listening on %s: %w", s.flag, s.addr, err)
	}
	return l, nil
}

// openAll opens the listeners cfg asks for, loading the TLS certificate
// first, and names each on stderr. On error it closes those it opened.
func openAll(cfg config, procs int, stderr io.Writer) (ls []hello.Listener, socks []string, err error) {
	var tlsCfg *tls.Config
	for _, s := range cfg.specs {
		if s.kind == hello.HTTPS {
			if tlsCfg, err = cfg.tls.config(); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, s := range cfg.specs {
		l, err := open(s, cfg.socketMode)
		if err != nil {
			for _, l := range ls {
				l.Close() // removes the sockets made so far
			}
			return nil, nil, err
		}
		hl := hello.Listener{Kind: s.kind, Listener: l}
		extra := ""
		if s.kind == hello.HTTPS {
			hl.TLS = tlsCfg
			extra = fmt.Sprintf(", %v, %s", cfg.tls.settings, cfg.tls.settings.GoCipher())
		}
		ls = append(ls, hl)
		if s.network == "unix" {
			socks = append(socks, s.addr)
		}
		fmt.Fprintf(stderr, "hello: %s on %s %s (-%s, GOMAXPROCS %d%s)\n", s.kind, s.network, l.Addr(), s.flag, procs, extra)
	}
	return ls, socks, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	if cfg.gomaxprocs > 0 {
		prev := runtime.GOMAXPROCS(cfg.gomaxprocs)
		defer runtime.GOMAXPROCS(prev) // matters only to in-process tests
	}
	procs := runtime.GOMAXPROCS(0)
	if cpus := runtime.NumCPU(); procs > cpus {
		fmt.Fprintf(stderr, "hello: warning: GOMAXPROCS %d exceeds the %d CPUs available; expect scheduling overhead and latency spikes\n", procs, cpus)
	}

	cal, err := hello.Calibrate()
	if err != nil {
		return err
	}
	handler := hello.NewHandler()
	handler.Calibration = cal

	ls, socks, err := openAll(cfg, procs, stderr)
	if err != nil {
		return err
	}

	cut := 0
	announce := context.AfterFunc(ctx, func() {
		fmt.Fprintf(stderr, "hello: shutting down (grace %v)\n", cfg.grace)
	})
	err = hello.Serve(ctx, ls, hello.Options{
		Handler:           handler,
		Grace:             cfg.grace,
		ReadHeaderTimeout: cfg.readHeaderTimeout,
		IdleTimeout:       cfg.idleTimeout,
		WriteTimeout:      cfg.writeTimeout,
		ErrorLog:          log.New(prefixWriter{stderr}, "", 0),
		Stopped:           func(n int) { cut = n },
		Ready: func() {
			fmt.Fprintf(stderr, "hello: ready: %d listeners, GOMAXPROCS %d, %s, pid %d, work %s\n", len(ls), procs, runtime.Version(), os.Getpid(), cal)
		},
	})
	announce()
	for _, p := range socks {
		if rerr := unixsock.Remove(p); rerr != nil {
			err = errors.Join(err, fmt.Errorf("removing socket: %w", rerr))
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "hello: stopped; cut %d connections (request not fully arrived, or peer not reading)\n", cut)
	return nil
}

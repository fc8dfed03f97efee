package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/topobench/topobench/internal/load"
)

// runLoad drives one URL with the built-in engine: the flags, or a JSON
// spec (-spec FILE) that flags given beside it override, make one
// load.Spec, which runs.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, src, err := parseLoad(args, stderr)
	if err != nil {
		return err
	}
	if src.session {
		if err := load.ServeSession(ctx, os.Stdin, stdout, s.Procs); err != nil {
			return fmt.Errorf("load -session: %w", err)
		}
		return nil
	}
	_, err = s.Run(ctx, stdout, stderr)
	return src.explain(err)
}

// parseLoad translates the command line into a spec.
func parseLoad(args []string, stderr io.Writer) (load.Spec, specSource, error) {
	s := load.DefaultSpec()
	var src specSource
	fs := loadFlags(&s, &src)
	url, err := loadArg(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stderr, "usage: topobench load [flags] URL\n       topobench load -spec FILE [flags] [URL]\n       topobench load -session [-procs N]\n\n"+
			"URL is http://127.0.0.1:PORT/path (loopback; -allow names one more address) or unix:/path/to.sock:/path.\n"+
			"FILE is a JSON spec (go doc ./internal/load Spec), - for stdin; flags given beside it override it.")
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return s, src, err
	}
	if err != nil {
		return s, src, err
	}
	if src.path != "" {
		// Read the spec, then parse again over it: the flags given win.
		if s, err = readSpec(src.path); err != nil {
			return s, src, err
		}
		fs = loadFlags(&s, &src)
		if url, err = loadArg(fs, args); err != nil {
			return s, src, err
		}
	}
	src.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { src.set[f.Name] = true })
	if src.session {
		// The pools' specs come over standard input; only -procs applies.
		for name := range src.set {
			if name != "session" && name != "procs" {
				return s, src, usageError("load: -%s: -session takes only -procs (each pool's spec comes with its open command)", name)
			}
		}
		if url != "" {
			return s, src, usageError("load: -session takes no URL (each pool's spec comes with its open command)")
		}
		if s.Procs < 1 {
			return s, src, usageError("load: -procs %d: want at least 1", s.Procs)
		}
		return s, src, nil
	}
	switch {
	case url != "":
		src.set["target"] = true
		s.Target, err = load.ParseURL(url) // where it leads: s.Run checks
		if err != nil {
			return s, src, usageError("load: URL %v", err)
		}
	case src.path == "":
		return s, src, usageError("load: no URL given")
	}
	return s, src, nil
}

// loadFlags binds the load command's flags to the fields of s, which give
// their defaults. A bad value is one line (the error); usage is for -h.
func loadFlags(s *load.Spec, src *specSource) *flag.FlagSet {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVar(&src.session, "session", src.session, "run a load session: commands on standard input, one JSON reply a line on standard output (go doc ./internal/load, Sessions); only -procs applies")
	fs.StringVar(&src.path, "spec", "", "run this JSON spec (- for stdin); flags given as well override it")
	fs.IntVar(&s.Connections, "connections", s.Connections, "closed mode: connections, each sending its next request after the previous answer; open mode: connections opened before the schedule starts")
	fs.Float64Var(&s.Rate, "rate", s.Rate, "open mode: target requests per second (0: closed mode)")
	fs.StringVar((*string)(&s.Arrivals), "arrivals", string(s.Arrivals), "open mode: spacing of intended start times, poisson or uniform (default poisson)")
	fs.Int64Var(&s.Requests, "requests", s.Requests, "stop after this many requests (0: no limit)")
	fs.DurationVar(&s.Duration, "duration", s.Duration, "stop sending after this long (default 10s when -requests is not set)")
	fs.IntVar(&s.Threads, "threads", s.Threads, "closed mode: event loops, each on its own OS thread over its share of the connections, as wrk's -t (default 100, at most -connections)")
	fs.BoolVar(&s.Goroutines, "goroutines", s.Goroutines, "closed mode: a goroutine per connection on Go's poller instead of the event loops (open mode always runs so)")
	fs.BoolVar(&s.NoPrime, "no-prime", s.NoPrime, "open the connections without the unmeasured first request each sends otherwise, as wrk does: every first answer falls in the measured time, and the process's CPU time holds no request it does not count")
	fs.IntVar(&s.MaxConnections, "max-connections", s.MaxConnections, "open mode: most connections to open when none is free (default the larger of -connections and 10000)")
	fs.DurationVar(&s.Timeout, "timeout", s.Timeout, "a request without a complete answer after this long is a timeout error, at most 60s (default 2s; with -probe, -within plus -wait)")
	fs.DurationVar(&s.Wait, "wait", s.Wait, "append ?wait=DURATION: cmd/hello holds each answer this long")
	fs.BoolVar(&s.JSON, "json", s.JSON, "print the summary as one JSON object instead of text")
	fs.StringVar(&s.Out, "out", s.Out, "write latency.hgrm, latency.hdr (encoded histogram) and summary.json to this directory")
	fs.BoolVar(&s.Quiet, "quiet", s.Quiet, "no progress line on stderr")
	fs.BoolVar(&s.Report, "report", s.Report, "print the summary and the encoded histogram as marked text lines, for a harness that collects them from a container's log")
	fs.Func("start-at", "connect, then begin the measured run at this wall-clock instant (RFC 3339, e.g. 2026-11-24T19:00:00.5Z), so generators on several machines start together; the summary records how late it really began", func(v string) (err error) {
		s.StartAt, err = time.Parse(time.RFC3339Nano, v)
		return err
	})
	fs.IntVar(&s.Procs, "procs", s.Procs, "GOMAXPROCS for the engine: one P costs the least CPU per request (no spinning threads, no futex hand-offs) and leaves the other cores to the servers")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the Poisson schedule")
	fs.IntVar(&s.Probe, "probe", s.Probe, "concurrency-level probe: open this many connections, send one request on each at once with -wait, and count the answers within -within (served concurrently); bounded by the open-files limit")
	fs.TextVar(&s.Allow, "allow", s.Allow, "a link-local address the load may go to besides loopback: the server end of a veth in network namespaces the caller created (topobench compare -isolate netns)")
	fs.BoolVar(&s.AllowRemote, "allow-remote", s.AllowRemote, "let -allow be a routable address: another machine's server, named on purpose (compare -swarm-allow passes it to the load nodes); without it load stays on loopback and link-local addresses")
	fs.BoolVar(&s.Close, "close", s.Close, `send "Connection: close" with every request, as wrk's -H: a new connection (and with https://, a new TLS handshake) a request`)
	fs.StringVar(&s.TLS.CA, "tls-ca", s.TLS.CA, "https:// target: the PEM file of the certificate the server's must be or chain to (the run's self-signed tls-cert.pem)")
	fs.StringVar(&s.TLS.ServerName, "tls-server-name", s.TLS.ServerName, "https:// target: the name the server's certificate must hold, sent as SNI (default the URL's host)")
	fs.Var(&s.TLS.Version, "tls-version", "https:// target: the one TLS version spoken, 1.3 or 1.2")
	fs.Var(&s.TLS.Key, "tls-key-type", "https:// target: the server's key type, p256 or rsa2048, which picks the TLS 1.2 cipher suite")
	fs.BoolVar(&s.TLS.Resume, "tls-resume", s.TLS.Resume, "https:// target: resume TLS sessions (a client session cache); off, every handshake is a full one")
	fs.DurationVar(&s.Within, "within", s.Within, "with -probe: an answer within this counts as served concurrently (default -wait plus the larger of -wait/2 and 1s)")
	return fs
}

// readSpec reads the spec at path, or standard input for "-".
func readSpec(path string) (load.Spec, error) {
	r := io.Reader(os.Stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return load.Spec{}, usageError("load: -spec: %v", err)
		}
		defer f.Close()
		r = f
	}
	s, err := load.ReadSpec(r)
	if err != nil {
		return s, usageError("load: -spec %s: %v", path, err)
	}
	return s, nil
}

// specSource says where a spec's fields came from, to name the flag or
// the spec file's key in an error.
type specSource struct {
	path    string          // -spec, if given
	session bool            // -session
	set     map[string]bool // flags given on the command line ("target": the URL)
}

// explain turns the error of a spec's run into one line naming the flag
// or key at fault, and its exit status: 2 for bad input,
// load.ExitNoneSucceeded when not one request succeeded, 1 otherwise.
func (src specSource) explain(err error) error {
	var fe *load.FieldError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		if src.path != "" && !src.set[fe.Field] {
			return usageError("load: -spec %s: %v", src.path, err)
		}
		if fe.Field == "target" { // the URL argument
			return usageError("load: URL %v", fe.Err)
		}
		return usageError("load: -%v", err)
	case errors.Is(err, load.ErrNoneSucceeded):
		return &exitError{code: load.ExitNoneSucceeded, err: fmt.Errorf("load: %w", err)}
	}
	return fmt.Errorf("load: %w", err)
}

// loadArg parses the flags and returns the one URL, if any; flags may
// come before or after it.
func loadArg(fs *flag.FlagSet, args []string) (string, error) {
	var url string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", err
			}
			return "", usageError("load: %v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		if url != "" {
			return "", usageError("load: unexpected argument %q", fs.Arg(0))
		}
		url, args = fs.Arg(0), fs.Args()[1:]
	}
	return url, nil
}

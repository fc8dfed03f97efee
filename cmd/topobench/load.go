package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/topobench/topobench/internal/load"
)

// runLoad drives one URL with the built-in engine and prints a summary.
func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("load", stderr)
	conns := fs.Int("connections", 10, "closed mode: connections, each sending its next request after the previous answer; open mode: connections opened before the schedule starts")
	rate := fs.Float64("rate", 0, "open mode: target requests per second (0: closed mode)")
	arrivals := fs.String("arrivals", "poisson", "open mode: spacing of intended start times, poisson or uniform")
	requests := fs.Int64("requests", 0, "stop after this many requests (0: no limit; -duration must then be set)")
	duration := fs.Duration("duration", 0, "stop sending after this long (default 10s when -requests is not set)")
	maxConns := fs.Int("max-connections", 0, "open mode: most connections to open when none is free (default the larger of -connections and 10000)")
	timeout := fs.Duration("timeout", 2*time.Second, "a request without a complete answer after this long is a timeout error (at most 60s)")
	wait := fs.Duration("wait", 0, "append ?wait=DURATION: cmd/hello holds each answer this long")
	jsonOut := fs.Bool("json", false, "print the summary as one JSON object instead of text")
	outDir := fs.String("out", "", "write latency.hgrm, latency.hdr (encoded histogram) and summary.json to this directory")
	quiet := fs.Bool("quiet", false, "no progress line on stderr")
	procs := fs.Int("procs", 1, "GOMAXPROCS for the engine: one P costs the least CPU per request (no spinning threads, no futex hand-offs) and leaves the other cores to the servers")
	seed := fs.Uint64("seed", 1, "seed of the Poisson schedule")
	probe := fs.Int("probe", 0, "concurrency-level probe: open this many connections, send one request on each at once with -wait, and count the answers within -within (served concurrently); bounded by the open-files limit")
	allow := fs.String("allow", "", "a link-local address the load may go to besides loopback: the server end of a veth in network namespaces the caller created (topobench compare -isolate netns)")
	startAt := fs.String("start-at", "", "connect, then begin the measured run at this wall-clock instant (RFC 3339, e.g. 2026-11-24T19:00:00.5Z), so generators on several machines start together; the summary records how late it really began")
	report := fs.Bool("report", false, "print the summary and the encoded histogram as marked text lines (internal/load's report), for a harness that collects them from a container's log")
	within := fs.Duration("within", 0, "with -probe: an answer within this counts as served concurrently (default -wait plus the larger of -wait/2 and 1s)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench load [flags] URL\n\nURL is http://127.0.0.1:PORT/path (loopback only) or unix:/path/to.sock:/path.")
		fs.PrintDefaults()
	}
	url, err := loadArg(fs, args)
	if err != nil {
		return err
	}
	var allowed netip.Addr
	if *allow != "" {
		if allowed, err = netip.ParseAddr(*allow); err != nil {
			return usageError("load: -allow: %v", err)
		}
	}
	target, err := load.ParseTargetAllow(url, allowed)
	if err != nil {
		return usageError("load: %v", err)
	}
	if *wait < 0 || *wait > 60*time.Second {
		return usageError("load: -wait %v: want 0 to 60s", *wait)
	}
	if *wait > 0 {
		target = target.WithQuery("wait", wait.String())
	}
	arr, err := load.ParseArrivals(*arrivals)
	if err != nil {
		return usageError("load: -arrivals: %v", err)
	}
	if *requests < 0 {
		return usageError("load: -requests must not be negative")
	}
	if *duration < 0 {
		return usageError("load: -duration must not be negative")
	}
	if *probe < 0 {
		return usageError("load: -probe must not be negative")
	}
	if *probe > 0 {
		if *wait <= 0 {
			return usageError("load: -probe needs -wait: a probe tells concurrent answers from queued ones by the handler wait")
		}
		if *rate > 0 || *requests > 0 || *duration > 0 {
			return usageError("load: -probe sends -probe requests at once; -rate, -requests and -duration do not apply")
		}
		if limit, err := load.MaxProbe(); err == nil && *probe > limit {
			return usageError("load: -probe %d: more connections than the open-files limit allows here (at most %d; raise ulimit -n)", *probe, limit)
		}
		if *within != 0 && *within < *wait {
			return usageError("load: -within %v is below -wait %v", *within, *wait)
		}
	} else if *within != 0 {
		return usageError("load: -within applies to -probe only")
	}
	if *requests == 0 && *duration == 0 {
		*duration = 10 * time.Second
	}
	if *rate < 0 {
		return usageError("load: -rate must not be negative")
	}
	if *rate == 0 && *conns <= 0 {
		return usageError("load: -connections must be positive in closed mode")
	}
	if *rate > 0 && *conns < 0 {
		return usageError("load: -connections must not be negative")
	}
	if *maxConns < 0 || (*maxConns > 0 && *maxConns < *conns) {
		return usageError("load: -max-connections %d: want at least -connections (%d)", *maxConns, *conns)
	}
	if *timeout <= 0 || *timeout > 60*time.Second {
		return usageError("load: -timeout %v: want more than 0, at most 60s", *timeout)
	}
	if *procs <= 0 {
		return usageError("load: -procs must be positive")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(*procs))
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return fmt.Errorf("load: -out: %w", err)
		}
	}

	var at time.Time
	if *startAt != "" {
		if *probe > 0 {
			return usageError("load: -start-at does not apply to -probe")
		}
		if at, err = time.Parse(time.RFC3339Nano, *startAt); err != nil {
			return usageError("load: -start-at %q: want RFC 3339, e.g. 2026-11-24T19:00:00.5Z", *startAt)
		}
	}
	opt := load.Options{
		Target: target, Connections: *conns, Rate: *rate, Arrivals: arr,
		MaxConnections: *maxConns, Requests: *requests, Duration: *duration,
		Timeout: *timeout, Seed: *seed, StartAt: at,
	}
	if !*quiet {
		opt.Progress = func(p load.Progress) {
			fmt.Fprintf(stderr, "load: %4.0fs  sent %d  answered %d  errors %d  %.0f req/s  %d connections\n",
				p.Elapsed.Seconds(), p.Sent, p.Answered, p.Errors, p.Rate, p.Connections)
		}
	}
	var res *load.Result
	if *probe > 0 {
		to := time.Duration(0)
		if isSet(fs, "timeout") {
			to = *timeout
		}
		res, err = load.Probe(ctx, load.ProbeOptions{Target: target, Requests: *probe, Wait: *wait, Within: *within, Timeout: to})
	} else {
		res, err = load.Run(ctx, opt)
	}
	if err != nil {
		return usageError("load: %v", err)
	}
	s := res.Summary
	if *report {
		if err := load.WriteReport(stdout, res); err != nil {
			return err
		}
	} else if *jsonOut {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(s); err != nil {
			return err
		}
	} else if err := s.WriteText(stdout); err != nil {
		return err
	}
	if *outDir != "" {
		if err := writeLoadFiles(*outDir, res); err != nil {
			return fmt.Errorf("load: -out: %w", err)
		}
	}
	if s.Interrupted {
		return fmt.Errorf("load: interrupted after %.1fs", s.ElapsedSeconds)
	}
	return nil
}

// loadArg parses the flags and returns the one URL; flags may come before
// or after it.
func loadArg(fs *flag.FlagSet, args []string) (string, error) {
	var url string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return "", err
			}
			return "", &exitError{code: 2, err: err}
		}
		if fs.NArg() == 0 {
			break
		}
		if url != "" {
			return "", usageError("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
		}
		url, args = fs.Arg(0), fs.Args()[1:]
	}
	if url == "" {
		return "", usageError("%s: no URL given", fs.Name())
	}
	return url, nil
}

func writeLoadFiles(dir string, res *load.Result) error {
	if err := load.WriteFiles(dir, "latency", res.Histogram); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res.Summary, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.json"), append(b, '\n'), 0o644)
}

// isSet reports whether the flag was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

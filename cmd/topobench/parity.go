package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/topology"
)

// defaultParityTopologies are the 2013 seed and the two nginx-only
// references; the internal/fastcgi and HTTP-over-unix ones are checked when
// named with -topologies.
const defaultParityTopologies = "standalone,nginx-http,nginx-fcgi-tcp,nginx-fcgi-unix,nginx-return,nginx-static"

// runParity builds and starts cmd/hello and a private nginx, requests every
// topology with a GET and a HEAD over one kept-alive connection, prints what
// each returned, and fails unless all return status 200, a 141-byte header
// block, the same header names and the identical body.
func runParity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("parity", stderr)
	list := fs.String("topologies", defaultParityTopologies, `comma-separated topologies to check, or "all" (known: `+strings.Join(topology.Names(), ", ")+")")
	defaultLayout := fs.Bool("default-layout", false, "use the reference ports (HTTP 8080, FastCGI 9001, nginx 8081 and up) instead of free ones")
	helloBin := fs.String("hello", "", "cmd/hello binary to run (default: build ./cmd/hello)")
	nginxBin := fs.String("nginx", "", "nginx binary (default: nginx in PATH, then /usr/sbin/nginx)")
	timeout := fs.Duration("timeout", 5*time.Second, "limit for each topology's requests")
	keep := fs.Bool("keep", false, "keep the run directory (rendered nginx config, error log) for inspection")
	at := fs.String("at", "", "check servers already running on this link-local address with the reference layout (a cluster's server node, as compare -swarm runs it from a load node) instead of starting them; prints the refusals as JSON")
	remote := fs.Bool("allow-remote", false, "with -at: let it be a routable address, another machine's, named on purpose (compare -swarm-allow passes it on), as load -allow-remote")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench parity [-topologies LIST] [-default-layout] [-hello BIN] [-nginx BIN]")
		fmt.Fprintln(stderr, "\nStarts cmd/hello and nginx in a private run directory and checks that\nthe topologies answer with the same bytes (header block 141 bytes): by\ndefault the 2013 seed's four and the two nginx ceilings, with -topologies\nall every one.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *list == "all" {
		*list = strings.Join(topology.Names(), ",")
	}
	ts, err := topology.Parse(*list)
	if err != nil {
		return usageError("parity: -topologies: %v", err)
	}
	for _, t := range ts {
		if t.TLS {
			return usageError("parity: -topologies: %s speaks TLS, which this command does not start yet (go test ./internal/parity checks it)", t.Name)
		}
	}
	if *timeout <= 0 {
		return usageError("parity: -timeout must be positive")
	}
	if *at != "" {
		return parityAt(ctx, *at, *remote, ts, *timeout, stdout)
	}
	if *remote {
		return usageError("parity: -allow-remote: applies with -at only")
	}

	return parityHere(ctx, ts, parityOptions{defaultLayout: *defaultLayout, helloBin: *helloBin, nginxBin: *nginxBin, timeout: *timeout, keep: *keep}, stdout, stderr)
}

// parityOptions are how parity starts its own servers.
type parityOptions struct {
	defaultLayout, keep bool
	helloBin, nginxBin  string
	timeout             time.Duration
}

// parityHere starts cmd/hello and nginx in a private run directory and
// checks ts against them.
func parityHere(ctx context.Context, ts []topology.Topology, o parityOptions, stdout, stderr io.Writer) error {
	// A short private directory: it holds the unix sockets (paths under
	// 108 bytes), the nginx prefix and the built binary.
	runDir, err := os.MkdirTemp("", "tbparity")
	if err != nil {
		return fmt.Errorf("parity: %w", err)
	}
	if o.keep {
		fmt.Fprintf(stderr, "parity: run directory %s kept\n", runDir)
	} else {
		defer os.RemoveAll(runDir)
	}
	layout := topology.DefaultLayout(runDir)
	if !o.defaultLayout {
		if layout, err = topology.FreeLayout(runDir); err != nil {
			return fmt.Errorf("parity: %w", err)
		}
	}
	bin := o.helloBin
	if bin == "" && stack.NeedsHello(ts) {
		if bin, err = hellorun.Build(ctx, filepath.Join(runDir, "bin")); err != nil {
			return fmt.Errorf("parity: %w", err)
		}
	}
	st, err := stack.Start(ctx, stack.Config{
		Dir: runDir, Layout: layout, Topologies: ts, HelloBin: bin, NginxBin: o.nginxBin,
		NginxWorkers: 1, // one worker answers a handful of requests
	})
	if err != nil {
		return fmt.Errorf("parity: %w", err)
	}
	defer st.Stop()
	return checkParity(ctx, st, o.timeout, stdout)
}

// checkParity asks st's topologies, prints what each returned, and fails
// unless all answered alike; st is stopped before it returns, so that a
// failure to stop cleanly is reported.
func checkParity(ctx context.Context, st *stack.Stack, timeout time.Duration, stdout io.Writer) error {
	results, refused := st.Parity(ctx, timeout)
	if err := writeParity(stdout, results); err != nil {
		return err
	}
	stopErr := st.Stop()
	if len(refused) > 0 {
		var errs []error
		for _, r := range results {
			if err := refused[r.Topology.Name]; err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", r.Topology.Name, err))
			}
		}
		return fmt.Errorf("parity: topologies differ:\n%w", errors.Join(errs...))
	}
	if stopErr != nil {
		return fmt.Errorf("parity: %w", stopErr)
	}
	fmt.Fprintf(stdout, "\nparity ok: %d topologies, %d-byte header blocks, the same headers and body\n", len(results), parity.HeaderBlockSize)
	return nil
}

func writeParity(w io.Writer, rs []parity.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPOLOGY\tADDRESS\tSTATUS GET/HEAD\tHEADER BYTES GET/HEAD\tBODY BYTES\tBODY SHA256\tSERVER\tHEADERS")
	for _, r := range rs {
		if r.Err != nil {
			fmt.Fprintf(tw, "%s\t%s\terror: %v\t\t\t\t\t\n", r.Topology.Name, r.Addr, firstLine(r.Err))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%d\t%.12s\t%s\t%s\n",
			r.Topology.Name, r.Addr, r.GET.Status, r.HEAD.Status,
			len(r.GET.Header), len(r.HEAD.Header), len(r.GET.Body), r.GET.BodySHA256,
			r.GET.Fields.Get("Server"), strings.Join(r.GET.HeaderNames, ","))
	}
	return tw.Flush()
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// parityAt checks servers another machine runs (compare -swarm's server
// node) from here, through the address they listen on, which must be
// link-local, or with remote routable, as load -allow takes it.
func parityAt(ctx context.Context, at string, remote bool, ts []topology.Topology, timeout time.Duration, stdout io.Writer) error {
	a, err := netip.ParseAddr(at)
	if err == nil {
		err = load.CheckAllow(a, remote)
	}
	if err != nil {
		if remote {
			return usageError("parity: -at %q: want the unicast address of another machine (-allow-remote), as load -allow takes", at)
		}
		return usageError("parity: -at %q: want a link-local address (169.254.x.y), as load -allow takes, or another machine's with -allow-remote", at)
	}
	l := topology.DefaultLayout("/tmp")
	l.Host = a.String()
	rs, refused := stack.CheckParity(ctx, parity.Via{Allow: a, Remote: remote}, l, ts, "", true, timeout)
	rep := parity.Report{Refused: map[string]string{}}
	for _, r := range rs {
		rep.Checked = append(rep.Checked, r.Topology.Name)
	}
	for name, err := range refused {
		rep.Refused[name] = err.Error()
	}
	return json.NewEncoder(stdout).Encode(rep)
}

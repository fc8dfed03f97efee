package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// IsGo reports whether name is cmd/hello (the default target).
func IsGo(name string) bool { return name == "" || name == target.Go }

// TargetConfig is how Start runs a target other than Go: where it listens
// (Layout.HTTPListen, which standalone's load and nginx-http's upstream
// reach), with the block's processor value, in the servers' namespace and
// CPU set.
func (cfg Config) TargetConfig() target.Config {
	return target.Config{
		Addr:        cfg.Layout.HTTPListen(),
		Unix:        cfg.Layout.HTTPUnix,
		Path:        cfg.Path,
		Procs:       cfg.GOMAXPROCS,
		PoolThreads: cfg.PoolThreads,
		NetNS:       cfg.NetNS,
		CPUs:        cfg.CPUs.String(),
		Dial:        netns.Dialer(cfg.NetNS),
	}
}

// startTarget starts cfg.Program in place of cmd/hello, its stderr in
// Dir/logs/<target>-g<N>.log.
func (s *Stack) startTarget(ctx context.Context, cfg Config, logs string) error {
	if cfg.Program == nil || cfg.Program.Target.Name != cfg.Target {
		return fmt.Errorf("starting %s: no program built for it", cfg.Target)
	}
	name := cfg.Target
	for _, t := range cfg.Topologies {
		if !cfg.Program.Target.Serves(t.Backend) {
			return fmt.Errorf("starting %s: topology %s needs cmd/hello; %s does not listen where it connects", name, t.Name, name)
		}
	}
	if cfg.isRunning() {
		return s.attachRunning(ctx, cfg)
	}
	if cfg.NetNS == "" {
		if err := checkFree(cfg.Layout, cfg.Topologies); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
	}
	f, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("%s-g%d.log", cfg.Program.Target.Slug(), cfg.GOMAXPROCS)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("creating %s log: %w", name, err)
	}
	s.closers = append(s.closers, f)
	tc := cfg.TargetConfig()
	tc.Stderr = f
	srv, err := cfg.Program.Start(ctx, tc)
	if err != nil {
		return fmt.Errorf("starting %s with %d processors: %w", name, cfg.GOMAXPROCS, err)
	}
	s.backend = srv
	return s.join(srv)
}

// paritySameAs checks a command target, whose answers are its own: every
// topology must answer the plan's path as the service does standalone
// (parity.CheckSameAs). Standalone is asked even when the block does not
// measure it; a service on a unix socket alone has no standalone, and its
// first topology is the reference. A reference that is not a 2xx answer
// refuses every topology: the path is not one the service serves.
func (s *Stack) paritySameAs(ctx context.Context, via parity.Via, timeout time.Duration) (rs []parity.Result, refused map[string]error) {
	refused = map[string]error{}
	req := parity.Request{Path: s.cfg.Path}
	rs = parity.FetchRequest(ctx, via, s.cfg.Layout, s.cfg.Topologies, req, timeout)
	if len(rs) == 0 {
		return rs, refused
	}
	ref := rs[0]
	if i := slices.IndexFunc(rs, func(r parity.Result) bool { return r.Topology.Name == topology.Standalone }); i >= 0 {
		ref = rs[i]
	} else if s.cfg.Program.Target.ListensTCP() {
		st, err := topology.Lookup(topology.Standalone)
		if err != nil {
			ref = parity.Result{Topology: st, Err: err}
		} else {
			ref = parity.FetchRequest(ctx, via, s.cfg.Layout, []topology.Topology{st}, req, timeout)[0]
		}
	}
	var bad error
	switch {
	case ref.Err != nil:
		bad = fmt.Errorf("the reference failed: %w", ref.Err)
	case ref.GET.Status/100 != 2:
		bad = fmt.Errorf("%s answers GET %s with %q, not 2xx: -path names a route the service does not serve", ref.Topology.Name, req.Path, ref.GET.StatusLine)
	}
	for _, r := range rs {
		err := bad
		if err == nil {
			err = parity.CheckSameAs(ref, []parity.Result{r})
		}
		if err != nil {
			// One line each, as the log and the run's record take it.
			refused[r.Topology.Name] = errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	return rs, refused
}

// helloHeaders are the names of cmd/hello's five headers, sorted as
// parity.Response.HeaderNames is (see internal/hello's package doc).
func helloHeaders() []string {
	return []string{"Connection", "Content-Length", "Content-Type", "Date", "Server"}
}

// checkHello holds every result to cmd/hello's own bytes beyond what
// parity.Check compares among topologies: the body, and the Server value
// where nothing rewrites it, and the header names (in any order: Jetty
// writes Content-Length last). A block runs one target, so without this a
// target whose every topology answered alike but wrongly would pass.
func checkHello(r parity.Result) error {
	if r.Err != nil {
		return nil // parity.Check names it
	}
	if want := helloHeaders(); !slices.Equal(r.GET.HeaderNames, want) {
		return fmt.Errorf("%s: header names %v, want cmd/hello's %v", r.Topology.Name, r.GET.HeaderNames, want)
	}
	if string(r.GET.Body) != hello.Body {
		return fmt.Errorf("%s: body %q, want cmd/hello's %q", r.Topology.Name, r.GET.Body, hello.Body)
	}
	if !r.Topology.ViaNginx() {
		if got := r.GET.Fields.Get("Server"); got != hello.ServerName {
			return fmt.Errorf("%s: Server %q, want cmd/hello's %q", r.Topology.Name, got, hello.ServerName)
		}
	}
	return nil
}

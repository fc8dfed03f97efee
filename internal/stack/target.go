package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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
		if t.Backend != topology.HTTPTCP && t.Backend != topology.NoBackend {
			return fmt.Errorf("starting %s: topology %s needs cmd/hello; %s serves HTTP on TCP only", name, t.Name, name)
		}
	}
	if cfg.NetNS == "" {
		if err := checkFree(cfg.Layout, cfg.Topologies); err != nil {
			return fmt.Errorf("starting %s: %w", name, err)
		}
	}
	f, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("%s-g%d.log", name, cfg.GOMAXPROCS)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
	return nil
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

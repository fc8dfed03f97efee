package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/backend"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/internal/wrk"
)

// Config is one sweep.
type Config struct {
	Plan Plan
	// Dir is the results directory; everything the sweep writes, sockets
	// and nginx's files included, goes under it.
	Dir string
	// Layout is where the servers listen; zero means the reference
	// addresses (topology.DefaultLayout) with sockets under Dir.
	Layout *topology.Layout
	// Env is recorded as env.json; the sweep fills in the plan and times.
	Env results.Env
	// Done lists cells already measured (from a resumed run); they are
	// skipped.
	Done map[string]bool
	// Progress receives one line per cell and the plan's estimate.
	Progress io.Writer
	// Log receives the servers' startup lines and warnings.
	Log io.Writer
	// HelloBin, NginxBin and WrkBin override where the programs are.
	HelloBin, NginxBin, WrkBin string
	// HelloAgent and NginxAgent, when set, are the URLs of procd supervisors
	// (cmd/procd) that run cmd/hello and nginx in other containers; the
	// sweep restarts them there instead of starting them itself.
	HelloAgent, NginxAgent string

	script string // wrk's Lua reporter, written into Dir
}

// Outcome is what a sweep did.
type Outcome struct {
	Measured, Skipped, Failed int
	Total                     int
	Interrupted               bool
}

// Run measures every cell of cfg.Plan not in cfg.Done, writing each run as
// it finishes. It returns early, with what finished on disk, when ctx ends.
func Run(ctx context.Context, cfg Config) (Outcome, error) {
	p := cfg.Plan
	out := Outcome{}
	if err := p.Validate(); err != nil {
		return out, err
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	tops, _ := topology.Parse(joinNames(p.Topologies))
	layout, err := cfg.layout()
	if err != nil {
		return out, err
	}

	if cfg.HelloBin == "" && cfg.HelloAgent == "" {
		fmt.Fprintln(cfg.Log, "building cmd/hello")
		if cfg.HelloBin, err = backend.Build(ctx, filepath.Join(cfg.Dir, "bin")); err != nil {
			return out, fmt.Errorf("building cmd/hello: %w", err)
		}
	}

	script, err := wrk.WriteScript(cfg.Dir)
	if err != nil {
		return out, err
	}
	cfg.script = script

	cells := p.Cells()
	out.Total = len(cells)
	todo := 0
	for _, c := range cells {
		if !cfg.Done[c.Key()] {
			todo++
		}
	}
	out.Skipped = out.Total - todo
	fmt.Fprintf(cfg.Progress, "%d cells (%d topologies x GOMAXPROCS %v x %d reps), %d to run, %s each: about %s\n",
		out.Total, len(tops), p.GOMAXPROCS, p.Reps, todo, p.CellTime(), roundDur(time.Duration(todo)*p.CellTime()))

	start := time.Now()
	n := out.Skipped
	for _, g := range p.GOMAXPROCS {
		var block []Cell
		for _, c := range cells {
			if c.GOMAXPROCS == g && !cfg.Done[c.Key()] {
				block = append(block, c)
			}
		}
		if len(block) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			out.Interrupted = true
			return out, nil
		}
		st, err := startServers(ctx, cfg, layout, tops, g)
		if err != nil {
			if ctx.Err() != nil {
				out.Interrupted = true
				return out, nil
			}
			return out, err
		}
		refused := st.parity(ctx, layout, tops, cfg.Log)
		fmt.Fprintf(cfg.Progress, "GOMAXPROCS=%d: %s; parity: %s\n", g, st, parityLine(tops, refused))
		for _, c := range block {
			if ctx.Err() != nil {
				break
			}
			n++
			elapsed := time.Since(start)
			// Estimate from what cells really took once some have run:
			// restarts, parity checks and wrk's exit add to the nominal time.
			per := p.CellTime()
			if ran := n - 1 - out.Skipped; ran > 0 {
				per = elapsed / time.Duration(ran)
			}
			left := time.Duration(out.Total-n+1) * per
			fmt.Fprintf(cfg.Progress, "[%*d/%d] GOMAXPROCS=%d %-20s rep %d  (elapsed %s, left ~%s) ",
				width(out.Total), n, out.Total, c.GOMAXPROCS, c.Topology, c.Rep, roundDur(elapsed), roundDur(left))
			run, raw := cfg.measure(ctx, layout, c, refused[c.Topology])
			if ctx.Err() != nil && run.Error != "" {
				// The cell was cut short: not a measurement, not kept.
				fmt.Fprintln(cfg.Progress, "interrupted")
				break
			}
			if err := results.WriteRun(cfg.Dir, run, raw); err != nil {
				st.stop(cfg.Log)
				return out, err
			}
			if run.Error != "" {
				out.Failed++
				fmt.Fprintf(cfg.Progress, "FAILED: %s\n", firstLine(run.Error))
			} else {
				out.Measured++
				fmt.Fprintln(cfg.Progress, cellLine(*run.Result))
			}
			if err := st.alive(); err != nil {
				st.stop(cfg.Log)
				return out, fmt.Errorf("during %s: %w", c, err)
			}
		}
		if err := st.stop(cfg.Log); err != nil {
			fmt.Fprintf(cfg.Log, "warning: %v\n", err)
		}
		if ctx.Err() != nil {
			out.Interrupted = true
			return out, nil
		}
	}
	return out, nil
}

func (cfg Config) layout() (topology.Layout, error) {
	sock, err := filepath.Abs(filepath.Join(cfg.Dir, "sock"))
	if err != nil {
		return topology.Layout{}, err
	}
	l := topology.DefaultLayout(sock)
	if cfg.Layout != nil {
		l = *cfg.Layout
	}
	// sun_path holds 108 bytes; a deep results directory would not fit.
	for _, p := range []string{l.FCGIUnix, l.FastUnix, l.HTTPUnix} {
		if len(p) >= 100 {
			return topology.Layout{}, fmt.Errorf("unix socket path %s is too long (limit ~100 bytes); use a shorter -out", p)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return topology.Layout{}, fmt.Errorf("creating socket directory: %w", err)
		}
	}
	return l, nil
}

// servers are the processes of one GOMAXPROCS block.
type servers struct {
	helloAgent, nginxAgent *supervise.Client
	hello                  *backend.Server
	nginx                  *nginx.Server
	closers                []io.Closer
}

func (st *servers) String() string {
	if st.helloAgent != nil {
		return "cmd/hello via " + st.helloAgent.URL
	}
	s := fmt.Sprintf("cmd/hello pid %d", st.hello.Pid())
	if st.nginx != nil {
		s += fmt.Sprintf(", nginx pid %d", st.nginx.Pid())
	}
	return s
}

func parityLine(tops []topology.Topology, refused map[string]string) string {
	if len(refused) == 0 {
		return fmt.Sprintf("%d topologies answer identically (141-byte header block, same body)", len(tops))
	}
	var names []string
	for _, t := range tops {
		if refused[t.Name] != "" {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("REFUSED %s (see the log above); measuring the other %d", strings.Join(names, ", "), len(tops)-len(names))
}

// startServers starts cmd/hello at GOMAXPROCS g and, when a topology needs
// it, nginx. Their own output goes to logs/ in the results directory; only
// failures (with the tail of that output) reach the terminal.
func startServers(ctx context.Context, cfg Config, layout topology.Layout, tops []topology.Topology, g int) (*servers, error) {
	if cfg.HelloAgent != "" {
		return startAgents(ctx, cfg, tops, g)
	}
	st := &servers{}
	logs := filepath.Join(cfg.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	hlog, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("hello-g%d.log", g)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating hello log: %w", err)
	}
	st.closers = append(st.closers, hlog)
	h, err := backend.Start(ctx, backend.Config{
		Bin:        cfg.HelloBin,
		Layout:     layout,
		Topologies: tops,
		GOMAXPROCS: g,
		Stderr:     hlog,
		CPUs:       cfg.Plan.PinServer,
	})
	if err != nil {
		st.stop(cfg.Log)
		return nil, fmt.Errorf("starting cmd/hello with GOMAXPROCS=%d: %w", g, err)
	}
	st.hello = h
	if vh := nginxconf.Vhosts(tops); len(vh) > 0 {
		params, err := nginxconf.DefaultParams(layout)
		if err != nil {
			st.stop(cfg.Log)
			return nil, err
		}
		params.Vhosts = vh
		ng, err := nginx.Start(ctx, nginx.Config{
			Bin:    cfg.NginxBin,
			Dir:    filepath.Join(cfg.Dir, "nginx"),
			Params: params,
			CPUs:   cfg.Plan.PinServer,
		})
		if err != nil {
			st.stop(cfg.Log)
			return nil, err
		}
		st.nginx = ng
	}
	return st, nil
}

func startAgents(ctx context.Context, cfg Config, tops []topology.Topology, g int) (*servers, error) {
	st := &servers{helloAgent: &supervise.Client{URL: cfg.HelloAgent}}
	if _, err := st.helloAgent.Restart(ctx, "GOMAXPROCS="+strconv.Itoa(g)); err != nil {
		return nil, fmt.Errorf("starting cmd/hello with GOMAXPROCS=%d: %w", g, err)
	}
	if vh := nginxconf.Vhosts(tops); len(vh) > 0 {
		st.nginxAgent = &supervise.Client{URL: cfg.NginxAgent}
		if _, err := st.nginxAgent.Restart(ctx); err != nil {
			return nil, fmt.Errorf("starting nginx: %w", err)
		}
	}
	return st, nil
}

// parity checks every topology's response, alone and against the first one
// that passes, and returns why each refused topology will not be measured.
// The others are still measured: one broken path should not void a sweep.
func (st *servers) parity(ctx context.Context, layout topology.Layout, tops []topology.Topology, log io.Writer) map[string]string {
	refused := map[string]string{}
	rs := parity.Fetch(ctx, layout, tops, 5*time.Second)
	var ref *parity.Result
	for i := range rs {
		err := parity.Check(rs[i : i+1])
		if err == nil && ref != nil {
			err = parity.Check([]parity.Result{*ref, rs[i]})
		}
		if err != nil {
			name := rs[i].Topology.Name
			refused[name] = "parity check: " + err.Error()
			fmt.Fprintf(log, "refusing to measure %s: %v\n", name, err)
			continue
		}
		if ref == nil {
			ref = &rs[i]
		}
	}
	return refused
}

func (st *servers) alive() error {
	for _, a := range []*supervise.Client{st.helloAgent, st.nginxAgent} {
		if a == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := a.Status(ctx)
		cancel()
		if err != nil {
			return err
		}
		if !s.Running {
			return errors.New(s.Error)
		}
	}
	if st.hello != nil && closed(st.hello.Done()) {
		return errors.New("cmd/hello exited")
	}
	if st.nginx != nil && closed(st.nginx.Done()) {
		return errors.New("nginx exited")
	}
	return nil
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (st *servers) stop(log io.Writer) error {
	var errs []error
	for _, a := range []*supervise.Client{st.nginxAgent, st.helloAgent} {
		if a != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			_, err := a.Stop(ctx)
			cancel()
			errs = append(errs, err)
		}
	}
	if st.nginx != nil {
		errs = append(errs, st.nginx.Stop())
	}
	if st.hello != nil {
		errs = append(errs, st.hello.Stop())
	}
	for _, c := range st.closers {
		c.Close()
	}
	return errors.Join(errs...)
}

// measure runs the warmup (discarded) and the measured wrk run of one cell.
func (cfg Config) measure(ctx context.Context, layout topology.Layout, c Cell, refused string) (results.Run, []byte) {
	p := cfg.Plan
	t, _ := topology.Lookup(c.Topology)
	run := results.Run{
		Topology:   c.Topology,
		GOMAXPROCS: c.GOMAXPROCS,
		Rep:        c.Rep,
		URL:        layout.URL(t),
		LoadCPUs:   p.PinLoad,
		ServerCPUs: p.PinServer,
		Start:      time.Now().UTC(),
	}
	if refused != "" {
		run.Error = refused
		return run, nil
	}
	opt := wrk.Options{
		Bin:         cfg.WrkBin,
		URL:         run.URL,
		Threads:     p.Threads,
		Connections: p.Connections,
		Timeout:     p.Timeout,
		Latency:     true,
		Script:      cfg.script,
		CPUs:        p.PinLoad,
	}
	if p.Warmup > 0 {
		w := opt
		w.Duration = p.Warmup
		if _, _, err := wrk.Run(ctx, w); err != nil {
			run.Error = "warmup: " + err.Error()
			return run, nil
		}
	}
	opt.Duration = p.Duration
	run.WrkArgs = opt.Command()
	run.Start = time.Now().UTC()
	res, raw, err := wrk.Run(ctx, opt)
	run.Wall = time.Since(run.Start)
	if err != nil {
		run.Error = err.Error()
		return run, raw
	}
	run.Result = &res
	return run, raw
}

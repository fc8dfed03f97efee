// Package stack starts and stops the servers of one block of a run —
// cmd/hello with the listeners the topologies need and, when a topology
// goes through nginx, a private nginx rendered from nginx/ — and checks
// their responses for parity. Another target (a seed's server, or the
// user's own HTTP server as a command target) runs in cmd/hello's place
// where it listens; a command target's parity is its own standalone
// answer to the plan's path (parity.CheckSameAs), not cmd/hello's bytes.
// A running service (target.Running) stands there without being started:
// the stack checks it answers, reads its listening process's CPU time, and
// neither stops it nor moves it into the servers' control groups.
// It is the one place servers are started:
// the sweep and the parity command both use it, and so does a run whose
// servers live in other containers (through procd agents).
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

// Config is one start of the servers.
type Config struct {
	// Dir is the run directory: the servers' logs go to Dir/logs, nginx's
	// prefix is Dir/nginx.
	Dir        string
	Layout     topology.Layout
	Topologies []topology.Topology
	// GOMAXPROCS is cmd/hello's -gomaxprocs (0 keeps the runtime default).
	GOMAXPROCS int
	// HelloBin is the cmd/hello binary (hellorun.Build); NginxBin is nginx
	// (found in PATH when empty).
	HelloBin, NginxBin string
	// CPUs pins the servers to a CPU set; empty leaves them unpinned.
	CPUs cpuset.CPUSet
	// NetNS, when set, is the network namespace the servers run in (a
	// netns.Pair's Server), and ClientNetNS the one parity fetches from
	// (its Client), so parity crosses the veth as the load does; Layout.Host
	// is then the veth's server address.
	NetNS, ClientNetNS string
	// NginxWorkers overrides worker_processes; 0 gives one worker per CPU
	// of CPUs, and "auto" where the servers are not pinned.
	NginxWorkers int
	// Connections is the most client connections a cell sends through
	// nginx (the plan's most -connections): nginx's listen backlog and
	// worker_connections are fitted to it (nginxconf.Params.Fit). 0 keeps
	// the rendered defaults.
	Connections int
	// UpstreamKeepalive is each upstream block's keepalive pool (0 is
	// nginxconf.DefaultKeepalive).
	UpstreamKeepalive int
	// HelloAgent and NginxAgent, when set, are the URLs of procd
	// supervisors (cmd/procd) that run cmd/hello and nginx in other
	// containers; the stack restarts them there instead of starting them.
	HelloAgent, NginxAgent string
	// Target is the server behind the topologies: "go" (or empty) for
	// cmd/hello, or a target of internal/target, whose built Program
	// then runs in cmd/hello's place with GOMAXPROCS as its processor
	// value and PoolThreads as java-pool's pool size (see TargetConfig).
	Target      string
	Program     *target.Program
	PoolThreads int
	// Path is the request path the parity check asks for (the plan's
	// -path; "/" when empty), and a command target's readiness request.
	Path string
	// Account, when set, is a control group (cgroup.NewAccount) that
	// every process of the servers started here joins once each is
	// ready (nginx's workers, a target's children), so that its CPU time
	// counter is theirs alone (ServersCPU). Servers run by agents do not.
	Account *cgroup.Group
	// Weight, when set, is a control group of the cpu controller
	// (cgroup.NewWeighted) that the same processes join: the servers of a
	// duet's two sides split the CPUs by their groups' equal weights,
	// not by their counts of threads. It may be Account itself.
	Weight *cgroup.Group
	// NginxPart and ServerPart, when set, are child groups of Account
	// (cgroup.Group.NewPart) that nginx's processes and the backend's
	// join in its stead, so that each one's time is counted apart.
	NginxPart, ServerPart *cgroup.Group
	// TLS is the run's certificate and TLS settings (tlscert.Generate in
	// Dir), which the topologies over TLS need: cmd/hello's HTTPS
	// listener, nginx's TLS vhosts, and parity's client, which trusts
	// that certificate alone.
	TLS *tlscert.Setup
}

// Stack is the running servers of one block.
type Stack struct {
	// backend is the server nginx fronts (cmd/hello or another target)
	// and nginx is nginx; either is nil when no topology needs it.
	backend, nginx Server
	closers        []io.Closer
	cfg            Config
	// nginxParams is what nginx was rendered with.
	nginxParams nginxconf.Params
	// pooled is the vhost whose upstream pool nginx may still hold idle
	// (UsePool); empty when none may.
	pooled string
}

// NeedsHello reports whether any topology ends at a cmd/hello listener.
func NeedsHello(ts []topology.Topology) bool {
	for _, t := range ts {
		if t.Backend != topology.NoBackend {
			return true
		}
	}
	return false
}

// Start starts cmd/hello (when a topology needs it) and nginx (when a
// topology goes through it). The servers' own output goes to Dir/logs;
// errors carry its tail. Cancelling ctx stops them.
func Start(ctx context.Context, cfg Config) (*Stack, error) {
	if cfg.HelloAgent != "" {
		if !IsGo(cfg.Target) {
			return nil, fmt.Errorf("starting %s: with procd agents only cmd/hello runs", cfg.Target)
		}
		return startAgents(ctx, cfg)
	}
	s := &Stack{cfg: cfg}
	logs := filepath.Join(cfg.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("creating log directory: %w", err)
	}
	if NeedsHello(cfg.Topologies) && !IsGo(cfg.Target) {
		if err := s.startTarget(ctx, cfg, logs); err != nil {
			s.Stop() // a target that started and could not join its group
			return nil, err
		}
	} else if NeedsHello(cfg.Topologies) {
		if err := s.startHello(ctx, cfg, logs); err != nil {
			return nil, err
		}
	}
	if err := s.startNginx(ctx, cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// startHello starts cmd/hello and places it in its groups; on an error
// what started is stopped.
func (s *Stack) startHello(ctx context.Context, cfg Config, logs string) error {
	// A namespace of the run's own has nothing else listening.
	if cfg.NetNS == "" {
		if err := checkFree(cfg.Layout, cfg.Topologies); err != nil {
			return fmt.Errorf("starting cmd/hello: %w", err)
		}
	}
	hlog, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("hello-g%d.log", cfg.GOMAXPROCS)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("creating hello log: %w", err)
	}
	s.closers = append(s.closers, hlog)
	h, err := hellorun.Start(ctx, hellorun.Config{
		Bin:        cfg.HelloBin,
		Layout:     cfg.Layout,
		Topologies: cfg.Topologies,
		GOMAXPROCS: cfg.GOMAXPROCS,
		Stderr:     hlog,
		CPUs:       cfg.CPUs.String(),
		NetNS:      cfg.NetNS,
		Dial:       netns.Dialer(cfg.NetNS),
		TLS:        cfg.TLS,
	})
	if err != nil {
		s.Stop()
		return fmt.Errorf("starting cmd/hello with GOMAXPROCS=%d: %w", cfg.GOMAXPROCS, err)
	}
	s.backend = h
	if err := s.join(h); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// startNginx starts nginx with the vhosts of the stack's topologies, if
// any go through it, and places it in its groups; on an error what
// started is stopped.
func (s *Stack) startNginx(ctx context.Context, cfg Config) error {
	vh := nginxconf.Vhosts(cfg.Topologies)
	if len(vh) == 0 {
		return nil
	}
	params, err := nginxconf.DefaultParams(cfg.Layout)
	if err != nil {
		s.Stop()
		return err
	}
	params.Vhosts = vh
	params.WorkerProcesses = NginxWorkers(cfg.NginxWorkers, cfg.CPUs)
	params.Keepalive = cfg.UpstreamKeepalive
	if cfg.TLS != nil {
		params.TLS = nginxconf.TLS{Cert: cfg.TLS.Cert, Key: cfg.TLS.Key, Settings: cfg.TLS.Settings}
	}
	if cfg.Connections > 0 {
		if err := params.Fit(cfg.Connections); err != nil {
			s.Stop()
			return fmt.Errorf("starting nginx: %w", err)
		}
	}
	s.nginxParams = params
	ng, err := nginx.Start(ctx, nginx.Config{
		Bin:    cfg.NginxBin,
		Dir:    filepath.Join(cfg.Dir, "nginx"),
		Params: params,
		CPUs:   cfg.CPUs.String(),
		NetNS:  cfg.NetNS,
		Dial:   netns.Dialer(cfg.NetNS),
	})
	if err != nil {
		s.Stop()
		return err
	}
	s.nginx = nginxServer{ng}
	if err := s.join(s.nginx); err != nil {
		s.Stop()
		return err
	}
	return nil
}

// NginxWorkers is nginx's worker_processes: the override when set, else
// one worker per CPU of the servers' set, else 0 (auto: nginx counts the
// machine's online CPUs, not the set it is pinned to, and two workers
// would share one CPU).
func NginxWorkers(override int, cpus cpuset.CPUSet) int {
	if override > 0 {
		return override
	}
	return cpus.Len()
}

// NginxSettings is what the stack's nginx was rendered with; ok is false
// when it started none here.
func (s *Stack) NginxSettings() (p nginxconf.Params, ok bool) {
	return s.nginxParams, s.nginx != nil && s.nginxParams.WorkerConnections > 0
}

// UsePool readies nginx for t's load: when another vhost's upstream pool
// may still be open and the pools of two vhosts do not fit in one
// worker's connections together (nginxconf.Params.WorkerNeed above
// WorkerConnections: pools sized to the clients under a 20,000 open-files
// limit), nginx reloads, which closes the idle pool. reloaded says it did.
// A stack without nginx here, or a topology with no upstream, needs
// nothing.
func (s *Stack) UsePool(ctx context.Context, t topology.Topology) (reloaded bool, err error) {
	ng, ok := s.nginx.(nginxServer)
	if !ok || !t.ViaNginx() || t.Backend == topology.NoBackend {
		return false, nil
	}
	crowded := s.cfg.Connections > 0 && s.nginxParams.WorkerNeed(s.cfg.Connections) > s.nginxParams.WorkerConnections
	if s.pooled == "" || s.pooled == t.Vhost || !crowded {
		s.pooled = t.Vhost
		return false, nil
	}
	if err := ng.Reload(ctx, 10*time.Second); err != nil {
		return false, err
	}
	s.pooled = t.Vhost
	return true, nil
}

// checkFree says at once, with an error that errors.Is matches against
// syscall.EADDRINUSE, when a TCP address cmd/hello needs is taken; the
// child would only print it.
func checkFree(l topology.Layout, ts []topology.Topology) error {
	seen := map[string]bool{}
	for _, t := range ts {
		network, addr, ok := l.BackendAddr(t)
		if !ok || network != "tcp" || seen[addr] {
			continue
		}
		seen[addr] = true
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("address %s for %s is not free: %w", addr, t.Name, err)
		}
		ln.Close()
	}
	return nil
}

func startAgents(ctx context.Context, cfg Config) (*Stack, error) {
	s := &Stack{cfg: cfg}
	if NeedsHello(cfg.Topologies) {
		a := &agentServer{name: "cmd/hello", client: &supervise.Client{URL: cfg.HelloAgent}}
		if _, err := a.client.Restart(ctx, "GOMAXPROCS="+strconv.Itoa(cfg.GOMAXPROCS)); err != nil {
			return nil, fmt.Errorf("starting cmd/hello with GOMAXPROCS=%d: %w", cfg.GOMAXPROCS, err)
		}
		s.backend = a
	}
	if vh := nginxconf.Vhosts(cfg.Topologies); len(vh) > 0 {
		if cfg.NginxAgent == "" {
			s.Stop()
			return nil, errors.New("starting nginx: topologies through nginx need an nginx agent beside the hello agent")
		}
		a := &agentServer{name: "nginx", client: &supervise.Client{URL: cfg.NginxAgent}}
		if _, err := a.client.Restart(ctx); err != nil {
			s.Stop()
			return nil, fmt.Errorf("starting nginx: %w", err)
		}
		s.nginx = a
	}
	return s, nil
}

func (s *Stack) String() string {
	var out string
	for _, srv := range []Server{s.backend, s.nginx} {
		switch a, ok := srv.(*agentServer); {
		case srv == nil:
		case ok:
			out = join(out, a.name+" via "+a.client.URL)
		case srv == s.backend && s.cfg.isRunning():
			out = join(out, srv.(*target.Service).Describe())
		default:
			out = join(out, fmt.Sprintf("%s pid %d", srv.Name(), srv.Pid()))
		}
	}
	return out
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// Parity fetches every topology's response and checks it alone, against
// the first one that passes, and against its own answer to a request with
// a handler wait (parity.CheckWait). refused says why each failing
// topology must not be measured; the others still are: one broken path
// should not void a run.
func (s *Stack) Parity(ctx context.Context, timeout time.Duration) (rs []parity.Result, refused map[string]error) {
	via := parity.Via{Dial: netns.Dialer(s.cfg.ClientNetNS)}
	if s.cfg.ClientNetNS != "" {
		via.Allow, _ = netip.ParseAddr(s.cfg.Layout.Host)
	}
	if t := s.cfg.TLS; t != nil {
		var err error
		if via.TLS, err = tlscert.ClientConfig(t.Cert, t.Settings); err != nil {
			return nil, refuseAll(s.cfg.Topologies, err)
		}
	}
	if s.cfg.Program != nil && target.IsOwn(s.cfg.Program.Target.Name) {
		return s.paritySameAs(ctx, via, timeout)
	}
	return CheckParity(ctx, via, s.cfg.Layout, s.cfg.Topologies, s.cfg.Path, IsGo(s.cfg.Target), timeout)
}

// CheckParity is Stack.Parity for cmd/hello's (or a seed target's)
// topologies laid out as l wherever they run (a cluster's server node,
// say), fetched through via at path ("/" when empty); work also checks
// the answer after cmd/hello's handler work (?work=, -work), which only
// cmd/hello takes.
func CheckParity(ctx context.Context, via parity.Via, l topology.Layout, tops []topology.Topology, path string, work bool, timeout time.Duration) (rs []parity.Result, refused map[string]error) {
	refused = map[string]error{}
	rs = parity.FetchRequest(ctx, via, l, tops, parity.Request{Path: path}, timeout)
	var ref *parity.Result
	for i := range rs {
		err := parity.Check(rs[i : i+1])
		if err == nil {
			err = checkHello(rs[i])
		}
		if err == nil && ref != nil {
			err = parity.Check([]parity.Result{*ref, rs[i]})
		}
		if err == nil {
			// The same answer after a handler wait (?wait=), as the
			// open-loop scenarios request it.
			err = parity.CheckWait(ctx, via, l, rs[i], timeout)
		}
		if err == nil && work {
			err = parity.CheckPath(ctx, via, l, rs[i], parity.WorkPath, timeout)
		}
		if err != nil {
			refused[rs[i].Topology.Name] = err
			continue
		}
		if ref == nil {
			ref = &rs[i]
		}
	}
	return rs, refused
}

// refuseAll refuses every topology for err.
func refuseAll(tops []topology.Topology, err error) map[string]error {
	refused := map[string]error{}
	for _, t := range tops {
		refused[t.Name] = err
	}
	return refused
}

// ServerPid is the process id of the server nginx fronts (cmd/hello or
// the target) and NginxPid that of the nginx master, for their CPU time
// and memory; 0 when the stack has none or runs it through an agent.
func (s *Stack) ServerPid() int { return pid(s.backend) }

func (s *Stack) NginxPid() int { return pid(s.nginx) }

func pid(srv Server) int {
	if srv == nil {
		return 0
	}
	return srv.Pid()
}

// ServerCPU and NginxCPU are the CPU time so far of the server nginx
// fronts and of nginx (master and workers), from /proc for the servers
// started here and from the agent for those it runs; ErrNoServer when the
// stack has no such server.
func (s *Stack) ServerCPU(ctx context.Context) (procstat.Times, error) { return cpuOf(ctx, s.backend) }

func (s *Stack) NginxCPU(ctx context.Context) (procstat.Times, error) { return cpuOf(ctx, s.nginx) }

// Alive reports an error, with the tail of its stderr, once a server of
// the stack has exited.
func (s *Stack) Alive() error {
	for _, srv := range []Server{s.backend, s.nginx} {
		if srv != nil && srv.Exited() {
			return exitErr(srv)
		}
	}
	return nil
}

// Stop stops nginx, then cmd/hello or the target, and reports what did not
// stop cleanly. It is safe to call more than once.
func (s *Stack) Stop() error {
	err := stopAll(s.nginx, s.backend)
	for _, c := range s.closers {
		c.Close()
	}
	s.closers = nil
	return err
}

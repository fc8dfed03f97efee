package rig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/topology"
)

// Cluster is a cluster to run a sweep's servers and load on (the sweep's
// Cluster): the orchestrator C, named Backend in env.json, the image with
// the programs, the load's Lead and Tolerance (cluster.LoadSpec's) and
// the server node's address as the user named it (Allow, ServerAddr).
type Cluster struct {
	C               cluster.Cluster
	Backend, Image  string
	Lead, Tolerance time.Duration
	Allow           netip.Addr
}

// ServerAddr is where the load goes, the address the cluster reports for
// the server node srv, checked against allow (-swarm-allow): remote when
// it is routable, which allow must then name. Loopback and link-local
// addresses (the test swarm's veth) need no naming, but a named address
// must be the server node's all the same.
func ServerAddr(srv cluster.Node, allow netip.Addr) (addr netip.Addr, remote bool, err error) {
	addr, err = netip.ParseAddr(srv.Addr)
	if err != nil {
		return addr, false, fmt.Errorf("the server node %s: its address %q: %w", srv, srv.Addr, err)
	}
	remote = !addr.IsLoopback() && !addr.IsLinkLocalUnicast()
	switch {
	case allow.IsValid() && allow != addr:
		return addr, false, plan.Errorf(plan.SwarmAllow, "%s: the swarm reports the server node %s at %s, not %s; give -swarm-allow %s", allow, srv, addr, allow, addr)
	case remote && !allow.IsValid():
		return addr, false, plan.Errorf(plan.SwarmAllow, "the server node %s is at %s, a routable address; the load goes to another machine only at the address named: give -swarm-allow %s", srv, addr, addr)
	case remote:
		if err := load.CheckAllow(addr, true); err != nil {
			return addr, false, plan.Errorf(plan.SwarmAllow, "%s: the server node %s: %v", allow, srv, err)
		}
	}
	return addr, remote, nil
}

// Ports of the supervisors' APIs on the server node.
const (
	clusterHelloAPI = "7070"
	clusterNginxAPI = "7071"
)

// clusterRun is what a sweep on a cluster chose: the nodes, and a count
// that makes the names of its servers and jobs unique.
type clusterRun struct {
	Cluster
	// env is the sweep's record, which the servers' nginx version joins.
	env     *results.Env
	server  cluster.Node
	loaders []cluster.Node
	// checker is the load node parity is checked from: one other than
	// the server node when there is one.
	checker cluster.Node
	addr    netip.Addr // the server node's, where the load goes
	remote  bool       // addr is routable, named with -swarm-allow
	n       int
}

func (r *clusterRun) next(prefix string) string {
	r.n++
	return fmt.Sprintf("%s-%d", prefix, r.n)
}

// PrepareCluster chooses the nodes (one ready server node, every ready
// load node), places the image on them, reads their clocks into
// env.Cluster, and starts every block's servers there from then on.
// Nothing is started yet: no swarm role or an image that cannot be
// placed refuses the run here. A resumed sweep (env.Cluster its record)
// must find the nodes it began on.
func (r *Rig) PrepareCluster(ctx context.Context, c Cluster, env *results.Env, resume bool) error {
	prev := env.Cluster // the interrupted sweep's, on -resume
	nodes, err := c.C.Nodes(ctx)
	if err != nil {
		return err
	}
	srv, err := cluster.Select(nodes, cluster.RoleServer)
	if err != nil {
		return err
	}
	loaders, err := cluster.Select(nodes, cluster.RoleLoad)
	if err != nil {
		return err
	}
	if len(srv) > 1 {
		fmt.Fprintf(r.Log, "note: %d nodes are labelled %s=server; the servers run on %s\n", len(srv), cluster.RoleLabel, srv[0])
	}
	addr, remote, err := ServerAddr(srv[0], c.Allow)
	if err != nil {
		return err
	}
	if resume {
		if err := sameNodes(prev, srv[0], loaders); err != nil {
			return err
		}
	}
	place := []cluster.Node{srv[0]}
	for _, n := range loaders {
		if n.ID != srv[0].ID {
			place = append(place, n)
		}
	}
	if err := c.C.PlaceImage(ctx, c.Image, place); err != nil {
		return err
	}
	r.cl = &clusterRun{Cluster: c, env: env, server: srv[0], loaders: loaders, addr: addr, remote: remote, checker: loaders[0]}
	for _, n := range loaders {
		if n.ID != srv[0].ID {
			r.cl.checker = n
			break
		}
	}
	r.Start = r.startClusterServers
	env.Cluster = r.clusterEnv(ctx, nodes)
	var names []string
	for _, n := range loaders {
		names = append(names, n.String())
	}
	fmt.Fprintf(r.Progress, "cluster (%s): servers on %s at %s, load from %s\n", c.Backend, srv[0], addr, strings.Join(names, ", "))
	return nil
}

// sameNodes refuses to resume a sweep on other nodes than it began on:
// the server node and the set of load nodes (and so every node's share)
// must be the ones env.json recorded.
func sameNodes(prev *results.ClusterEnv, srv cluster.Node, loaders []cluster.Node) error {
	if prev.Server.ID != srv.ID {
		return plan.Errorf(plan.Resume, "the servers ran on node %s (%s), the swarm's server node is now %s; label it topobench.role=server again", prev.Server.Hostname, shortID(prev.Server.ID), srv)
	}
	var was, now []string
	for _, n := range prev.Load {
		was = append(was, n.Hostname+" ("+shortID(n.ID)+")")
	}
	for _, n := range loaders {
		now = append(now, n.String())
	}
	if !slices.Equal(was, now) {
		return plan.Errorf(plan.Resume, "the load came from %s, the swarm's load nodes are now %s; label them as before", strings.Join(was, ", "), strings.Join(now, ", "))
	}
	return nil
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func orDefault(v, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return v
}

// clusterEnv is the cluster's record: the nodes chosen, with their
// clocks, and the harness's manager node among nodes.
func (r *Rig) clusterEnv(ctx context.Context, nodes []cluster.Node) *results.ClusterEnv {
	cl := r.cl
	env := &results.ClusterEnv{
		Backend: cl.Backend, Image: cl.Image, ServerAddr: cl.addr.String(), Remote: cl.remote, Parity: "load node " + cl.checker.String(),
		Lead: orDefault(cl.Lead, cluster.DefaultLead), Tolerance: orDefault(cl.Tolerance, cluster.DefaultTolerance),
	}
	env.Server = r.envNode(ctx, cl.server)
	for _, n := range cl.loaders {
		env.Load = append(env.Load, r.envNode(ctx, n))
	}
	for _, n := range nodes {
		if n.Manager && n.Ready {
			env.Harness = r.envNode(ctx, n)
			break
		}
	}
	return env
}

func (r *Rig) envNode(ctx context.Context, n cluster.Node) results.EnvNode {
	e := results.EnvNode{ID: n.ID, Hostname: n.Hostname, Addr: n.Addr}
	for _, r := range n.Roles {
		e.Roles = append(e.Roles, string(r))
	}
	ck, err := r.cl.C.Clock(ctx, n)
	if err != nil {
		r.Warn("the clock of node %s: %v", n, err)
		return e
	}
	e.ClockOffset, e.ClockUncertainty, e.ClockKnown = ck.Offset, ck.Uncertainty, ck.Known
	return e
}

// OnCluster reports whether the servers and the load run on a cluster
// (PrepareCluster).
func (r *Rig) OnCluster() bool { return r != nil && r.cl != nil }

// ClusterLayout is where the servers listen on the cluster's server node.
func (r *Rig) ClusterLayout() topology.Layout { return r.cl.layout() }

// layout is where the servers listen on the server node: the
// reference ports, the load-facing ones on every address of the node.
func (r *clusterRun) layout() topology.Layout {
	l := topology.DefaultLayout("/tmp")
	l.Host = r.addr.String()
	return l
}

// clusterServers are a block's servers on the server node: one server of
// the cluster running procd for cmd/hello and, when a topology goes
// through nginx, procd for nginx.
type clusterServers struct {
	c            cluster.Cluster
	r            *clusterRun
	name         string
	node         cluster.Node
	layout       topology.Layout
	tops         []topology.Topology
	hello, nginx *supervise.Client
}

var _ Servers = (*clusterServers)(nil)

// startClusterServers is the rig's start on a cluster.
func (rg *Rig) startClusterServers(ctx context.Context, cfg stack.Config) (Servers, error) {
	r := rg.cl
	if !stack.IsGo(cfg.Target) {
		return nil, fmt.Errorf("starting %s: on the cluster only cmd/hello runs", cfg.Target)
	}
	cs := &clusterServers{c: r.C, r: r, name: r.next(fmt.Sprintf("servers-g%d", cfg.GOMAXPROCS)), node: r.server,
		layout: r.layout(), tops: cfg.Topologies}
	host := r.addr.String()
	api := func(port string) *supervise.Client { return &supervise.Client{URL: "http://" + netJoin(host, port)} }
	var procs [][]string
	if stack.NeedsHello(cfg.Topologies) {
		cs.hello = api(clusterHelloAPI)
		cmd := []string{"env", "GOMAXPROCS=" + strconv.Itoa(cfg.GOMAXPROCS), "/usr/local/bin/procd",
			"-listen", netJoin(host, clusterHelloAPI), "-allow-host", host}
		for _, t := range cfg.Topologies {
			network, addr, ok := cs.layout.BackendAddr(t)
			switch {
			case !ok:
			case network == "unix":
				cmd = append(cmd, "-ready", "unix:"+addr)
			case t.Backend == topology.HTTPTCP:
				cmd = append(cmd, "-ready", "http://"+addr+"/")
			default:
				cmd = append(cmd, "-ready", "tcp:"+addr)
			}
		}
		cmd = append(append(cmd, "--", "/usr/local/bin/hello"), cs.layout.HelloArgs(cfg.Topologies)...)
		procs = append(procs, compactReady(cmd))
	}
	if vh := nginxconf.Vhosts(cfg.Topologies); len(vh) > 0 {
		cs.nginx = api(clusterNginxAPI)
		cmd := []string{"/usr/local/bin/procd", "-listen", netJoin(host, clusterNginxAPI), "-allow-host", host,
			"-stop-signal", "QUIT", "-version-args", "-v",
			"-prepare", "/usr/local/bin/topobench nginx-conf -out /run/nginx -sockdir /tmp -host " + host}
		for _, v := range vh {
			cmd = append(cmd, "-ready", "http://127.0.0.1:"+strconv.Itoa(cs.layout.NginxPorts[v])+"/")
		}
		cmd = append(cmd, "--", "/usr/sbin/nginx", "-p", "/run/nginx", "-c", "/run/nginx/nginx.conf", "-e", "/run/nginx/error.log", "-g", "daemon off;")
		procs = append(procs, cmd)
	}
	if len(procs) == 0 {
		return nil, errors.New("starting the servers: no topology needs one")
	}
	err := r.C.StartServer(ctx, cluster.Server{
		Name: cs.name, Image: r.Image, Node: r.server.ID,
		Cmd:   []string{"/bin/bash", "-c", supervisorScript(procs)},
		Ready: cs.ready,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the servers on node %s: %w", r.server, err)
	}
	if cs.nginx != nil && r.env.NginxVersion == "" {
		if st, err := cs.nginx.Status(ctx); err == nil {
			if v, err := nginx.ParseVersion(st.Version); err == nil {
				r.env.NginxVersion = v.String()
			}
		}
	}
	return cs, nil
}

// compactReady drops duplicate -ready targets (two topologies on one
// listener).
func compactReady(cmd []string) []string {
	var out []string
	seen := map[string]bool{}
	for i := 0; i < len(cmd); i++ {
		if cmd[i] == "-ready" && i+1 < len(cmd) {
			if seen[cmd[i+1]] {
				i++
				continue
			}
			seen[cmd[i+1]] = true
		}
		out = append(out, cmd[i])
	}
	return out
}

func netJoin(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// supervisorScript runs each command (a procd) in the background of one
// container, so that cmd/hello and nginx share its /tmp for the unix
// sockets: the first to exit takes the others down, and the engine's stop
// signal (SIGTERM to the shell, PID 1) is passed on to every procd, which
// stops its program.
func supervisorScript(cmds [][]string) string {
	var b strings.Builder
	b.WriteString("trap 'kill -TERM $(jobs -p) 2>/dev/null; wait; exit 0' TERM INT\n")
	b.WriteString("pids=\n")
	for _, c := range cmds {
		for i, a := range c {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(shellQuote(a))
		}
		b.WriteString(" &\npids=\"$pids $!\"\n")
	}
	// Not wait -n: a child that exits before it starts waiting is missed
	// (bash 5.2). Each child is looked at every 0.2 s, the sleep waited
	// for in the background so the trap still runs at once.
	b.WriteString(`while :; do
	for p in $pids; do
		if ! kill -0 "$p" 2>/dev/null; then
			wait "$p"; status=$?
			kill -TERM $(jobs -p) 2>/dev/null; wait
			exit $status
		fi
	done
	sleep 0.2 & wait $!
done
`)
	return b.String()
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ready: every procd says its program answered its -ready targets.
func (cs *clusterServers) ready(ctx context.Context) error {
	for _, c := range []*supervise.Client{cs.hello, cs.nginx} {
		if c == nil {
			continue
		}
		if err := supervise.Check(ctx, c.URL+"/healthz", 2*time.Second); err != nil {
			return err
		}
	}
	return nil
}

func (cs *clusterServers) String() string {
	var parts []string
	if cs.hello != nil {
		parts = append(parts, "cmd/hello via "+cs.hello.URL)
	}
	if cs.nginx != nil {
		parts = append(parts, "nginx via "+cs.nginx.URL)
	}
	return strings.Join(parts, ", ") + " on node " + cs.node.String()
}

// Parity runs `topobench parity -at ADDR` as a job on the first load
// node, so that the check goes the way the load goes: from a load node to
// the server node's address. Every topology is refused when the job
// cannot say.
func (cs *clusterServers) Parity(ctx context.Context, timeout time.Duration) ([]parity.Result, map[string]error) {
	var names []string
	for _, t := range cs.tops {
		names = append(names, t.Name)
	}
	job := cluster.Job{Name: cs.r.next("parity"), Image: cs.r.Image, Node: cs.r.checker.ID, Cmd: cs.r.parityCmd(names, timeout)}
	// The job has as long to start as a load job has.
	outs, err := cs.c.RunJobs(ctx, []cluster.Job{job}, time.Now().Add(30*time.Second))
	var rep parity.Report
	if err == nil {
		if jerr := json.Unmarshal(outs[0].Stdout, &rep); jerr != nil {
			err = fmt.Errorf("reading its report: %w (%s)", jerr, strings.TrimSpace(string(outs[0].Stderr)))
		}
	}
	refused := map[string]error{}
	for _, n := range names {
		switch why, ok := rep.Refused[n]; {
		case err != nil:
			refused[n] = fmt.Errorf("the parity job on node %s: %w", cs.r.checker, err)
		case ok:
			refused[n] = errors.New(why)
		case !slices.Contains(rep.Checked, n):
			refused[n] = fmt.Errorf("the parity job on node %s did not check it", cs.r.checker)
		}
	}
	return nil, refused
}

// parityCmd is the parity job's command: from a load node to the server
// node's address, -allow-remote when that is routable.
func (r *clusterRun) parityCmd(topologies []string, timeout time.Duration) []string {
	cmd := []string{"/usr/local/bin/topobench", "parity", "-at", r.addr.String()}
	if r.remote {
		cmd = append(cmd, "-allow-remote")
	}
	return append(cmd, "-topologies", strings.Join(topologies, ","), "-timeout", timeout.String())
}

// Alive asks each procd whether its program still runs.
func (cs *clusterServers) Alive() error {
	for _, p := range []struct {
		name string
		c    *supervise.Client
	}{{"cmd/hello", cs.hello}, {"nginx", cs.nginx}} {
		if p.c == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := p.c.Status(ctx)
		cancel()
		switch {
		case err != nil:
			return fmt.Errorf("%s on node %s: %w", p.name, cs.node, err)
		case !st.Running:
			return fmt.Errorf("%s on node %s exited: %s", p.name, cs.node, st.Error)
		}
	}
	return nil
}

func (cs *clusterServers) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cs.c.StopServer(ctx, cs.name)
}

// ServerPid and NginxPid: the servers are no processes of this harness.
func (cs *clusterServers) ServerPid() int { return 0 }
func (cs *clusterServers) NginxPid() int  { return 0 }

func (cs *clusterServers) ServerCPU(ctx context.Context) (procstat.Times, error) {
	return agentCPU(ctx, cs.hello)
}

func (cs *clusterServers) NginxCPU(ctx context.Context) (procstat.Times, error) {
	return agentCPU(ctx, cs.nginx)
}

func agentCPU(ctx context.Context, c *supervise.Client) (procstat.Times, error) {
	if c == nil {
		return procstat.Times{}, stack.ErrNoServer
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	t, err := c.CPU(ctx)
	if err != nil {
		return procstat.Times{}, err
	}
	return t.Times(), nil
}

// ClusterLoad is the load on the cluster for plan p, writing beside the
// records in the results directory dir: the built-in engine on the load
// nodes.
func (r *Rig) ClusterLoad(p results.Plan, dir string) loadgen.Generator {
	return loadgen.PerRun(&clusterGen{r: r.cl, plan: p, dir: dir})
}

// clusterGen is the built-in engine on the load nodes: each cell's load
// divided among them (cluster.RunLoad).
type clusterGen struct {
	r    *clusterRun
	plan results.Plan
	dir  string
}

var _ loadgen.Runner = (*clusterGen)(nil)

// spec is a cell's load on the cluster for d; warm makes it the warmup.
func (g *clusterGen) spec(c results.Cell, url string, d time.Duration, warm bool) cluster.LoadSpec {
	sp := cluster.LoadSpec{
		Image: g.r.Image, Nodes: g.r.loaders, URL: url, Allow: g.r.addr.String(), AllowRemote: g.r.remote,
		Connections: c.Connections, Duration: d,
		Timeout: min(g.plan.Timeout+c.Wait, hdr.HighestMicros*time.Microsecond),
		Lead:    g.r.Lead, Tolerance: g.r.Tolerance,
		// The servers' CPU time is read across the whole job: a recorded
		// run primes nothing, as wrk (the built-in engine's own runs).
		NoPrime: !warm,
	}
	if c.Rate > 0 {
		sp.Rate, sp.Arrivals, sp.Seed = c.Rate, load.Poisson, uint64(c.Rep)+1
		if m := g.plan.MaxConnections; m > 0 {
			sp.MaxConnections = max(m, c.Connections)
		}
	}
	sp.Name = g.r.next("load")
	if warm {
		sp.Name = g.r.next("warm")
	}
	return sp
}

func (g *clusterGen) Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error {
	_, err := cluster.RunLoad(ctx, g.r.C, g.spec(c, url, d, true))
	return err
}

// measure runs the cell's load on the load nodes and records the merge
// as the run's figures, each node's part beside it, and the merged and
// per-node histograms beside the record (runs/<key>.hdr, .hgrm,
// .nodeN.hdr). A node that began late fails the run; its figures stay.
func (g *clusterGen) Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	sp := g.spec(c, run.URL, d, false)
	res, err := cluster.RunLoad(ctx, g.r.C, sp)
	if err != nil {
		return nil, err
	}
	if jobs, _, jerr := sp.Jobs(res.StartAt); jerr == nil && len(jobs) > 0 {
		run.Command = jobs[0].Cmd // the first node's; the others differ in share and seed
	}
	f := res.Summary.Figures()
	run.Figures = &f
	var cpu float64
	var invalid []string
	raw := struct {
		Merged load.Summary   `json:"merged"`
		Nodes  []load.Summary `json:"nodes"`
	}{Merged: res.Summary}
	for i, n := range res.Nodes {
		procs := max(sp.Procs, 1)
		nf := results.NodeFigures{
			Node: n.Node.ID, Hostname: n.Node.Hostname,
			Rate: n.Share.Rate, Connections: n.Share.Connections, Seed: n.Share.Seed,
			StartSkew: n.Skew, ClockOffset: n.Clock.Offset, ClockUncertainty: n.Clock.Uncertainty, ClockKnown: n.Clock.Known,
			Slack:   time.Duration(n.Summary.StartSlackMs * float64(time.Millisecond)),
			Figures: n.Summary.Figures(), CPU: n.Summary.CPUSeconds, Procs: procs,
			Invalid: n.Invalid,
		}
		if el := n.Summary.ElapsedSeconds; el > 0 {
			nf.LoadBound = n.Summary.CPUSeconds/el >= results.LoadBoundShare*float64(procs)
		}
		cpu += n.Summary.CPUSeconds
		run.Nodes = append(run.Nodes, nf)
		raw.Nodes = append(raw.Nodes, n.Summary)
		if n.Invalid != "" {
			invalid = append(invalid, fmt.Sprintf("node %s %s", n.Node, n.Invalid))
		}
		var b strings.Builder
		if err := hdr.WriteEncoded(&b, n.Histogram); err == nil {
			if err := results.WriteExtra(g.dir, c, fmt.Sprintf("node%d%s", i, hdr.EncodedExt), []byte(b.String())); err != nil {
				return nil, err
			}
		}
	}
	// The engine reports user and system time together.
	run.CPU = &results.CPU{Load: results.Usage{User: cpu}}
	for _, w := range []struct {
		ext   string
		write func(*strings.Builder) error
	}{
		{hdr.EncodedExt, func(b *strings.Builder) error { return hdr.WriteEncoded(b, res.Histogram) }},
		{hdr.PercentilesExt, func(b *strings.Builder) error { return hdr.WritePercentiles(b, res.Histogram) }},
	} {
		var b strings.Builder
		if err := w.write(&b); err != nil {
			return nil, fmt.Errorf("writing the merged histogram: %w", err)
		}
		if err := results.WriteExtra(g.dir, c, strings.TrimPrefix(w.ext, "."), []byte(b.String())); err != nil {
			return nil, err
		}
	}
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if len(invalid) > 0 {
		return out, fmt.Errorf("invalid run (late start): %s", strings.Join(invalid, "; "))
	}
	return out, nil
}

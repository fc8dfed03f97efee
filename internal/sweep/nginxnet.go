package sweep

import (
	"context"
	"fmt"
	"strings"

	"github.com/topobench/topobench/internal/netstat"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// This file sizes nginx for the plan (its listen backlog, worker
// connections and upstream pools: internal/nginxconf does the sums, the
// stack renders them) and reads what the servers' network namespace
// counted over each measured run (internal/netstat).

const netfs = netstat.FS("/proc")

// nginxSettings is what a stack's nginx was rendered with
// (*stack.Stack); servers elsewhere have none.
type nginxSettings interface {
	NginxSettings() (nginxconf.Params, bool)
}

// recordNginx keeps in env.json how the block's nginx was sized, once
// per keepalive.
func (s *sweep) recordNginx(st servers, k results.Keepalive) error {
	ns, ok := st.(nginxSettings)
	if !ok {
		return nil
	}
	p, ok := ns.NginxSettings()
	if !ok {
		return nil
	}
	name := s.plan.KeepaliveOf(Cell{Keepalive: k}).String()
	if n := s.env.Nginx; n != nil && n.Keepalive[name] == p.Keepalive && n.WorkerProcesses == p.WorkerProcesses && n.WorkerConnections == p.WorkerConnections {
		return nil
	}
	if s.env.Nginx == nil {
		s.env.Nginx = &results.NginxEnv{Keepalive: map[string]int{}}
	}
	n := s.env.Nginx
	n.WorkerProcesses, n.WorkerConnections, n.WorkerRlimitNofile, n.Backlog = p.WorkerProcesses, p.WorkerConnections, p.WorkerRlimitNofile, p.Backlog
	n.Keepalive[name] = p.Keepalive
	if need := p.WorkerNeed(s.plan.NginxConnections()); need > p.WorkerConnections {
		// The clients and their upstream connections fit (Fit refuses
		// less); the idle pools of other vhosts would not, so the stack
		// closes one before another's load starts (usePool).
		fmt.Fprintf(s.Log, "upstream keepalive %s: the pools of %d per vhost do not fit in a worker together (%d connections against %d); nginx reloads between topologies to close the idle one\n",
			name, p.Keepalive, need, p.WorkerConnections)
	}
	return s.writeEnv()
}

// poolUser is a stack that readies nginx's upstream pools for a
// topology's load (*stack.Stack).
type poolUser interface {
	UsePool(ctx context.Context, t topology.Topology) (reloaded bool, err error)
}

// usePool readies the servers for top's load: nginx closes the idle
// upstream pool an earlier topology left when two pools do not fit in a
// worker together (stack.Stack.UsePool).
func (s *sweep) usePool(ctx context.Context, st servers, top string) error {
	pu, ok := st.(poolUser)
	if !ok {
		return nil
	}
	began := s.clock.at()
	reloaded, err := pu.UsePool(ctx, s.res.Topology(top))
	if err != nil {
		return fmt.Errorf("closing nginx's idle upstream pool before %s: %w", top, err)
	}
	if reloaded {
		fmt.Fprintf(s.Progress, "nginx reloaded before %s: the idle upstream pool of the topology before is closed (%s)\n", top, roundDur(s.clock.since(began)))
	}
	return nil
}

// netPid is a process in the servers' network namespace; 0 when the
// servers are not processes of this harness.
func netPid(st servers) int {
	if pid := st.NginxPid(); pid > 0 {
		return pid
	}
	return st.ServerPid()
}

// netSample is the servers' namespace's counters at one moment; ok is
// false when they could not be read.
type netSample struct {
	c  netstat.Counters
	ok bool
}

func (s *sweep) readNet(st servers) netSample {
	pid := netPid(st)
	if pid <= 0 {
		return netSample{}
	}
	c, err := netfs.Read(pid)
	if err != nil {
		fmt.Fprintf(s.Log, "warning: %v\n", err)
		return netSample{}
	}
	return netSample{c, true}
}

// netRecord is what the servers' namespace counted between two samples
// of a cell's measured run; nil when either was not read. ownNS says the
// namespace is the servers' alone (-isolate netns): every connection it
// accepts then came from the load, but those its own processes opened
// to each other (nginx's upstream ones), which it counts both ways.
func netRecord(before, after netSample, countsUpstream, ownNS bool) *results.Net {
	if !before.ok || !after.ok {
		return nil
	}
	d := after.c.Sub(before.c)
	n := &results.Net{ListenOverflows: d.ListenOverflows, SyncookiesSent: d.SyncookiesSent}
	if countsUpstream {
		n.UpstreamOpened = new(d.ActiveOpens)
	}
	if ownNS {
		n.Accepted = new(d.PassiveOpens - d.ActiveOpens)
	}
	return n
}

// countsUpstream reports whether the servers' TCP connects over a run
// are nginx's upstream connections of topology t: in a namespace of the
// run's own, where nginx is the one process that connects, to a server
// on TCP.
func (s *sweep) countsUpstream(t topology.Topology) bool {
	if s.pair == nil || !t.ViaNginx() {
		return false
	}
	network, _, ok := s.layout.BackendAddr(t)
	return ok && network == "tcp"
}

// netNote is what a cell's progress line adds about its connections:
// a flag when a listen queue overflowed, and nginx's upstream churn.
func netNote(run results.Run) string {
	var parts []string
	if n := run.Net; n.Overflowed() {
		parts = append(parts, fmt.Sprintf("LISTEN OVERFLOWS: %d connects turned away, %d SYN cookies in the servers' namespace", n.ListenOverflows, n.SyncookiesSent))
	}
	if v, ok := run.UpstreamPer1k(); ok {
		parts = append(parts, fmt.Sprintf("upstream opened %.1f/1k req", v))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

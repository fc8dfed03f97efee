package sweep

import (
	"context"
	"fmt"
	"strings"

	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// This file records how nginx was sized for the plan (Plan.NginxConnections
// and Plan.KeepaliveSize, internal/nginxconf's sums), readies its upstream
// pools for a topology's load, and checks and notes the keepalive and the
// servers' network counters (rig.NetRecord).

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
		fmt.Fprintf(s.Progress, "nginx reloaded before %s: the idle upstream pool of the topology before is closed (%s)\n", top, progress.Round(s.clock.since(began)))
	}
	return nil
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

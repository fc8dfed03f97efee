package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// servers are a block's running servers as the sweep uses them
// (rig.Servers): a *stack.Stack, the cluster's, a paired block's two
// sides.
type servers = rig.Servers

// startBlock starts the servers of block b and checks parity; nil servers
// and no error when ctx ended meanwhile. The servers serve the topologies
// of b's cells, or every topology of the plan (a budget's
// later steps hold a few cells, and any may follow).
func (s *sweep) startBlock(ctx context.Context, b Block, every bool) (servers, error) {
	began := time.Now()
	defer func() { s.clock.block.add(time.Since(began)) }()
	tops := s.res.TopologiesOf(b.Cells)
	if every {
		tops = s.res.TopologiesOf(s.plan.Cells())
	}
	st, err := s.rig.StartServers(ctx, stack.Config{
		Dir: s.Dir, Layout: target.LayoutFor(s.layout, b.Target), Topologies: tops, GOMAXPROCS: b.GOMAXPROCS,
		HelloBin: s.HelloBin, NginxBin: s.NginxBin, CPUs: s.res.ServerCPUs,
		HelloAgent: s.HelloAgent, NginxAgent: s.NginxAgent,
		NetNS: s.rig.ServerNS(), ClientNetNS: s.rig.ClientNS(),
		Target: b.Target, Program: s.programs[b.Target], PoolThreads: target.DefaultPoolThreads,
		Path:        s.plan.Path,
		Connections: s.plan.NginxConnections(), UpstreamKeepalive: s.plan.KeepaliveSize(b.Keepalive),
		TLS: s.tls,
	})
	if err != nil {
		if ctx.Err() != nil {
			s.out.Interrupted = true
			return nil, nil
		}
		return nil, err
	}
	if err := s.recordNginx(st, b.Keepalive); err != nil {
		s.stopBlock(st)
		return nil, err
	}
	if wc, ok := st.(interface{ WorkCalibration() float64 }); ok && s.env.WorkCalibration == 0 {
		if s.env.WorkCalibration = wc.WorkCalibration(); s.env.WorkCalibration > 0 {
			if err := s.writeEnv(); err != nil {
				s.stopBlock(st)
				return nil, err
			}
		}
	}
	_, refused := st.Parity(ctx, 5*time.Second)
	for _, t := range tops {
		if err := refused[t.Name]; err != nil {
			fmt.Fprintf(s.Log, "refusing to measure %s: %v\n", t.Name, err)
		}
	}
	s.refused = refused
	fmt.Fprintf(s.Progress, "%sGOMAXPROCS=%d: %s; parity: %s\n", targetPrefix(b.Target), b.GOMAXPROCS, st, parityLineFor(b.Target, s.plan.RequestPath(), tops, refused))
	return st, nil
}

func (s *sweep) stopBlock(st servers) {
	began := time.Now()
	s.endSessions()
	s.rig.Stop(st)
	s.clock.block.add(time.Since(began))
}

func parityLine(tops []topology.Topology, refused map[string]error) string {
	if len(refused) == 0 {
		return fmt.Sprintf("%d topologies answer identically (141-byte header block, same body)", len(tops))
	}
	var names []string
	for _, t := range tops {
		if refused[t.Name] != nil {
			names = append(names, t.Name)
		}
	}
	return fmt.Sprintf("REFUSED %s (see the log above); measuring the other %d", strings.Join(names, ", "), len(tops)-len(names))
}

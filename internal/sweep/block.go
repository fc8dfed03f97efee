package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// servers are a block's running servers as the sweep uses them: a
// *stack.Stack.
type servers interface {
	fmt.Stringer
	// Parity checks every topology's answer; refused says why each
	// failing one must not be measured.
	Parity(ctx context.Context, timeout time.Duration) (rs []parity.Result, refused map[string]error)
	// Alive reports a server that exited, with its stderr tail.
	Alive() error
	Stop() error
	// ServerPid and NginxPid are processes of this harness to wait for
	// idle; 0 for none.
	ServerPid() int
	NginxPid() int
	cpuSource
}

func startStack(ctx context.Context, cfg stack.Config) (servers, error) {
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}

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
	acct := s.newServersGroup()
	st, err := s.start(ctx, stack.Config{
		Dir: s.Dir, Layout: s.layout, Topologies: tops, GOMAXPROCS: b.GOMAXPROCS,
		HelloBin: s.HelloBin, NginxBin: s.NginxBin, CPUs: s.res.ServerCPUs,
		HelloAgent: s.HelloAgent, NginxAgent: s.NginxAgent,
		NetNS: s.serverNS(), ClientNetNS: s.clientNS(),
		Target: b.Target, Program: s.programs[b.Target], PoolThreads: target.DefaultPoolThreads,
		Path:        s.plan.Path,
		Connections: s.plan.NginxConnections(), UpstreamKeepalive: s.plan.KeepaliveSize(b.Keepalive),
		Account: acct, NginxPart: s.parts[0], ServerPart: s.parts[1],
	})
	if err != nil {
		s.removeServersGroup()
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
	if err := st.Stop(); err != nil {
		s.warn("%v", err)
	}
	s.removeServersGroup()
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

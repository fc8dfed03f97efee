package sweep

import (
	"context"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/rig"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// Standalone's own process, a paired block's second side: rig.TwoSides.

// side is the servers that serve pool: standalone's own process for
// standalone's pool, where it has one, else the block's (the topology
// side).
func (pb *pairedBlock) side(pool string) servers {
	if d, ok := pb.st.(*rig.TwoSides); ok && base(pool) == pb.alone {
		return d.Standalone
	}
	return pb.st
}

// urlOf is where pool's load goes, for cell c: standalone's own pool to
// the standalone side, where it has one.
func (s *sweep) urlOf(pb *pairedBlock, pool string, c Cell) string {
	if d, ok := pb.st.(*rig.TwoSides); ok && base(pool) == pb.alone {
		url := withPath(d.Layout.URL(s.res.Topology(pb.alone)), s.plan.Path)
		return loadgen.WithSchedule(url, c.Schedule)
	}
	return s.url(c)
}

// startSides starts the standalone side of block b, whose topology side
// st runs already (rig.Rig.StartSides); weighted gives each side a group
// of equal CPU weight (the duet). On an error both sides are stopped.
func (s *sweep) startSides(ctx context.Context, b Block, st servers, weighted bool) (*rig.TwoSides, error) {
	return s.rig.StartSides(ctx, stack.Config{
		Layout: s.layout, Topologies: []topology.Topology{s.res.Topology(s.plan.Baseline())},
		GOMAXPROCS: b.GOMAXPROCS, HelloBin: s.HelloBin, CPUs: s.res.ServerCPUs,
		Target: b.Target, Program: s.programs[b.Target], PoolThreads: target.DefaultPoolThreads,
		Path: s.plan.Path, Connections: s.plan.NginxConnections(), TLS: s.tls,
	}, st, weighted, s.stopBlock)
}

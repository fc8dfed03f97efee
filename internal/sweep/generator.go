package sweep

import (
	"context"
	"fmt"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// session is the current block's session of the generator named, begun
// when a cell first needs it; keep as loadgen.Generator.Begin.
func (s *sweep) session(ctx context.Context, name results.Generator, keep bool) (loadgen.Session, error) {
	// A kept session's pools are closed loop: a run open loop beside them
	// (a paired block's latency phase) takes a per-run session of its own.
	key := name
	if !keep {
		key += perRun
	}
	if sess, ok := s.sessions[key]; ok {
		return sess, nil
	}
	g, ok := s.generators[name]
	if !ok {
		return nil, fmt.Errorf("the %s load is not prepared", name)
	}
	sess, err := g.Begin(ctx, keep)
	if err != nil {
		return nil, fmt.Errorf("starting the %s load session: %w", name, err)
	}
	if s.sessions == nil {
		s.sessions = map[results.Generator]loadgen.Session{}
	}
	s.sessions[key] = sess
	return sess, nil
}

// perRun marks a per-run session's key in sweep.sessions.
const perRun = " per run"

// endSessions ends the block's sessions, before its servers stop.
func (s *sweep) endSessions() {
	for name, sess := range s.sessions {
		if err := sess.End(); err != nil {
			s.warn("ending the %s load session: %v", name, err)
		}
		delete(s.sessions, name)
	}
}

// poolName names a cell's pool: its key without the repetition, so that
// every repetition of a cell loads the same pool.
func poolName(c Cell) string {
	c.Rep = 0
	return c.Key()
}

// newGenerators prepares every generator the plan names.
func (s *sweep) newGenerators() error {
	s.generators = map[results.Generator]loadgen.Generator{}
	if s.rig.OnCluster() {
		// plan.Check allowed the built-in engine only.
		s.generators[results.LoadBuiltin] = s.rig.ClusterLoad(s.plan.Plan, s.Dir)
		return nil
	}
	where := loadgen.InNetns(s.rig.ClientNS(), s.rig.LoadTarget())
	cg := loadgen.InCgroup(s.LoadCgroup)
	for _, l := range s.plan.Generators() {
		switch l {
		case results.LoadWrk:
			script, err := wrk.WriteScript(s.Dir)
			if err != nil {
				return err
			}
			s.generators[l] = loadgen.NewWrk(s.plan.Plan, s.WrkBin, script, s.Dir, where, cg, loadgen.PinnedTo(s.res.LoadCPUs))
		case results.LoadH2load:
			s.generators[l] = loadgen.NewH2load(s.plan.Plan, "", where, cg, loadgen.PinnedTo(s.res.LoadCPUs))
		case results.LoadStime:
			s.generators[l] = loadgen.NewStime(s.plan.Plan, "", where, cg, loadgen.PinnedTo(s.res.LoadCPUs))
		case results.LoadBuiltin:
			opts := []loadgen.Option{where, cg, loadgen.WithBin(s.LoadBin), loadgen.Counting(s.rig.ServerCounters)}
			if s.tls != nil {
				// The engine trusts the sweep's certificate alone.
				opts = append(opts, loadgen.WithTLS(load.TLS{CA: s.tls.Cert, Settings: s.tls.Settings}))
			}
			g, err := loadgen.NewBuiltin(s.plan.Plan, s.Dir, opts...)
			if err != nil {
				return err
			}
			s.generators[l] = g
		default:
			return plan.Errorf(plan.Load, "%s cannot run here yet", l)
		}
	}
	return nil
}

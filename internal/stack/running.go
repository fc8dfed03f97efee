package stack

import (
	"context"
	"errors"
	"fmt"

	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/target"
)

// A running target (target.Running) is the user's service: the stack
// checks it answers and nginx proxies to it (cfg.Layout holds its address,
// target.LayoutFor), but starts, stops and moves none of its processes.

var _ Server = (*target.Service)(nil)

// attachRunning stands the running service behind the topologies.
func (s *Stack) attachRunning(ctx context.Context, cfg Config) error {
	srv, err := cfg.Program.Attach(ctx, cfg.TargetConfig())
	if err != nil {
		return err
	}
	s.backend = srv
	return nil
}

// isRunning reports whether cfg's target is a running service.
func (cfg Config) isRunning() bool {
	return cfg.Program != nil && cfg.Program.Target.Runtime == target.Running
}

// notOurs reports a server whose processes the stack must leave where
// they are: a running service, in the control groups of its own owner.
func notOurs(srv Server) bool {
	o, ok := srv.(interface{ Owned() bool })
	return ok && !o.Owned()
}

// runningCPU is a running service's CPU time; none found is no server to
// measure (its Describe, in the block's line, says why once).
func runningCPU(ctx context.Context, srv *target.Service) (procstat.Times, error) {
	t, err := srv.CPU(ctx)
	if errors.Is(err, target.ErrNoProcess) {
		return t, fmt.Errorf("%s: %w", srv.Name(), ErrNoServer)
	}
	return t, err
}

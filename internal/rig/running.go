package rig

import (
	"fmt"

	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
)

// runningService reports whether a block's backend is a service the user
// already runs (target.Running), which the servers' groups must not take.
func runningService(cfg stack.Config) bool {
	return cfg.Program != nil && cfg.Program.Target.Runtime == target.Running &&
		stack.NeedsHello(cfg.Topologies)
}

// noteRunning says once where a running service's CPU time comes from.
func (r *Rig) noteRunning(cfg stack.Config) {
	if r.notedRunning {
		return
	}
	r.notedRunning = true
	fmt.Fprintf(r.Log, "note: %s is not the sweep's: its CPU time and nginx's come from /proc's 10 ms ticks of the process that listens (and its children), not a control group\n", cfg.Target)
}

package sweep

import (
	"fmt"
	"slices"

	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
)

// chooseIsolation settles -isolate before anything is created: network
// namespaces where the harness may create them, loopback elsewhere, with
// agents (the servers run in other containers), and for a resumed sweep
// begun before isolation was recorded.
func (s *sweep) chooseIsolation() error {
	iso := s.plan.Isolation
	can, why := netns.Possible()
	switch {
	case iso == "" && s.Resume:
		iso = results.IsolateNone // recorded before isolation existed: loopback
	case iso == "" && (s.HelloAgent != "" || slices.ContainsFunc(s.plan.TargetList(), target.IsRunning)):
		iso = results.IsolateNone
	case iso == "" && !can:
		iso = results.IsolateNone
		fmt.Fprintf(s.Log, "note: -isolate none: %s; the load generator and the servers share loopback\n", why)
	case iso == "":
		iso = results.IsolateNetns
	case iso == results.IsolateNetns && !can:
		return plan.Errorf(plan.Isolate, "netns: %s (-isolate none shares loopback)", why)
	}
	if iso == results.IsolateNone && s.plan.LinkDelay > 0 {
		return plan.Errorf(plan.LinkDelay, "needs -isolate netns, and this run shares loopback (-isolate none)")
	}
	s.plan.Isolation = iso
	s.env.Plan.Isolation = iso
	return nil
}

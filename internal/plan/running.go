package plan

import (
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
)

// checkRunning refuses what a running target (listen:..., a service the
// user already runs) cannot take: it is one process the sweep neither
// starts nor moves, in the host's network namespace, with processors of
// its own, on CPUs of its own.
func (p Plan) checkRunning() error {
	i := slices.IndexFunc(p.TargetList(), target.IsRunning)
	if i < 0 {
		return nil
	}
	name := p.TargetList()[i]
	switch {
	case p.Duet():
		return Errorf(Design, "duet: %s is one running process, and a duet's two sides each need a process of their own in groups of equal CPU weight; use -design paired (or -preset paired)", name)
	case p.Paired != nil && p.Paired.Own:
		return Errorf(StandaloneProcess, "own: %s is one running process; standalone cannot have another (give -standalone-process shared)", name)
	case p.Isolation == results.IsolateNetns:
		return Errorf(Isolate, "netns: %s listens in this network namespace, which the load must reach; use -isolate none", name)
	case p.PinServer != "":
		return Errorf(PinServer, "%s is not the sweep's to pin to CPUs; give -cpus none (or pin the load alone with -pin-load)", name)
	case len(p.GOMAXPROCS) > 1:
		return Errorf(GOMAXPROCS, "%s runs with processors of its own; give one value, which only labels its cells", name)
	}
	return nil
}

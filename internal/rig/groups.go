package rig

import (
	"fmt"
	"os"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/topology"
)

// The servers' control group. Each start of a block's servers gets an
// accounting group of its own (cgroup.NewAccount), which every server
// process joins (stack.Config.Account): its counter is the servers' CPU
// time in scheduler nanoseconds, where /proc gives 10 ms ticks per
// process. A session window reads it at the measured window's start and
// end (load's counter files); the harness samples it around any other
// run. The group is removed when the servers stop, on Ctrl-C too; one
// left by a killed run is removed at the next run's start. Where the
// kernel cannot (no cpuacct nor cgroup2, not root), or the servers run
// elsewhere, the CPU figures come from /proc as before, and the run says
// why once.

// serversGroupPrefix names a run's groups: the prefix and the harness's
// pid (cgroup.RemoveStale).
const serversGroupPrefix = "topobench-servers-"

// PrepareAccounting finds where the servers' groups go, removing those a
// killed run left; there are none, and the reason is printed, where the
// kernel cannot. Nothing for servers elsewhere (agents, a cluster):
// their agents read their CPU.
func (r *Rig) PrepareAccounting(elsewhere bool) {
	if elsewhere {
		return
	}
	why := ""
	switch h, err := cgroup.FindAccounting(); {
	case err != nil:
		why = err.Error()
	case os.Geteuid() != 0:
		why = "creating a control group needs root"
	default:
		for _, prefix := range []string{serversGroupPrefix, standaloneGroupPrefix} {
			if err := cgroup.RemoveStale(h, prefix); err != nil {
				r.Warn("removing the servers' groups a killed run left: %v", err)
			}
		}
		r.acct = &h
		return
	}
	fmt.Fprintf(r.Log, "note: the servers' CPU time comes from /proc's 10 ms ticks, not their control group: %s\n", why)
}

// newServersGroup creates the accounting group of one start of the
// servers; nil (and a warning) when it cannot.
func (r *Rig) newServersGroup() *cgroup.Group {
	if r.acct == nil {
		return nil
	}
	g, err := cgroup.NewAccount(*r.acct, fmt.Sprint(serversGroupPrefix, os.Getpid()))
	if err != nil {
		r.Warn("the servers' CPU time comes from /proc this block: %v", err)
		return nil
	}
	r.group = g
	r.parts = [2]*cgroup.Group{}
	if r.acct.AccountsOnly() {
		// nginx's time and the backend's apart, without changing how
		// the scheduler shares the CPU between them.
		ng, err := g.NewPart("nginx")
		if err == nil {
			var srv *cgroup.Group
			if srv, err = g.NewPart("server"); err == nil {
				r.parts = [2]*cgroup.Group{ng, srv}
			}
		}
		if err != nil {
			r.Warn("nginx's and the backend's CPU time come from /proc this block: %v", err)
		}
	}
	return g
}

// removeServersGroup removes the current block's groups once its servers
// have stopped.
func (r *Rig) removeServersGroup() {
	r.standaloneCounters = loadgen.Counters{}
	r.parts = [2]*cgroup.Group{}
	if r.group == nil {
		return
	}
	if err := r.group.Remove(5 * time.Second); err != nil {
		r.Warn("%v", err)
	}
	r.group = nil
}

// ServerCounters are the counter files a load session reads around each
// measured window of pool: those of the servers that serve it
// (standalone's own, where it has one).
func (r *Rig) ServerCounters(pool string) loadgen.Counters {
	if r == nil {
		return loadgen.Counters{}
	}
	if topology.IsBaseline(pool) && r.standaloneCounters.Total != "" {
		return r.standaloneCounters
	}
	return r.topologyCounters()
}

// topologyCounters are the counter files of the block's servers (the
// topology side of a duet).
func (r *Rig) topologyCounters() loadgen.Counters {
	if r.group == nil {
		return loadgen.Counters{}
	}
	c := loadgen.Counters{Total: r.counterFile(r.group)}
	if r.parts[0] != nil {
		c.Nginx = r.partFiles(r.parts[0])
		c.Server = r.partFiles(r.parts[1])
	}
	return c
}

// aloneCounters are the counter files of a group whose only server is
// the backend (standalone's own side): every part of its time is the
// backend's.
func (r *Rig) aloneCounters(g *cgroup.Group) loadgen.Counters {
	c := loadgen.Counters{Total: r.counterFile(g)}
	if g != nil && r.acct.AccountsOnly() {
		c.Server = r.partFiles(g)
	}
	return c
}

// partFiles are a part's counters as the load session reads them: its
// total, user and system time.
func (r *Rig) partFiles(g *cgroup.Group) [3]string {
	return [3]string{r.counterFile(g), r.counterPath(g.UserFile()), r.counterPath(g.SystemFile())}
}

// counterFile is group g's CPU time counter as the load session reads
// it (counterPath); empty for no group.
func (r *Rig) counterFile(g *cgroup.Group) string {
	if g == nil {
		return ""
	}
	return r.counterPath(g.UsageFile())
}

// counterPath is a counter file as the load session reads it: through
// the harness's own root when the session runs in a network namespace
// ("ip netns exec" mounts a /sys of its own, without the cgroup mounts).
func (r *Rig) counterPath(path string) string {
	if path != "" && r.ClientNS() != "" {
		path = fmt.Sprintf("/proc/%d/root%s", os.Getpid(), path)
	}
	return path
}

// topologyWeight is the weight group of one start of the topology side's
// servers under -design duet (the sweep's duet): the accounting group itself where
// the cpu controller shares its hierarchy, else a group of its own.
func (r *Rig) topologyWeight() (*cgroup.Group, error) {
	if r.group != nil && r.acct.Root == r.weights.Root {
		return r.group, r.group.SetDefaultWeight()
	}
	g, err := cgroup.NewWeighted(*r.weights, fmt.Sprint(serversGroupPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("the topology side's weight group: %w", err)
	}
	return g, nil
}

// serverCPUs is how many CPUs the servers could use: their pinned set's,
// else this process's; 0 when unknown.
func serverCPUs(pinned cpuset.CPUSet) int {
	if n := pinned.Len(); n > 0 {
		return n
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return 0
	}
	return allowed.Len()
}

// PrepareWeights finds the cpu controller's hierarchy for a duet's two
// sides, removing the groups a killed run left there; a duet cannot run
// without it, nor without root.
func (r *Rig) PrepareWeights() error {
	h, err := cgroup.Find()
	switch {
	case err != nil:
		return plan.Errorf(plan.Design, "duet: each side's servers need a control group of equal CPU weight: %v (-design paired needs none: make compare-paired)", err)
	case os.Geteuid() != 0:
		return plan.Errorf(plan.Design, "duet: each side's servers need a control group of equal CPU weight, which needs root (-design paired does not: make compare-paired)")
	}
	if r.acct == nil || r.acct.Root != h.Root {
		for _, prefix := range []string{serversGroupPrefix, standaloneGroupPrefix} {
			if err := cgroup.RemoveStale(h, prefix); err != nil {
				r.Warn("removing the servers' groups a killed run left: %v", err)
			}
		}
	}
	r.weights = &h
	return nil
}

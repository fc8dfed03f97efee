package sweep

import (
	"fmt"
	"os"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/loadgen"
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

// prepareAccounting finds where the servers' groups go, removing those a
// killed run left; s.acct stays nil, and the reason is printed, where
// there is none.
func (s *sweep) prepareAccounting() {
	why := ""
	switch h, err := cgroup.FindAccounting(); {
	case s.HelloAgent != "" || s.Cluster != nil:
		return // the servers are elsewhere: their agents read their CPU
	case err != nil:
		why = err.Error()
	case os.Geteuid() != 0:
		why = "creating a control group needs root"
	default:
		for _, prefix := range []string{serversGroupPrefix, standaloneGroupPrefix} {
			if err := cgroup.RemoveStale(h, prefix); err != nil {
				s.warn("removing the servers' groups a killed run left: %v", err)
			}
		}
		s.acct = &h
		return
	}
	fmt.Fprintf(s.Log, "note: the servers' CPU time comes from /proc's 10 ms ticks, not their control group: %s\n", why)
}

// newServersGroup creates the accounting group of one start of the
// servers; nil (and a warning) when it cannot.
func (s *sweep) newServersGroup() *cgroup.Group {
	if s.acct == nil {
		return nil
	}
	g, err := cgroup.NewAccount(*s.acct, fmt.Sprint(serversGroupPrefix, os.Getpid()))
	if err != nil {
		s.warn("the servers' CPU time comes from /proc this block: %v", err)
		return nil
	}
	s.group = g
	s.parts = [2]*cgroup.Group{}
	if s.acct.AccountsOnly() {
		// nginx's time and the backend's apart, without changing how
		// the scheduler shares the CPU between them.
		ng, err := g.NewPart("nginx")
		if err == nil {
			var srv *cgroup.Group
			if srv, err = g.NewPart("server"); err == nil {
				s.parts = [2]*cgroup.Group{ng, srv}
			}
		}
		if err != nil {
			s.warn("nginx's and the backend's CPU time come from /proc this block: %v", err)
		}
	}
	return g
}

// removeServersGroup removes the current block's groups once its servers
// have stopped.
func (s *sweep) removeServersGroup() {
	s.standaloneCounters = loadgen.Counters{}
	s.parts = [2]*cgroup.Group{}
	if s.group == nil {
		return
	}
	if err := s.group.Remove(5 * time.Second); err != nil {
		s.warn("%v", err)
	}
	s.group = nil
}

// serverCounters are the counter files a load session reads around each
// measured window of pool: those of the servers that serve it
// (standalone's own, where it has one).
func (s *sweep) serverCounters(pool string) loadgen.Counters {
	if pool == analysis.Standalone && s.standaloneCounters.Total != "" {
		return s.standaloneCounters
	}
	return s.topologyCounters()
}

// topologyCounters are the counter files of the block's servers (the
// topology side of a duet).
func (s *sweep) topologyCounters() loadgen.Counters {
	if s.group == nil {
		return loadgen.Counters{}
	}
	c := loadgen.Counters{Total: s.counterFile(s.group)}
	if s.parts[0] != nil {
		c.Nginx = s.partFiles(s.parts[0])
		c.Server = s.partFiles(s.parts[1])
	}
	return c
}

// aloneCounters are the counter files of a group whose only server is
// the backend (standalone's own side): every part of its time is the
// backend's.
func (s *sweep) aloneCounters(g *cgroup.Group) loadgen.Counters {
	c := loadgen.Counters{Total: s.counterFile(g)}
	if g != nil && s.acct.AccountsOnly() {
		c.Server = s.partFiles(g)
	}
	return c
}

// partFiles are a part's counters as the load session reads them: its
// total, user and system time.
func (s *sweep) partFiles(g *cgroup.Group) [3]string {
	return [3]string{s.counterFile(g), s.counterPath(g.UserFile()), s.counterPath(g.SystemFile())}
}

// counterFile is group g's CPU time counter as the load session reads
// it (counterPath); empty for no group.
func (s *sweep) counterFile(g *cgroup.Group) string {
	if g == nil {
		return ""
	}
	return s.counterPath(g.UsageFile())
}

// counterPath is a counter file as the load session reads it: through
// the harness's own root when the session runs in a network namespace
// ("ip netns exec" mounts a /sys of its own, without the cgroup mounts).
func (s *sweep) counterPath(path string) string {
	if path != "" && s.clientNS() != "" {
		path = fmt.Sprintf("/proc/%d/root%s", os.Getpid(), path)
	}
	return path
}

// topologyWeight is the weight group of one start of the topology side's
// servers under -design duet (duet.go): the accounting group itself where
// the cpu controller shares its hierarchy, else a group of its own.
func (s *sweep) topologyWeight() (*cgroup.Group, error) {
	if s.group != nil && s.acct.Root == s.weights.Root {
		return s.group, s.group.SetDefaultWeight()
	}
	g, err := cgroup.NewWeighted(*s.weights, fmt.Sprint(serversGroupPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("the topology side's weight group: %w", err)
	}
	return g, nil
}

// serverCPUs is how many CPUs the servers could use: their pinned set's,
// else this process's; 0 when unknown.
func (s *sweep) serverCPUs() int {
	if n := s.res.ServerCPUs.Len(); n > 0 {
		return n
	}
	allowed, err := cpuset.Allowed()
	if err != nil {
		return 0
	}
	return allowed.Len()
}

// prepareWeights finds the cpu controller's hierarchy for a duet's two
// sides, removing the groups a killed run left there; a duet cannot run
// without it. Standalone's own process is refused too where the servers
// are not started here (sides.go starts it here).
func (s *sweep) prepareWeights() error {
	if s.plan.Paired == nil {
		return nil
	}
	if s.plan.Paired.Own && !s.plan.Paired.Duet && (s.HelloAgent != "" || s.Cluster != nil) {
		return planErr("-standalone-process own: starts standalone's server here, not through agents or a cluster; give -standalone-process shared")
	}
	if !s.plan.Paired.Duet {
		return nil
	}
	h, err := cgroup.Find()
	switch {
	case s.HelloAgent != "" || s.Cluster != nil:
		return planErr("-design duet: runs its two sides' servers here, not through agents or a cluster")
	case err != nil:
		return planErr("-design duet: each side's servers need a control group of equal CPU weight: %v (-design paired needs none: make compare-paired)", err)
	case os.Geteuid() != 0:
		return planErr("-design duet: each side's servers need a control group of equal CPU weight, which needs root (-design paired does not: make compare-paired)")
	}
	if s.acct == nil || s.acct.Root != h.Root {
		for _, prefix := range []string{serversGroupPrefix, standaloneGroupPrefix} {
			if err := cgroup.RemoveStale(h, prefix); err != nil {
				s.warn("removing the servers' groups a killed run left: %v", err)
			}
		}
	}
	s.weights = &h
	return nil
}

package sweep

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/load"
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
	return g
}

// removeServersGroup removes the current block's groups once its servers
// have stopped.
func (s *sweep) removeServersGroup() {
	s.standaloneCounter = ""
	if s.group == nil {
		return
	}
	if err := s.group.Remove(5 * time.Second); err != nil {
		s.warn("%v", err)
	}
	s.group = nil
}

// serverCounters are the counter files a load session reads around each
// measured window of pool: the CPU time of the group of the servers that
// serve it (standalone's own, where it has one).
func (s *sweep) serverCounters(pool string) []string {
	if pool == analysis.Standalone && s.standaloneCounter != "" {
		return []string{s.standaloneCounter}
	}
	if s.group == nil {
		return nil
	}
	return []string{s.counterFile(s.group)}
}

// counterFile is group g's CPU time counter as the load session reads
// it: through the harness's own root when the session runs in a network
// namespace ("ip netns exec" mounts a /sys of its own, without the
// cgroup mounts); empty for no group.
func (s *sweep) counterFile(g *cgroup.Group) string {
	if g == nil {
		return ""
	}
	path := g.UsageFile()
	if s.clientNS() != "" {
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

// windowServersCPU is the servers' CPU time over a session window from
// the reading of their group's counter file path.
func windowServersCPU(rs []load.CounterReading, path string) (time.Duration, error) {
	for _, r := range rs {
		if r.Path != path {
			continue
		}
		if r.Error != "" {
			return 0, fmt.Errorf("reading %s: %s", path, r.Error)
		}
		start, err := cgroup.ParseUsage(strings.NewReader(r.Start))
		if err != nil {
			return 0, fmt.Errorf("%s at the window's start: %w", path, err)
		}
		end, err := cgroup.ParseUsage(strings.NewReader(r.End))
		if err != nil {
			return 0, fmt.Errorf("%s at the window's end: %w", path, err)
		}
		if end < start {
			return 0, fmt.Errorf("%s went back from %d to %d ns", path, start, end)
		}
		return end - start, nil
	}
	return 0, fmt.Errorf("the load session did not read %s", path)
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

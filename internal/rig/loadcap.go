package rig

import (
	"math"
	"os"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
)

// The load-bound rule. A run is load-bound (results.Run.LoadBound) when
// its load generator used results.LoadBoundShare (90%) or more of the CPU
// it could use over the measured window: then it, not the servers, may
// have set the pace. What it could use is the fewer of
//
//   - the CPUs it was pinned to (-cpus, -pin-load), and
//   - the CPU quota of the control group it ran in (cgroup v2 cpu.max or
//     v1 cpu.cfs_quota_us, the tightest on the way to the root):
//     Config.LoadCgroup when the sweep placed it in one, else the
//     harness's own group, which the generator inherits (a container's
//     --cpus, systemd's CPUQuota=).
//
// A generator throttled by its quota uses all of it, so the share of the
// quota is what says it ran out; a share of its CPU list would read 20%
// for a generator held to 0.2 of one CPU. Neither bound known (not
// pinned, no quota), the share is not computed.

// loadShare is the load generator's share of what it could use: cpuSec of
// CPU time over window, pinned CPUs (0: not pinned), under a quota of
// quota CPUs (0: none). quotaBound is the quota when it was the bound.
func loadShare(cpuSec float64, window time.Duration, pinned int, quota float64) (share, quotaBound float64) {
	capacity := float64(pinned)
	if quota > 0 && (pinned == 0 || quota < capacity) {
		capacity, quotaBound = quota, quota
	}
	if capacity <= 0 || window <= 0 {
		return 0, 0
	}
	return math.Round(1000*cpuSec/(window.Seconds()*capacity)) / 1000, quotaBound
}

// LoadQuota is the CPU quota the load generator runs under, in CPUs; 0
// for none or unknown. On a cluster the load runs on other machines.
func (r *Rig) LoadQuota() float64 {
	if r.cl != nil {
		return 0
	}
	if g := r.LoadCgroup; g != nil {
		// Created at the hierarchy's root: no ancestor's quota applies.
		return g.CPUs
	}
	h, err := cgroup.Find()
	if err != nil {
		return 0
	}
	cpus, ok, err := cgroup.Limit(h, os.Getpid())
	if err != nil || !ok {
		return 0
	}
	return cpus
}

package analysis

import (
	_ "embed"
	"fmt"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// isolation says how the load generator was kept apart from the servers:
// the network (two namespaces, or one loopback) and the CPUs. The CPU
// sets come from the plan, else from the runs (-cpus auto records them
// per run).
func isolation(p results.Plan, runs []results.Run) string {
	load, server := CPUSets(p, runs)
	cpus := CPUSplit(p, runs)
	switch p.Isolation {
	case results.IsolateNetns:
		link := "a veth pair"
		if p.LinkDelay > 0 {
			link += " delaying each packet " + p.LinkDelay.String() + " on each end (tc netem)"
		}
		return "netns: two network namespaces joined by " + link + ", the load generator in one and nginx and the servers in the other (nginx's upstream hop on that namespace's loopback); " + cpus
	case results.IsolateNone:
		if load == "" && server == "" {
			return "none: one loopback, as in 2013; the load generator, nginx and the servers share every CPU"
		}
		return "none: one loopback, as in 2013; " + cpus
	}
	// Records from before isolation was recorded.
	return "not recorded (loopback); " + pinning(load, server)
}

// CPUSets are the load generator's and the servers' CPU lists: from the
// plan, else from the runs (-cpus auto records them per run); empty when
// unpinned.
func CPUSets(p results.Plan, runs []results.Run) (load, server string) {
	load, server = p.PinLoad, p.PinServer
	for _, r := range runs {
		if load == "" && server == "" {
			load, server = r.LoadCPUs, r.ServerCPUs
		}
	}
	return load, server
}

// serverCPUs is how many CPUs the servers could run on: their pinned set's,
// else the machine's (0 when unknown).
func serverCPUs(env results.Env, runs []results.Run) int {
	_, server := CPUSets(env.Plan, runs)
	if set, err := cpuset.Parse(server); err == nil && !set.IsEmpty() {
		return set.Len()
	}
	return env.CPUs
}

func orUnpinned(cpus string) string {
	if cpus == "" {
		return "every CPU (unpinned)"
	}
	return "CPUs " + cpus
}

func pinning(load, server string) string {
	if load == "" && server == "" {
		return "none: wrk, nginx and Go share every CPU"
	}
	or := func(s string) string {
		if s == "" {
			return "unpinned"
		}
		return "CPUs " + s
	}
	return fmt.Sprintf("wrk on %s; nginx and Go on %s", or(load), or(server))
}

// MinRatioRuns is the fewest runs of each cell with a finite ratio
// interval at 95%, as stats.RatioOf computes it.
func MinRatioRuns() int { return MinRatioRunsAt(stats.Confidence) }

// MinRatioRunsAt is MinRatioRuns at another level (Summary.RatioLevel).
func MinRatioRunsAt(level float64) int { return stats.MinRatioSamples(level) }

// MinRounds is the fewest samples with a finite median interval at 95%,
// as stats.Summarize (benchstat) computes it.
func MinRounds() int {
	for n := 1; n < 100; n++ {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(i + 1)
		}
		if intervalOf(xs).Known() {
			return n
		}
	}
	return 100
}

// CPUSplit says where the load generator and the servers ran: "load
// generator on CPUs 0, servers on CPUs 1".
func CPUSplit(p results.Plan, runs []results.Run) string {
	load, server := CPUSets(p, runs)
	return "load generator on " + orUnpinned(load) + ", servers on " + orUnpinned(server)
}

package loadgen

import (
	"math"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
)

// joiner is g for proc.Options; nil (not a nil pointer in an interface)
// when there is none.
func joiner(g *cgroup.Group) proc.Joiner {
	if g == nil {
		return nil
	}
	return g
}

// meterThrottling reads the group's throttling counters before a run;
// the function it returns records in the run the share of the quota's
// periods in which the kernel throttled the group since. Nothing for no
// group, or counters that cannot be read.
func meterThrottling(g *cgroup.Group) func(run *results.Run) {
	if g == nil {
		return func(*results.Run) {}
	}
	before, err := g.Stat()
	return func(run *results.Run) {
		after, err2 := g.Stat()
		if d := after.Sub(before); err == nil && err2 == nil && d.Periods > 0 {
			run.LoadThrottled = math.Round(1000*float64(d.Throttled)/float64(d.Periods)) / 1000
		}
	}
}

// usage converts CPU times to a record's seconds.
func usage(t procstat.Times) results.Usage {
	return results.Usage{User: t.User.Seconds(), System: t.System.Seconds()}
}

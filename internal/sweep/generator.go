package sweep

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// A generator puts the load of a cell on a URL. Each runs as a child
// process, so it can be pinned, placed in a network namespace and have its
// CPU time read like the servers'.
type generator interface {
	// warm runs unrecorded load for the plan's warmup.
	warm(ctx context.Context, c Cell, url string) error
	// measure runs the cell's measured load against run.URL and records
	// the command and the result in run; raw is the generator's output.
	measure(ctx context.Context, c Cell, run *results.Run) (raw []byte, err error)
}

// newGenerators prepares every generator the plan names.
func (s *sweep) newGenerators() error {
	s.generators = map[results.Generator]generator{}
	if s.cl != nil {
		// checkClusterPlan allowed the built-in engine only.
		s.generators[results.LoadBuiltin] = &clusterGen{r: s.cl, plan: s.plan, dir: s.Dir}
		return nil
	}
	for _, l := range s.plan.LoadList() {
		switch l {
		case results.LoadWrk:
			script, err := wrk.WriteScript(s.Dir)
			if err != nil {
				return err
			}
			s.generators[l] = &wrkGen{plan: s.plan, cpus: s.res.LoadCPUs, bin: s.WrkBin, script: script, dir: s.Dir, netns: s.clientNS(), allow: s.loadTarget(), cgroup: s.LoadCgroup}
		case results.LoadBuiltin:
			g, err := newBuiltin(s.plan, s.Dir, s.clientNS(), s.loadTarget())
			if err != nil {
				return err
			}
			g.cgroup = s.LoadCgroup
			s.generators[l] = g
		default:
			return planErr("-load: %s cannot run here yet", l)
		}
	}
	return nil
}

// wrkGen is wrk, closed loop, with the Lua reporter for exact percentiles.
type wrkGen struct {
	plan   Plan
	cpus   cpuset.CPUSet // the plan's PinLoad
	bin    string
	script string
	dir    string // the results directory, for a hung run's state
	// netns is the client namespace under -isolate netns, and allow the
	// veth address the load may go to there.
	netns string
	allow netip.Addr
	// cgroup is the control group wrk runs in; nil for none.
	cgroup *cgroup.Group
}

func (g *wrkGen) options(c Cell, url string) wrk.Options {
	return wrk.Options{
		Bin:         g.bin,
		URL:         url,
		Threads:     g.plan.ThreadsFor(c.Connections),
		Connections: c.Connections,
		Duration:    g.plan.Duration,
		Timeout:     g.plan.Timeout,
		Latency:     true,
		Close:       g.plan.Close,
		Script:      g.script,
		CPUs:        g.cpus.String(),
		NetNS:       g.netns,
		Allow:       g.allow,
		Cgroup:      joiner(g.cgroup),
	}
}

func (g *wrkGen) warm(ctx context.Context, c Cell, url string) error {
	o := g.options(c, url)
	o.Duration = g.plan.Warmup
	_, _, err := wrk.Run(ctx, o)
	return err
}

func (g *wrkGen) measure(ctx context.Context, c Cell, run *results.Run) ([]byte, error) {
	if c.Requests > 0 {
		return nil, fmt.Errorf("wrk runs for a duration, not a count of %d requests", c.Requests)
	}
	o := g.options(c, run.URL)
	run.Command = o.Command()
	throttled := meterThrottling(g.cgroup)
	defer throttled(run)
	res, raw, cpu, err := wrk.RunCPU(ctx, o)
	if errors.Is(err, wrk.ErrHung) && ctx.Err() == nil {
		// A wrk that overran its deadline is starved or stuck, not a
		// verdict on the server: keep its state, run the cell once more
		// and say so in the record.
		run.Retried = err.Error()
		if werr := results.WriteExtra(g.dir, run.Cell, "hung.txt", raw); werr != nil {
			return raw, werr
		}
		res, raw, cpu, err = wrk.RunCPU(ctx, o)
	}
	// wrk's own rusage: its CPU time, wherever it ran.
	run.CPU = &results.CPU{Load: usage(cpu)}
	if err != nil {
		return raw, err
	}
	f := res.Figures()
	run.Figures = &f
	return raw, nil
}

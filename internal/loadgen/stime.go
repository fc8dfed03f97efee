package loadgen

import (
	"context"
	"time"

	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stime"
)

// NewStime is OpenSSL's s_time for plan p: a cell's connections are that
// many s_time processes side by side, each making a connection (a full
// handshake and one GET) at a time, with the plan's TLS version and
// cipher suite; bin is the openssl binary ("openssl" from PATH when
// empty).
func NewStime(p results.Plan, bin string, opts ...Option) Generator {
	return perRun{&stimeGen{plan: p, bin: bin, where: apply(opts)}}
}

// stimeGen is s_time, closed loop, a run a window.
type stimeGen struct {
	plan  results.Plan
	bin   string
	where where
}

func (g *stimeGen) options(c results.Cell, url string, d time.Duration) stime.Options {
	return stime.Options{
		Bin:      g.bin,
		URL:      url,
		Procs:    c.Connections,
		Duration: d,
		TLS:      g.plan.TLS,
		CPUs:     g.where.cpus.String(),
		NetNS:    g.where.netns,
		Allow:    g.where.allow,
		Cgroup:   joiner(g.where.cgroup),
	}
}

func (g *stimeGen) Warm(ctx context.Context, c results.Cell, url string, d time.Duration) error {
	_, _, _, err := stime.Run(ctx, g.options(c, url, d))
	return err
}

// Measure records one run: the command of each process, the figures
// (requests are handshakes) and the processes' CPU time together.
func (g *stimeGen) Measure(ctx context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	o := g.options(c, run.URL, d)
	return closedRun("s_time", c, o.Command(), g.where.cgroup, run, func() (results.Figures, []byte, procstat.Times, error) {
		res, raw, cpu, err := stime.Run(ctx, o)
		return res.Figures(), raw, cpu, err
	})
}

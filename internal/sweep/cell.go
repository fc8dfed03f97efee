package sweep

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// runCells measures cells on running servers. warmed, when not nil,
// holds the cells (without their rep) warmed on these servers already,
// each warmed once per start of the servers (a -budget sweep's rounds);
// nil warms every run.
func (s *sweep) runCells(ctx context.Context, st servers, cells []Cell, start time.Time, warmed map[string]bool) error {
	for _, c := range cells {
		if ctx.Err() != nil {
			return nil
		}
		if s.outOfBudget() {
			return nil
		}
		if err := s.usePool(ctx, st, c.Topology); err != nil {
			return err
		}
		s.progress(c, start)
		once := c
		once.Rep = 0
		warm := s.plan.Warmup > 0 && !warmed[once.Key()]
		began := time.Now()
		run, raw := s.cell(ctx, st, c, s.refused[c.Topology], warm)
		if warmed != nil {
			warmed[once.Key()] = warmed[once.Key()] || (warm && run.Warmup > 0)
		}
		if run.Warmup > 0 {
			s.clock.warm.add(run.Warmup)
		}
		s.clock.cell.add(time.Since(began) - run.Warmup - s.plan.Measured(c))
		if ctx.Err() != nil && run.Error != "" {
			// The cell was cut short: not a measurement, not kept.
			fmt.Fprintln(s.Progress, "interrupted")
			return nil
		}
		ok, err := s.keep(run, raw, true)
		switch {
		case err != nil:
			return err
		case ok:
			fmt.Fprintln(s.Progress, progress.RunLine(run)+progress.CPUNote(run)+netNote(run)+s.ratioNote(c))
		default:
			fmt.Fprintf(s.Progress, "FAILED: %s\n", progress.Failure(run.Error))
		}
		if err := st.Alive(); err != nil {
			return fmt.Errorf("during %s: %w", c, err)
		}
	}
	return nil
}

// progress starts a cell's line: n/N, elapsed and an estimate of the time
// left from what cells really took once some have run (restarts, parity
// checks and wrk's exit add to the nominal time).
func (s *sweep) progress(c Cell, start time.Time) {
	n := s.out.Kept() + 1
	elapsed := time.Since(start)
	per := s.plan.CellTime(c)
	if ran := s.out.Measured + s.out.Failed; ran > 0 {
		per = elapsed / time.Duration(ran)
	}
	left := time.Duration(s.out.Total-n+1) * per
	if s.budgeted() {
		// The count of runs is not known ahead: the budget is.
		fmt.Fprintf(s.Progress, "[%d] %s  (elapsed %s, budget left %s) ", n, c, progress.Round(s.clock.spent()), progress.Round(max(s.budgetLeft(), 0)))
		return
	}
	fmt.Fprintf(s.Progress, "[%*d/%d] %s  (elapsed %s, left ~%s) ",
		progress.Width(s.out.Total), n, s.out.Total, c, progress.Round(elapsed), progress.Round(left))
}

// cell runs the warmup (discarded) and the measured load of one cell.
func (s *sweep) cell(ctx context.Context, st servers, c Cell, refused error, warm bool) (results.Run, []byte) {
	p := s.plan
	run := results.Run{
		Cell:       c,
		URL:        loadgen.WithSchedule(withPath(target.LayoutFor(s.layout, c.Target).URL(s.res.Topology(c.Topology)), p.Path), c.Schedule),
		LoadCPUs:   p.PinLoad,
		ServerCPUs: p.PinServer,
		Start:      time.Now().UTC(),
	}
	if refused != nil {
		run.Error = "parity check: " + refused.Error()
		return run, nil
	}
	run.Settle = s.rig.Settle(ctx, st)
	sess, err := s.session(ctx, c.LoadName(), false)
	if err != nil {
		run.Error = err.Error()
		return run, nil
	}
	// send is the cell as the generator sends it: a fraction of the
	// capacity becomes a rate, the record keeps the fraction.
	send := c
	if c.Fraction > 0 {
		rate, err := s.fractionRate(c)
		if err != nil {
			run.Error = err.Error()
			return run, nil
		}
		send.Rate = rate
	}
	name := poolName(c)
	if err := sess.Open(ctx, name, send, run.URL); err != nil {
		run.Error = "opening the load's connections: " + err.Error()
		return run, nil
	}
	defer func() {
		if err := sess.Close(ctx, name); err != nil && ctx.Err() == nil {
			s.warn("%v", err)
		}
	}()
	if warm {
		began := time.Now()
		_, err := sess.Window(ctx, name, p.Warmup, nil)
		run.Warmup = time.Since(began)
		if err != nil {
			run.Error = "warmup: " + err.Error()
			return run, nil
		}
	}
	run.Start = time.Time{} // the measured window's, not the cell's
	raw, _ := s.measureSpan(ctx, span{sides: []servers{st}, net: st, call: func() ([]byte, error) {
		return sess.Window(ctx, name, p.Measured(c), &run)
	}}, [][]*results.Run{{&run}})
	run.Cell = c
	return run, raw
}

// fractionRate is the rate a cell at a fraction of capacity sends: that
// fraction of the least median req/s that the block's topologies (but the
// nginx-only ceilings) reached closed loop at the same handler work, from
// the records, so every topology is loaded at the same rate.
func (s *sweep) fractionRate(c Cell) (float64, error) {
	byTop := map[string][]float64{}
	for _, r := range s.runs {
		same := r.TargetName() == c.TargetName() && r.GOMAXPROCS == c.GOMAXPROCS && r.Work == c.Work
		if !same || r.Failed() || r.OpenLoop() || r.Probe {
			continue
		}
		if t, err := topology.Lookup(r.Topology); err != nil || t.Reference {
			continue
		}
		byTop[r.Topology] = append(byTop[r.Topology], r.Figures.ReqPerSec)
	}
	least := math.Inf(1)
	for _, rates := range byTop {
		least = min(least, stats.Summarize(rates).Center)
	}
	if math.IsInf(least, 1) || least <= 0 {
		return 0, fmt.Errorf("open loop at %g of capacity: no closed-loop run at GOMAXPROCS=%d, work %s measured the capacity", c.Fraction, c.GOMAXPROCS, c.Work)
	}
	return math.Round(c.Fraction * least), nil
}

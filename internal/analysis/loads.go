package analysis

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// LoadRatio says whether two load generators give the same answer on one
// cell of a rounds sweep that ran both (compare -load wrk,builtin): each
// round's run of the cell under the other generator over its run under
// the plan's first, in the same round, so that a slow minute of the host
// hits both sides of a ratio alike. Every figure is the geometric mean of
// those per-round ratios with a Student's t interval on their logs
// (stats.PairedRatio), allowing for the correlation neighbouring rounds'
// ratios share (stats.SweepRho: one allowance a figure, over the sweep).
//
// The engine exists for what wrk cannot do; where both can run, it must
// give wrk's answer, or the ratios of a sweep on one differ from a sweep
// on the other by as much. The ratio is closest to one at many
// connections, and falls where the generator's own CPU nearly sets the
// pace.
type LoadRatio struct {
	// Key is the cell under the other generator; Base the plan's first,
	// the ratios' denominator.
	Key  Key               `json:"key"`
	Base results.Generator `json:"base"`
	// Rate is req/s. Servers is the servers' CPU µs per request
	// (servingCost), Load the load generator's own (its whole process,
	// user and system) and LoadUser its user time alone; nil where a
	// round did not measure it on both sides.
	Rate     *Ratio `json:"rate"`
	Servers  *Ratio `json:"servers_us,omitempty"`
	Load     *Ratio `json:"load_us,omitempty"`
	LoadUser *Ratio `json:"load_user_us,omitempty"`
}

// loadRatios pairs, round by round, each cell under a load other than
// the plan's first with the same cell under the first. Only the rounds
// design pairs its runs so: a paired sweep runs its other loads as a
// cross-check of one run a cell.
func loadRatios(p results.Plan, keys []Key, byKey map[Key][]results.Run, level float64) []LoadRatio {
	loads := p.LoadList()
	if p.Paired != nil || len(loads) < 2 {
		return nil
	}
	// A cell's per-round ratios of each figure, in LoadRatio's order:
	// rate, servers, load, load user.
	type series struct {
		key  Key
		figs [4][]float64
	}
	var all []series
	for _, k := range keys {
		if k.Load == loads[0] {
			continue
		}
		bk := k
		bk.Load = loads[0]
		base, ok := byKey[bk]
		if !ok {
			continue
		}
		nginx, server := servingParts(k.Topology, append(slices.Clip(byKey[k]), base...))
		s := series{key: k}
		add := func(i int, a, b float64) {
			if a > 0 && b > 0 {
				s.figs[i] = append(s.figs[i], a/b)
			}
		}
		for _, pr := range roundPairs(byKey[k], base) {
			a, b := pr[0], pr[1]
			add(0, a.Figures.ReqPerSec, b.Figures.ReqPerSec)
			ca, oka := servingCost(a, nginx, server)
			cb, okb := servingCost(b, nginx, server)
			if oka && okb {
				add(1, ca, cb)
			}
			la, _, _, oka := cpuPerRequest(a)
			lb, _, _, okb := cpuPerRequest(b)
			if oka && okb {
				add(2, la, lb)
				add(3, results.PerRequest(results.Usage{User: a.CPU.Load.User}, a.Figures.Requests),
					results.PerRequest(results.Usage{User: b.CPU.Load.User}, b.Figures.Requests))
			}
		}
		if len(s.figs[0]) > 0 {
			all = append(all, s)
		}
	}
	// Each figure's correlation allowance is its own, over the sweep.
	var rho [4]float64
	for i := range rho {
		var xs [][]float64
		for _, s := range all {
			xs = append(xs, s.figs[i])
		}
		rho[i] = stats.SweepRho(xs).Allowed
	}
	var out []LoadRatio
	for _, s := range all {
		var r [4]*Ratio
		for i, xs := range s.figs {
			r[i] = pairedOf(xs, level, rho[i])
		}
		out = append(out, LoadRatio{Key: s.key, Base: loads[0], Rate: r[0], Servers: r[1], Load: r[2], LoadUser: r[3]})
	}
	return out
}

// roundPairs pairs the successful runs of two cells by their round (the
// record's repetition), in round order.
func roundPairs(runs, base []results.Run) [][2]results.Run {
	byRep := map[int]results.Run{}
	for _, r := range base {
		if !r.Failed() && r.Figures.ReqPerSec > 0 {
			byRep[r.Rep] = r
		}
	}
	var out [][2]results.Run
	for _, r := range runs {
		if b, ok := byRep[r.Rep]; ok && !r.Failed() && r.Figures.ReqPerSec > 0 {
			out = append(out, [2]results.Run{r, b})
		}
	}
	slices.SortFunc(out, func(a, b [2]results.Run) int { return cmp.Compare(a[0].Rep, b[0].Rep) })
	return out
}

// warnLoads says where two generators' rates differ at the sweep's level:
// the ratios of one generator's table then differ from the other's.
func (s *Summary) warnLoads() {
	for _, l := range s.Loads {
		if l.Rate != nil && l.Rate.Differs {
			s.Warnings = append(s.Warnings, Warning{Kind: "loads differ", Cell: l.Key.String(), Msg: fmt.Sprintf(
				"%s: %s served %.3f [%.3f, %.3f] of %s's rate, round by round over %s: the two load generators do not give the same answer here, so the ratios of one's table are not the other's",
				l.Key, l.Key.Load, l.Rate.Center, *l.Rate.Lo, *l.Rate.Hi, l.Base, numfmt.Plural(l.Rate.N, "round"))})
		}
	}
}

package stopping

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/progress"
	"github.com/topobench/topobench/internal/results"
)

// -reps auto: after the planned rounds of a block, the sweep adds one
// round at a time (one more repetition of every cell of the block,
// interleaved as before) until every ratio to standalone is known within
// ±Within, or Max rounds are done. A ratio is the cell's median req/s over
// standalone's with its interval, as the report computes it
// (analysis.Summary.Unconverged is the one rule); in a group without
// standalone the cells' median req/s must converge instead. Each added
// round starts the servers afresh, as a block does.
//
// Because the sweep stops by looking at the intervals, they are not at
// 95% but at the per-look level of a sequential design declared before
// the first run (stats.Sequential): the first rounds are the fewest with
// a finite interval at that level, and each count of runs up to Max is a
// look that gets its share of the 5% error rate.

// Verdict is where a block stands under -reps auto.
type Verdict struct {
	// Rounds is the highest repetition recorded for the block.
	Rounds int
	// Pending are the cells not yet known within the bound; Next is the
	// round to run, with no cells when the block is done.
	Pending []analysis.Convergence
	Next    results.Block
}

// Converge decides whether block b of plan p needs another round, from
// every run recorded so far. It first completes a round that was cut
// short (a resumed sweep), then adds round Rounds+1 while a cell that can
// still converge is pending and fewer than Max rounds are done. Plans
// without -reps auto never get another round.
func Converge(p results.Plan, b results.Block, runs []results.Run) Verdict {
	var v Verdict
	auto := p.RepsAuto
	if auto == nil {
		return v
	}
	var mine []results.Run
	recorded := map[string]bool{}
	for _, r := range runs {
		if b.In(r.Cell) {
			mine = append(mine, r)
			recorded[r.Key()] = true
			v.Rounds = max(v.Rounds, r.Rep)
		}
	}
	round := func(rep int) results.Block {
		upTo := p
		upTo.Reps = rep // round rep in its own order (results.RoundOrder)
		next := results.Block{Target: b.Target, GOMAXPROCS: b.GOMAXPROCS, Keepalive: b.Keepalive}
		for _, c := range upTo.Cells() {
			if c.Rep == rep && b.In(c) {
				if !recorded[c.Key()] {
					next.Cells = append(next.Cells, c)
				}
			}
		}
		return next
	}
	if v.Rounds > p.Reps {
		if r := round(v.Rounds); len(r.Cells) > 0 {
			v.Pending = analysis.Summarize(results.Env{Plan: p}, mine).Unconverged(auto.Within)
			v.Next = r
			return v
		}
	}
	v.Pending = analysis.Summarize(results.Env{Plan: p}, mine).Unconverged(auto.Within)
	hope := slices.ContainsFunc(v.Pending, func(c analysis.Convergence) bool { return !c.Hopeless })
	if hope && v.Rounds < auto.Max && v.Rounds >= p.Reps {
		v.Next = round(v.Rounds + 1)
	}
	return v
}

// String is the verdict for the progress line: "2 still wider than ±5%:
// nginx-http ±8%, nginx-fcgi-tcp ±∞".
func (v Verdict) String() string {
	if len(v.Pending) == 0 {
		return "every figure within the bound"
	}
	var parts []string
	for _, c := range v.Pending {
		s := c.Key.Topology + " "
		switch {
		case c.Hopeless:
			s += "(no successful run)"
		default:
			s += "±" + progress.HalfWidth(c.HalfWidth)
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%d not within the bound: %s", len(v.Pending), strings.Join(parts, ", "))
}

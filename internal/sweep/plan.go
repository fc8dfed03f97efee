package sweep

import (
	"slices"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// Plan and Resolved are internal/plan's: the aliases keep the sweep's
// files, which pass them everywhere, as they were.
type (
	Plan     = plan.Plan
	Resolved = plan.Resolved
)

// Cell is one measurement of the plan.
type Cell = results.Cell

// Block is the cells that share one start of the servers.
type Block = results.Block

// Remaining drops from blocks the cells already measured (done holds
// their keys) and the blocks left empty.
func Remaining(blocks []Block, done map[string]bool) []Block {
	var out []Block
	for _, b := range blocks {
		b.Cells = slices.DeleteFunc(slices.Clone(b.Cells), func(c Cell) bool { return done[c.Key()] })
		if len(b.Cells) > 0 {
			out = append(out, b)
		}
	}
	return out
}

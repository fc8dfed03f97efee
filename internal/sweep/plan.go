// Package sweep runs one comparison from start to finish: it checks the
// machine, finds the tools, records the environment, chooses addresses,
// starts the servers for each block of the plan, verifies parity before
// anything is measured, measures every cell, and keeps every finished cell
// on disk the moment it finishes, so an interrupted sweep loses nothing and
// can be resumed.
//
// The plan is internal/plan's, checked there once (plan.Check) with where
// the sweep runs; the sweep checks only what the machine decides (the CPUs
// allowed, the targets' toolchains, namespaces, control groups, a
// cluster's nodes). The plan's dimensions (target, topology, processor
// value, connections, load generator, open-loop rate, handler wait) are
// typed lists; the sweep measures their product, and one function,
// results.Cell.Key, names a cell.
//
// Where the servers run and what loads them are two interfaces, servers
// and generator: on this machine (internal/stack, wrk or the built-in
// engine as a child), or on a cluster (Options.Cluster, cluster.go: the
// servers on the server node under procd, the load as one job per load
// node through internal/cluster, merged exactly).
//
// How it measures is a design (design.go), chosen from the plan in one
// place and run by one loop: rounds (rounds.go) or paired (paired.go),
// each in its file. The rules of when to stop and what to measure next
// are internal/stopping's. The records are kept in memory as they are
// written (records.go); a resumed sweep reads its directory once.
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

package report

import (
	"cmp"
	"fmt"
	"strconv"

	"golang.org/x/perf/benchfmt"

	"github.com/topobench/topobench/internal/results"
)

// This file is the one place that knows which dimensions of a run the
// report tells apart. A run's Key is its Group (every dimension but the
// topology) and its topology (the row). A group is one table in summary.md
// and one legend entry in the charts, and "vs standalone" and the ceiling
// check compare rows within a group. A new sweep dimension is a field of
// Group plus a line in each function below.

// Group is what the rows of one table share.
type Group struct {
	GOMAXPROCS int `json:"gomaxprocs"`
}

// Key identifies a cell: the runs with the same Key are its repetitions.
type Key struct {
	Group
	Topology string `json:"topology"`
}

// keyOf places a run in the report.
func keyOf(r results.Run) Key {
	return Key{Group: Group{GOMAXPROCS: r.GOMAXPROCS}, Topology: r.Topology}
}

// String labels the group in headings, legends and warnings:
// "GOMAXPROCS=8".
func (g Group) String() string { return fmt.Sprintf("GOMAXPROCS=%d", g.GOMAXPROCS) }

// String names the cell in warnings: "GOMAXPROCS=8 nginx-http".
func (k Key) String() string { return k.Group.String() + " " + k.Topology }

// compareGroups orders tables and legend entries.
func compareGroups(a, b Group) int { return cmp.Compare(a.GOMAXPROCS, b.GOMAXPROCS) }

// planGroups lists the groups a plan asks for, in table order.
func planGroups(p results.Plan) []Group {
	gs := make([]Group, 0, len(p.GOMAXPROCS))
	for _, g := range p.GOMAXPROCS {
		gs = append(gs, Group{GOMAXPROCS: g})
	}
	return gs
}

// refGroup is the group a row of the 2013 reference belongs to.
func refGroup(r RefRow) Group { return Group{GOMAXPROCS: r.GOMAXPROCS} }

// groupColumns head the CSV columns that groupValues fill.
func groupColumns() []string { return []string{"gomaxprocs"} }

func groupValues(g Group) []string { return []string{strconv.Itoa(g.GOMAXPROCS)} }

// benchName is the cell's name in bench.txt, without the "Benchmark"
// prefix: "Topobench/topology=nginx-http/gomaxprocs=8". Every dimension
// is a key=value sub-name, so benchstat can slice by any of them
// (-col /gomaxprocs, -row /topology).
func benchName(k Key) benchfmt.Name {
	return benchfmt.Name(fmt.Sprintf("Topobench/topology=%s/gomaxprocs=%d", k.Topology, k.GOMAXPROCS))
}

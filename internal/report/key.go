package report

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/topobench/topobench/internal/results"
)

// This file is the one place that knows which dimensions of a run the
// report tells apart. A run's Key is its Group (every dimension but the
// topology) and its topology (the row). A group is one table in summary.md
// and one legend entry in the charts, and "vs standalone" and the ceiling
// check compare rows within a group. A new sweep dimension is a field of
// Group plus a line in keyOf, dims, compareGroups and planGroups.

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
func (g Group) String() string {
	var parts []string
	for _, d := range g.dims() {
		parts = append(parts, d.label+"="+d.value)
	}
	return strings.Join(parts, " ")
}

// String names the cell in warnings: "GOMAXPROCS=8 nginx-http".
func (k Key) String() string { return k.Group.String() + " " + k.Topology }

// heading titles the group's table in summary.md, noting a GOMAXPROCS
// beyond the machine's cpus (when known).
func (g Group) heading(cpus int) string {
	if cpus > 0 && g.GOMAXPROCS > cpus {
		return fmt.Sprintf("%s (more than the %d CPUs)", g, cpus)
	}
	return g.String()
}

// dim is one dimension of a group: name in summary.csv and bench.txt,
// label for people.
type dim struct{ name, label, value string }

func (g Group) dims() []dim {
	return []dim{{"gomaxprocs", "GOMAXPROCS", strconv.Itoa(g.GOMAXPROCS)}}
}

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
func groupColumns() []string {
	var names []string
	for _, d := range (Group{}).dims() {
		names = append(names, d.name)
	}
	return names
}

func groupValues(g Group) []string {
	var values []string
	for _, d := range g.dims() {
		values = append(values, d.value)
	}
	return values
}

// benchName is the cell's name in bench.txt, without the "Benchmark"
// prefix: "Topobench/topology=nginx-http/gomaxprocs=8". Every dimension
// is a key=value sub-name, so benchstat can slice by any of them
// (-col /gomaxprocs, -row /topology).
func benchName(k Key) benchfmt.Name {
	var b strings.Builder
	b.WriteString("Topobench/topology=" + k.Topology)
	for _, d := range k.dims() {
		b.WriteString("/" + d.name + "=" + d.value)
	}
	return benchfmt.Name(b.String())
}

package analysis

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
)

// This file is the one place that knows which dimensions of a run the
// report tells apart. A run's Key is its Group (every dimension but the
// topology) and its topology (the row). A group is one table in summary.md
// and one legend entry in the charts, and "vs standalone" and the ceiling
// check compare rows within a group. A new sweep dimension is a field of
// Group plus a line in KeyOf, cell and CompareGroups.

// Group is what the rows of one table share.
type Group struct {
	Target      string            `json:"target,omitempty"`
	GOMAXPROCS  int               `json:"gomaxprocs"`
	Connections int               `json:"connections,omitempty"`
	Load        results.Generator `json:"load,omitempty"`
	// Keepalive is set when the plan sweeps nginx's upstream keepalive.
	Keepalive results.Keepalive `json:"upstream_keepalive,omitempty"`
	Schedule  results.Schedule  `json:"schedule,omitzero"`
}

// Key identifies a cell: the runs with the same Key are its repetitions.
type Key struct {
	Group
	Topology string `json:"topology"`
}

// KeyOf places a run of plan p in the report.
func KeyOf(p results.Plan, r results.Run) Key {
	if r.Connections == 0 && len(p.Connections) == 1 {
		r.Connections = p.Connections[0] // a record from before connections was a dimension
	}
	g := Group{Target: r.TargetName(), GOMAXPROCS: r.GOMAXPROCS, Connections: r.Connections, Load: r.LoadName(), Keepalive: r.Keepalive, Schedule: r.Schedule}
	return Key{Group: g, Topology: r.Topology}
}

// cell is the group as a record's cell, which names its dimensions.
func (g Group) cell() results.Cell {
	return results.Cell{Target: g.Target, GOMAXPROCS: g.GOMAXPROCS, Connections: g.Connections, Load: g.Load, Keepalive: g.Keepalive, Schedule: g.Schedule}
}

// String labels the group in headings, legends and warnings:
// "GOMAXPROCS=8".
func (g Group) String() string { return g.cell().Label() }

// Path names the cell as benchstat names a sub-benchmark, for the rows of
// a comparison: "nginx-http/gomaxprocs=8", then the other dimensions
// where they are not the usual ones ("/connections=1000/load=builtin").
func (k Key) Path() string {
	var b strings.Builder
	b.WriteString(k.Topology + "/gomaxprocs=" + strconv.Itoa(k.GOMAXPROCS))
	for _, d := range k.Dims() {
		if d.Name != "gomaxprocs" && d.Value != "" && d.Value != d.Usual {
			b.WriteString("/" + d.Name + "=" + d.Value)
		}
	}
	return b.String()
}

// String names the cell in warnings: "GOMAXPROCS=8 nginx-http".
func (k Key) String() string { return k.Group.String() + " " + k.Topology }

// Heading titles the group's table in summary.md, noting a GOMAXPROCS
// beyond the servers' CPUs (when known): of the machine's, or a pinned
// set of fewer.
func (g Group) Heading(server, machine int) string {
	switch {
	case server <= 0 || g.GOMAXPROCS <= server:
		return g.String()
	case server < machine:
		return fmt.Sprintf("%s (more than the servers' %s)", g, numfmt.Plural(server, "CPU"))
	}
	return fmt.Sprintf("%s (more than the %s)", g, numfmt.Plural(server, "CPU"))
}

// Dims are the group's dimensions as its cells name them.
func (g Group) Dims() []results.Dim { return g.cell().Dims() }

// CompareGroups orders tables and legend entries.
func CompareGroups(a, b Group) int {
	return cmp.Or(
		cmp.Compare(notGo(a.Target), notGo(b.Target)), // Go's first
		cmp.Compare(a.Target, b.Target),
		cmp.Compare(a.GOMAXPROCS, b.GOMAXPROCS),
		cmp.Compare(a.Connections, b.Connections),
		cmp.Compare(a.Load, b.Load),
		cmp.Compare(a.Keepalive.Size(a.Connections), b.Keepalive.Size(b.Connections)), // the smaller pool first
		cmp.Compare(a.Schedule.Rate, b.Schedule.Rate),
		cmp.Compare(a.Schedule.Fraction, b.Schedule.Fraction),
		cmp.Compare(a.Schedule.Wait, b.Schedule.Wait),
		cmp.Compare(a.Schedule.Work, b.Schedule.Work),
		cmp.Compare(a.Schedule.Name, b.Schedule.Name),
	)
}

// planGroups lists the groups a plan asks for, in the plan's order.
func planGroups(p results.Plan) []Group {
	var gs []Group
	seen := map[Group]bool{}
	for _, c := range p.Cells() {
		g := KeyOf(p, results.Run{Cell: c}).Group
		if !seen[g] {
			seen[g] = true
			gs = append(gs, g)
		}
	}
	return gs
}

// refGroup is the group a row of the 2013 reference belongs to: the 2013
// load, wrk -c5000, on cmd/hello.
func refGroup(r RefRow) Group {
	return Group{Target: results.TargetGo, GOMAXPROCS: r.GOMAXPROCS, Connections: 5000, Load: results.LoadWrk}
}

// notGo sorts cmd/hello's groups before the other targets'.
func notGo(target string) int {
	if target == results.TargetGo || target == "" {
		return 0
	}
	return 1
}

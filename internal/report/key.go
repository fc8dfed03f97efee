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
	Target      string            `json:"target,omitempty"`
	GOMAXPROCS  int               `json:"gomaxprocs"`
	Connections int               `json:"connections,omitempty"`
	Load        results.Generator `json:"load,omitempty"`
	Schedule    results.Schedule  `json:"schedule,omitzero"`
}

// Key identifies a cell: the runs with the same Key are its repetitions.
type Key struct {
	Group
	Topology string `json:"topology"`
}

// keyOf places a run of plan p in the report.
func keyOf(p results.Plan, r results.Run) Key {
	if r.Connections == 0 && len(p.Connections) == 1 {
		r.Connections = p.Connections[0] // a record from before connections was a dimension
	}
	g := Group{Target: r.TargetName(), GOMAXPROCS: r.GOMAXPROCS, Connections: r.Connections, Load: r.LoadName(), Schedule: r.Schedule}
	return Key{Group: g, Topology: r.Topology}
}

// String labels the group in headings, legends and warnings:
// "GOMAXPROCS=8".
func (g Group) String() string {
	var parts []string
	for _, d := range g.dims() {
		if d.value != "" && d.value != d.usual {
			parts = append(parts, d.label+"="+d.value)
		}
	}
	return strings.Join(parts, " ")
}

// String names the cell in warnings: "GOMAXPROCS=8 nginx-http".
func (k Key) String() string { return k.Group.String() + " " + k.Topology }

// heading titles the group's table in summary.md, noting a GOMAXPROCS
// beyond the servers' CPUs (when known): of the machine's, or a pinned
// set of fewer.
func (g Group) heading(server, machine int) string {
	switch {
	case server <= 0 || g.GOMAXPROCS <= server:
		return g.String()
	case server < machine:
		return fmt.Sprintf("%s (more than the servers' %s)", g, plural(server, "CPU"))
	}
	return fmt.Sprintf("%s (more than the %s)", g, plural(server, "CPU"))
}

// dim is one dimension of a group: name in summary.csv and bench.txt,
// label for people, and the usual value that labels leave out.
type dim struct{ name, label, value, usual string }

func (g Group) dims() []dim {
	num := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	rate := ""
	if g.Schedule.Rate > 0 {
		rate = strconv.FormatFloat(g.Schedule.Rate, 'f', -1, 64)
	}
	wait := ""
	if g.Schedule.Wait > 0 {
		wait = g.Schedule.Wait.String()
	}
	return []dim{
		{"target", "target", g.Target, results.TargetGo},
		{"gomaxprocs", "GOMAXPROCS", strconv.Itoa(g.GOMAXPROCS), ""},
		{"connections", "connections", num(g.Connections), "5000"}, // 2013's
		{"load", "load", string(g.Load), string(results.LoadWrk)},
		{"scenario", "scenario", g.Schedule.Name, ""},
		{"rate", "rate", rate, ""},
		{"wait", "wait", wait, ""},
	}
}

// compareGroups orders tables and legend entries.
func compareGroups(a, b Group) int {
	return cmp.Or(
		cmp.Compare(notGo(a.Target), notGo(b.Target)), // Go's first
		cmp.Compare(a.Target, b.Target),
		cmp.Compare(a.GOMAXPROCS, b.GOMAXPROCS),
		cmp.Compare(a.Connections, b.Connections),
		cmp.Compare(a.Load, b.Load),
		cmp.Compare(a.Schedule.Rate, b.Schedule.Rate),
		cmp.Compare(a.Schedule.Wait, b.Schedule.Wait),
		cmp.Compare(a.Schedule.Name, b.Schedule.Name),
	)
}

// planGroups lists the groups a plan asks for, in the plan's order.
func planGroups(p results.Plan) []Group {
	var gs []Group
	seen := map[Group]bool{}
	for _, c := range p.Cells() {
		g := keyOf(p, results.Run{Cell: c}).Group
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
		if d.value != "" {
			b.WriteString("/" + d.name + "=" + d.value)
		}
	}
	return benchfmt.Name(b.String())
}

// notGo sorts cmd/hello's groups before the other targets'.
func notGo(target string) int {
	if target == results.TargetGo || target == "" {
		return 0
	}
	return 1
}

// plural is "1 CPU" or "2 CPUs".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

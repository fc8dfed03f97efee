package analysis

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

func TestGroupOrder(t *testing.T) {
	plan := results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{8, 1, 2}, Connections: []int{5000}, Reps: 1}
	gs := planGroups(plan)
	g := func(n int) Group { return Group{Target: "go", GOMAXPROCS: n, Connections: 5000, Load: "wrk"} }
	assert.Equal(t, []Group{g(8), g(1), g(2)}, gs, "the plan's order")
	slices.SortFunc(gs, CompareGroups)
	assert.Equal(t, []Group{g(1), g(2), g(8)}, gs)

	s := Summarize(results.Env{}, []results.Run{
		{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 8, Rep: 1}},
		{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 2, Rep: 1}},
		{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 8, Rep: 1}},
	})
	h := func(n int) Group { return Group{Target: "go", GOMAXPROCS: n, Load: "wrk"} }
	assert.Equal(t, []Group{h(2), h(8)}, s.Groups())
	var rows []string
	for _, c := range s.Rows(h(8)) {
		rows = append(rows, c.Topology)
	}
	assert.Equal(t, []string{"standalone", "nginx-http"}, rows, "topology report order within a group")
}

// TestHeading notes a GOMAXPROCS beyond the CPUs the servers had: the
// machine's, or a pinned set of fewer (-cpus auto gives them 1 of 2).
func TestHeading(t *testing.T) {
	for _, tt := range []struct {
		name            string
		procs           int
		server, machine int
		want            string
	}{
		{"within the machine", 2, 2, 2, "GOMAXPROCS=2"},
		{"beyond the machine", 8, 2, 2, "GOMAXPROCS=8 (more than the 2 CPUs)"},
		{"beyond a pinned CPU", 2, 1, 2, "GOMAXPROCS=2 (more than the servers' 1 CPU)"},
		{"beyond a pinned set", 8, 3, 4, "GOMAXPROCS=8 (more than the servers' 3 CPUs)"},
		{"within a pinned set", 1, 1, 2, "GOMAXPROCS=1"},
		{"beyond a one-CPU machine", 8, 1, 1, "GOMAXPROCS=8 (more than the 1 CPU)"},
		{"unknown", 8, 0, 0, "GOMAXPROCS=8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Group{GOMAXPROCS: tt.procs}.Heading(tt.server, tt.machine))
		})
	}
}

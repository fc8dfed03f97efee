package report

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

// TestKey checks that every name the report gives a cell comes from the
// one key.
func TestKey(t *testing.T) {
	tests := []struct {
		run     results.Run
		label   string
		heading string
		bench   string
		csv     []string
	}{
		{results.Run{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 1, Rep: 2}}, "GOMAXPROCS=1 nginx-http", "GOMAXPROCS=1",
			"Topobench/topology=nginx-http/gomaxprocs=1", []string{"1"}},
		{results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 8, Rep: 1}}, "GOMAXPROCS=8 standalone", "GOMAXPROCS=8 (more than the 2 CPUs)",
			"Topobench/topology=standalone/gomaxprocs=8", []string{"8"}},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			k := keyOf(tt.run)
			assert.Equal(t, tt.run.Topology, k.Topology)
			assert.Equal(t, tt.label, k.String())
			assert.Equal(t, tt.label, Cell{Key: k}.Name())
			assert.Equal(t, tt.heading, k.heading(2))
			assert.Equal(t, tt.bench, string(benchName(k)))
			assert.Equal(t, tt.csv, groupValues(k.Group))
			assert.Len(t, groupColumns(), len(tt.csv))

			other := tt.run
			other.Rep++
			assert.Equal(t, k, keyOf(other), "repetitions share the key")
		})
	}
}

func TestGroupOrder(t *testing.T) {
	plan := results.Plan{GOMAXPROCS: []int{8, 1, 2}}
	gs := planGroups(plan)
	assert.Equal(t, []Group{{GOMAXPROCS: 8}, {GOMAXPROCS: 1}, {GOMAXPROCS: 2}}, gs, "the plan's order")
	slices.SortFunc(gs, compareGroups)
	assert.Equal(t, []Group{{GOMAXPROCS: 1}, {GOMAXPROCS: 2}, {GOMAXPROCS: 8}}, gs)

	s := Summarize(results.Env{}, []results.Run{
		{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 8, Rep: 1}},
		{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 2, Rep: 1}},
		{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 8, Rep: 1}},
	})
	assert.Equal(t, []Group{{GOMAXPROCS: 2}, {GOMAXPROCS: 8}}, s.Groups())
	var rows []string
	for _, c := range s.Rows(Group{GOMAXPROCS: 8}) {
		rows = append(rows, c.Topology)
	}
	assert.Equal(t, []string{"standalone", "nginx-http"}, rows, "topology report order within a group")
}

package report

import (
	"slices"
	"testing"
	"time"

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
			"Topobench/topology=nginx-http/target=go/gomaxprocs=1/load=wrk", []string{"go", "1", "", "wrk", "", "", ""}},
		{results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 8, Rep: 1}}, "GOMAXPROCS=8 standalone", "GOMAXPROCS=8 (more than the 2 CPUs)",
			"Topobench/topology=standalone/target=go/gomaxprocs=8/load=wrk", []string{"go", "8", "", "wrk", "", "", ""}},
		{results.Run{Cell: results.Cell{Target: "erlang", Topology: "nginx-http", GOMAXPROCS: 2, Connections: 1000, Load: results.LoadBuiltin,
			Schedule: results.Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second}, Rep: 1}},
			"target=erlang GOMAXPROCS=2 connections=1000 load=builtin scenario=slow-requests rate=1000 wait=1s nginx-http",
			"target=erlang GOMAXPROCS=2 connections=1000 load=builtin scenario=slow-requests rate=1000 wait=1s",
			"Topobench/topology=nginx-http/target=erlang/gomaxprocs=2/connections=1000/load=builtin/scenario=slow-requests/rate=1000/wait=1s",
			[]string{"erlang", "2", "1000", "builtin", "slow-requests", "1000", "1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			k := keyOf(results.Plan{}, tt.run)
			assert.Equal(t, tt.run.Topology, k.Topology)
			assert.Equal(t, tt.label, k.String())
			assert.Equal(t, tt.label, Cell{Key: k}.Name())
			assert.Equal(t, tt.heading, k.heading(2, 2))
			assert.Equal(t, tt.bench, string(benchName(k)))
			assert.Equal(t, tt.csv, groupValues(k.Group))
			assert.Len(t, groupColumns(), len(tt.csv))

			other := tt.run
			other.Rep++
			assert.Equal(t, k, keyOf(results.Plan{}, other), "repetitions share the key")
		})
	}
}

func TestGroupOrder(t *testing.T) {
	plan := results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{8, 1, 2}, Connections: []int{5000}, Reps: 1}
	gs := planGroups(plan)
	g := func(n int) Group { return Group{Target: "go", GOMAXPROCS: n, Connections: 5000, Load: "wrk"} }
	assert.Equal(t, []Group{g(8), g(1), g(2)}, gs, "the plan's order")
	slices.SortFunc(gs, compareGroups)
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
			assert.Equal(t, tt.want, Group{GOMAXPROCS: tt.procs}.heading(tt.server, tt.machine))
		})
	}
}

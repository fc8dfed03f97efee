package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/analysis"
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
			"Topobench/topology=nginx-http/target=go/gomaxprocs=1/load=wrk", []string{"go", "1", "", "wrk", "", "", "", "", "", ""}},
		{results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 8, Rep: 1}}, "GOMAXPROCS=8 standalone", "GOMAXPROCS=8 (more than the 2 CPUs)",
			"Topobench/topology=standalone/target=go/gomaxprocs=8/load=wrk", []string{"go", "8", "", "wrk", "", "", "", "", "", ""}},
		{results.Run{Cell: results.Cell{Target: "erlang", Topology: "nginx-http", GOMAXPROCS: 2, Connections: 1000, Load: results.LoadBuiltin,
			Schedule: results.Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second}, Rep: 1}},
			"target=erlang GOMAXPROCS=2 connections=1000 load=builtin scenario=slow-requests rate=1000 wait=1s nginx-http",
			"target=erlang GOMAXPROCS=2 connections=1000 load=builtin scenario=slow-requests rate=1000 wait=1s",
			"Topobench/topology=nginx-http/target=erlang/gomaxprocs=2/connections=1000/load=builtin/scenario=slow-requests/rate=1000/wait=1s",
			[]string{"erlang", "2", "1000", "builtin", "", "slow-requests", "1000", "", "1s", ""}},
		{results.Run{Cell: results.Cell{Topology: "nginx-fcgi-unix", GOMAXPROCS: 1, Connections: 64, Load: results.LoadBuiltin,
			Schedule: results.Schedule{Rate: 2000, Work: 200 * time.Microsecond}, Rep: 3}},
			"GOMAXPROCS=1 connections=64 load=builtin rate=2000 work=200µs nginx-fcgi-unix",
			"GOMAXPROCS=1 connections=64 load=builtin rate=2000 work=200µs",
			"Topobench/topology=nginx-fcgi-unix/target=go/gomaxprocs=1/connections=64/load=builtin/rate=2000/work=200µs",
			[]string{"go", "1", "64", "builtin", "", "", "2000", "", "", "200µs"}},
		{results.Run{Cell: results.Cell{Topology: "nginx-http", GOMAXPROCS: 1, Connections: 5000, Keepalive: results.KeepaliveAuto, Rep: 1}},
			"GOMAXPROCS=1 upstream keepalive=auto nginx-http", "GOMAXPROCS=1 upstream keepalive=auto",
			"Topobench/topology=nginx-http/target=go/gomaxprocs=1/connections=5000/load=wrk/upstream_keepalive=auto",
			[]string{"go", "1", "5000", "wrk", "auto", "", "", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			k := analysis.KeyOf(results.Plan{}, tt.run)
			assert.Equal(t, tt.run.Topology, k.Topology)
			assert.Equal(t, tt.label, k.String())
			assert.Equal(t, tt.label, analysis.Cell{Key: k}.Name())
			assert.Equal(t, tt.heading, k.Heading(2, 2))
			assert.Equal(t, tt.bench, string(benchName(k)))
			assert.Equal(t, tt.csv, groupValues(k.Group))
			assert.Len(t, groupColumns(), len(tt.csv))

			other := tt.run
			other.Rep++
			assert.Equal(t, k, analysis.KeyOf(results.Plan{}, other), "repetitions share the key")
		})
	}
}

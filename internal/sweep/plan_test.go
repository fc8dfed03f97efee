package sweep

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func keys(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Key())
	}
	return out
}

func TestCellsInterleaveRepetitions(t *testing.T) {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Connections: []int{500}, Reps: 2}}
	assert.Equal(t, []string{
		"g1-standalone-c500-r1", "g1-nginx-http-c500-r1", "g1-nginx-http-c500-r2", "g1-standalone-c500-r2",
		"g8-standalone-c500-r1", "g8-nginx-http-c500-r1", "g8-nginx-http-c500-r2", "g8-standalone-c500-r2",
	}, keys(p.Cells()))
}

func TestCellsRotateRounds(t *testing.T) {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}, GOMAXPROCS: []int{1}, Connections: []int{500}, Reps: 4}}
	var order []string
	for _, c := range p.Cells() {
		order = append(order, fmt.Sprintf("%d:%s", c.Rep, c.Topology))
	}
	assert.Equal(t, []string{
		"1:standalone", "1:nginx-http", "1:nginx-return",
		"2:nginx-http", "2:nginx-return", "2:standalone",
		"3:nginx-return", "3:standalone", "3:nginx-http",
		"4:standalone", "4:nginx-http", "4:nginx-return",
	}, order, "each round starts one topology later; the cyclic order, and so each cell's predecessor, stays")
}

func TestCellsAlternateLoads(t *testing.T) {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{500},
		Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 4}}
	assert.Equal(t, []string{
		"g1-standalone-c500-r1", "g1-standalone-c500-builtin-r1",
		"g1-standalone-c500-builtin-r2", "g1-standalone-c500-r2",
		"g1-standalone-c500-r3", "g1-standalone-c500-builtin-r3",
		"g1-standalone-c500-builtin-r4", "g1-standalone-c500-r4",
	}, keys(p.Cells()), "AB BA AB BA: a drift in the machine's speed favours neither load")
}

func TestBlocks(t *testing.T) {
	tests := []struct {
		name   string
		plan   results.Plan
		blocks []string // target/GOMAXPROCS of each block
		cells  []string
	}{
		{
			name:   "connections and loads inside a repetition",
			plan:   results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{1}, Connections: []int{30, 100}, Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 1},
			blocks: []string{"go/1"},
			cells:  []string{"g1-standalone-c30-r1", "g1-standalone-c30-builtin-r1", "g1-standalone-c100-r1", "g1-standalone-c100-builtin-r1"},
		},
		{
			name: "open-loop schedules and probes go to the built-in engine only; waits to both",
			plan: results.Plan{Topologies: []string{"standalone"}, GOMAXPROCS: []int{2}, Connections: []int{10}, Loads: []results.Generator{results.LoadWrk, results.LoadBuiltin}, Reps: 1,
				Schedules: []results.Schedule{{Wait: time.Second}, {Rate: 1000}, {Name: "probe", Probe: true, Requests: 100, Wait: time.Second}}},
			blocks: []string{"go/2"},
			cells:  []string{"g2-standalone-c10-wait1s-r1", "g2-standalone-c10-builtin-wait1s-r1", "g2-standalone-c10-builtin-rate1000-r1", "g2-standalone-c10-builtin-probe-r1"},
		},
		{
			name:   "targets are outer blocks; other targets skip Go-only paths",
			plan:   results.Plan{Targets: []string{"go", "erlang"}, Topologies: []string{"standalone", "nginx-fcgi-unix", "nginx-return"}, GOMAXPROCS: []int{1, 2}, Connections: []int{10}, Reps: 1},
			blocks: []string{"go/1", "go/2", "erlang/1", "erlang/2"},
			cells: []string{
				"g1-standalone-c10-r1", "g1-nginx-fcgi-unix-c10-r1", "g1-nginx-return-c10-r1",
				"g2-standalone-c10-r1", "g2-nginx-fcgi-unix-c10-r1", "g2-nginx-return-c10-r1",
				"erlang-g1-standalone-c10-r1", "erlang-g2-standalone-c10-r1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Plan{Plan: tt.plan}
			var blocks []string
			for _, b := range p.Blocks() {
				blocks = append(blocks, b.Target+"/"+itoa(b.GOMAXPROCS))
				for _, c := range b.Cells {
					assert.Equal(t, b.Target, c.Target)
					assert.Equal(t, b.GOMAXPROCS, c.GOMAXPROCS)
				}
			}
			assert.Equal(t, tt.blocks, blocks)
			assert.Equal(t, tt.cells, keys(p.Cells()))
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRemaining(t *testing.T) {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Connections: []int{500}, Reps: 2}}
	// Everything of GOMAXPROCS=1 and one cell of 8 were measured.
	done := map[string]bool{"g8-nginx-http-c500-r1": true}
	for _, c := range p.Blocks()[0].Cells {
		done[c.Key()] = true
	}
	left := Remaining(p.Blocks(), done)
	require.Len(t, left, 1, "the finished block is not restarted")
	assert.Equal(t, 8, left[0].GOMAXPROCS)
	assert.Equal(t, []string{"g8-standalone-c500-r1", "g8-nginx-http-c500-r2", "g8-standalone-c500-r2"}, keys(left[0].Cells))
	assert.Len(t, p.Cells(), 8, "Remaining must not change the plan")

	// A run recorded and loaded again is found under the same key.
	dir := filepath.Join(t.TempDir(), "r")
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: p.Plan}))
	cell := p.Cells()[3]
	require.NoError(t, results.WriteRun(dir, results.Run{Cell: cell, Error: "failed"}, nil))
	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, cell.Key(), runs[0].Key())
}

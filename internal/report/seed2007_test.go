package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

func TestSeed2007Table(t *testing.T) {
	cell := func(target string, rate float64, errs results.Errors) analysis.Cell {
		return analysis.Cell{Key: analysis.Key{Group: analysis.Group{Target: target, GOMAXPROCS: 1, Connections: 1000, Load: "wrk"}, Topology: analysis.Standalone},
			Reps: 1, ReqPerSec: analysis.Stat{Median: rate, Min: rate, Max: rate}, Latency: analysis.Latency{P99: 250 * time.Millisecond, Runs: 1}, Errors: errs}
	}
	s := summary{analysis.Summary{Env: results.Env{Plan: results.Plan{Scenario: "2007", Close: true, Threads: 100, Connections: []int{1000}, Duration: 30 * time.Second}},
		Cells: []analysis.Cell{cell("go", 20000, results.Errors{}), cell("java-pool", 4000, results.Errors{Timeout: 7})}}}
	_, rows := s.seed2007Table()
	require.Len(t, rows, 4)
	assert.Equal(t, []string{"java-thread-per-connection", "java-threads", "447", "2.24 s", "–", "–", "–", "–"}, rows[0])
	assert.Equal(t, []string{"java-fixed-pool-5-threads", "java-pool", "968", "1.03 s", "4,000", "250 ms", "250 ms", "timeout 7"}, rows[1])
	assert.Equal(t, []string{"(not in 2007)", "go", "–", "–", "20,000", "50.0 ms", "250 ms", "none"}, rows[3])

	var b bytes.Buffer
	require.NoError(t, s.WriteMarkdown(&b))
	assert.Contains(t, b.String(), "## Compared with the 2007 thread-model test")
	assert.Contains(t, b.String(), "Every request asks for `Connection: close`")
	assert.Contains(t, b.String(), `-H "Connection: close"`)

	s.Env.Plan.Scenario = "2009"
	_, rows = s.seed2007Table()
	assert.Nil(t, rows, "only the 2007 scenario gets the 2007 table")
}

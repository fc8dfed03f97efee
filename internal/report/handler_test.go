package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// handlerSweep is a duet at handler works 0 and 200 µs: at no work
// standalone 25 µs a request, nginx-http 36 + 30, nginx-http-unix 34 +
// 29; at 200 µs nginx-http reads 0.85 of standalone (the model's 0.846),
// nginx-http-unix 0.80 (the model's 0.856, outside).
func handlerSweep() (results.Env, []results.Run) {
	env, runs := analysistest.PairedPaths([]analysistest.PathGroup{{GOMAXPROCS: 1, Paths: []analysistest.Path{
		{Topology: "nginx-http", Ratio: 0.40, Nginx: 36, Server: 30},
		{Topology: "nginx-http-unix", Ratio: 0.46, Nginx: 34, Server: 29},
	}}})
	_, worked := analysistest.PairedPaths([]analysistest.PathGroup{{GOMAXPROCS: 1, Standalone: 225, Paths: []analysistest.Path{
		{Topology: "nginx-http", Ratio: 0.85, Nginx: 36, Server: 230},
		{Topology: "nginx-http-unix", Ratio: 0.80, Nginx: 34, Server: 229},
	}}})
	env.Plan.Schedules = []results.Schedule{{}, {Work: 200 * time.Microsecond}}
	after := runs[len(runs)-1].Start.Sub(runs[0].Start) + 2*time.Second
	for _, r := range worked {
		r.Work = 200 * time.Microsecond
		r.Start = r.Start.Add(after)
		runs = append(runs, r)
	}
	return env, runs
}

// TestHandlerSection: summary.md states nginx's share at each of the
// answer's handler costs and sets the model against the group measured
// at 200 µs, inside its interval or not.
func TestHandlerSection(t *testing.T) {
	env, runs := handlerSweep()
	s := summary{analysis.Summarize(env, runs)}
	hs := s.HandlerCosts()
	require.Len(t, hs, 2)
	var out bytes.Buffer
	require.NoError(t, s.WriteMarkdown(&out))
	md := out.String()
	tests := []struct{ name, want string }{
		{"the heading", "## What nginx costs a handler that does work"},
		{"nginx-http's shares", "**nginx-http** (GOMAXPROCS=1 load=builtin; s 25 µs, n 36 + b 30 µs a request at no work): nginx costs 62% of the capacity with no handler work, 35% at a handler of 50µs, 15% at 200µs, 4% at 1ms."},
		{"the check inside", "| nginx-http | GOMAXPROCS=1 load=builtin | 200µs | 0.846 | 0.846 | 0.850 |"},
		{"the check outside, the costs at work meeting it", "| nginx-http-unix | GOMAXPROCS=1 load=builtin | 200µs | 0.856 | 0.856 | 0.800 |"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Contains(t, md, tt.want) })
	}
	rows := s.handlerView().HandlerChecks
	require.Len(t, rows, 2)
	assert.Equal(t, "yes", rows[0][7], strings.Join(rows[0], " | "))
	assert.Equal(t, "no", rows[1][7], strings.Join(rows[1], " | "))
}

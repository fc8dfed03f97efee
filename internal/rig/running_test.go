package rig

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// TestRunningService: a running service's block takes no servers' group,
// and the rig says once where its CPU time comes from.
func TestRunningService(t *testing.T) {
	tops, err := topology.LookupAll([]string{"nginx-http"})
	require.NoError(t, err)
	only, err := topology.LookupAll([]string{"nginx-return"})
	require.NoError(t, err)
	const spec = "listen:127.0.0.1:8090"
	tg, err := target.Lookup(spec)
	require.NoError(t, err)
	p, err := tg.Build(t.Context(), "")
	require.NoError(t, err)
	cmd, err := target.Lookup("cmd:/bin/true {addr}")
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		cfg  stack.Config
		want bool
	}{
		{"running", stack.Config{Target: spec, Program: p, Topologies: tops}, true},
		{"running, no backend", stack.Config{Target: spec, Program: p, Topologies: only}, false},
		{"command", stack.Config{Target: cmd.Name, Program: &target.Program{Target: cmd}, Topologies: tops}, false},
		{"go", stack.Config{Topologies: tops}, false},
	} {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, runningService(tt.cfg)) })
	}
	var log bytes.Buffer
	r := New(Config{Log: &log})
	cfg := stack.Config{Target: spec, Program: p, Topologies: tops}
	r.noteRunning(cfg)
	r.noteRunning(cfg)
	assert.Equal(t, 1, strings.Count(log.String(), "note: "+spec+" is not the sweep's"), log.String())
}

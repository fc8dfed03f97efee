package sweep

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// TestToolsAreWhatThePlanNeeds: wrk only with -load wrk, nginx only for
// topologies through it and only when it runs here.
func TestToolsAreWhatThePlanNeeds(t *testing.T) {
	for _, tt := range []struct {
		name  string
		loads []results.Generator
		tops  []string
		agent string
		want  []preflight.Tool
	}{
		{"the default", nil, []string{"standalone", "nginx-http"}, "", []preflight.Tool{preflight.Nginx, preflight.Wrk}},
		{"builtin through nginx", []results.Generator{results.LoadBuiltin}, []string{"standalone", "nginx-http"}, "", []preflight.Tool{preflight.Nginx}},
		{"builtin, standalone: nothing", []results.Generator{results.LoadBuiltin}, []string{"standalone"}, "", []preflight.Tool{}},
		{"wrk, standalone", []results.Generator{results.LoadWrk}, []string{"standalone"}, "", []preflight.Tool{preflight.Wrk}},
		{"both loads", []results.Generator{results.LoadWrk, results.LoadBuiltin}, []string{"nginx-return"}, "", []preflight.Tool{preflight.Nginx, preflight.Wrk}},
		{"nginx in its own container", nil, []string{"nginx-http"}, "http://hello:7070", []preflight.Tool{preflight.Wrk}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tops, err := topology.LookupAll(tt.tops)
			require.NoError(t, err)
			s := &sweep{Options: Options{HelloAgent: tt.agent}, plan: Plan{Plan: results.Plan{Loads: tt.loads, Topologies: tt.tops}}}
			assert.Equal(t, tt.want, s.tools(tops))
		})
	}
}

// TestFindToolsWithoutWrk hides wrk from PATH: a plan of the built-in
// engine still finds what it needs, and a plan with wrk fails with the one
// line naming the install step.
func TestFindToolsWithoutWrk(t *testing.T) {
	dir := t.TempDir()
	fakeNginx := filepath.Join(dir, "nginx")
	require.NoError(t, os.WriteFile(fakeNginx, []byte("#!/bin/sh\necho 'nginx version: nginx/1.22.1' >&2\n"), 0o755))
	t.Setenv("PATH", dir)
	tops, err := topology.LookupAll([]string{"standalone", "nginx-http"})
	require.NoError(t, err)

	s := &sweep{plan: Plan{Plan: results.Plan{Loads: []results.Generator{results.LoadBuiltin}}}}
	require.NoError(t, s.findTools(context.Background(), tops))
	assert.Empty(t, s.WrkBin)
	assert.Equal(t, fakeNginx, s.NginxBin)

	s = &sweep{plan: Plan{Plan: results.Plan{Loads: []results.Generator{results.LoadWrk}}}}
	err = s.findTools(context.Background(), tops)
	require.Error(t, err)
	assert.Equal(t, "wrk not found in PATH: install it (make tools, or apt-get install wrk)", err.Error())
}

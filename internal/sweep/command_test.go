package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// fakeProgram writes an executable file, so that a command target's
// program is found (Check); nothing runs it.
func fakeProgram(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "api")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\nexit 1\n"), 0o755))
	return p
}

// TestCommandCells: a command target is measured on the topologies whose
// backend reaches where it listens, and its cells' file names are
// file-safe.
func TestCommandCells(t *testing.T) {
	prog := fakeProgram(t)
	for _, tt := range []struct {
		spec string
		want []string
	}{
		{"cmd:" + prog + " -listen {addr}", []string{"standalone", "nginx-http"}},
		{"cmd:" + prog + " -port={port}", []string{"standalone", "nginx-http"}},
		{"cmd:" + prog + " -unix {unix}", []string{"nginx-http-unix"}},
		{"cmd:" + prog + " -listen {addr} -unix {unix}", []string{"standalone", "nginx-http", "nginx-http-unix"}},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			p := plan.DefaultPlan()
			p.Targets = []string{tt.spec}
			p.GOMAXPROCS = []int{1}
			p.Reps = 1
			var got []string
			for _, c := range p.Cells() {
				got = append(got, c.Topology)
				assert.Equal(t, "cmd-api-g1-"+c.Topology+"-c5000-r1", c.Key())
				assert.Equal(t, "target=cmd-api GOMAXPROCS=1", c.Label())
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

// TestResultsAgreesWithTarget holds internal/results' restatement of the
// command target's rules (it cannot import internal/target) to
// target.Serves and target.Slug.
func TestResultsAgreesWithTarget(t *testing.T) {
	for _, spec := range []string{
		"cmd:./jsonapi -listen {addr}",
		"cmd:./jsonapi -unix {unix}",
		"cmd:./jsonapi -listen {addr} -unix {unix}",
		"cmd:./jsonapi --bind={host}:{port} -p {procs}",
		"cmd:'/opt/my api/server.bin' -listen {addr}",
		`cmd:sh -c 'exec ./api -listen {addr}'`,
		"cmd:/usr/bin/.hidden -sock={unix}",
		"erlang",
		"java-netty",
	} {
		tg, err := target.Lookup(spec)
		require.NoError(t, err, spec)
		assert.Equal(t, tg.Slug(), results.TargetFile(spec), spec)
		for _, top := range topology.All() {
			want := top.Backend != topology.NoBackend && tg.Serves(top.Backend)
			assert.Equal(t, want, results.Applies(spec, top), "%s on %s", spec, top.Name)
		}
	}
}

func TestCommandProgressLines(t *testing.T) {
	spec := "cmd:./jsonapi -listen {addr}"
	assert.Equal(t, "cmd-jsonapi ", targetPrefix(spec))
	tops, err := topology.LookupAll([]string{"standalone", "nginx-http"})
	require.NoError(t, err)
	assert.Equal(t, "2 topologies answer GET and HEAD /api/x as the service does standalone (status, body, header names)",
		parityLineFor(spec, "/api/x", tops, nil))
	assert.Equal(t, parityLine(tops, nil), parityLineFor("go", "/", tops, nil))
	refused := map[string]error{"nginx-http": assert.AnError}
	assert.Equal(t, parityLine(tops, refused), parityLineFor(spec, "/api/x", tops, refused))
}

// TestRequestPath: the plan's -path replaces the layout's "/", the
// schedule's query follows a query of the path's own, and the built-in
// engine keeps the path's query while the schedule's goes its own way.
func TestRequestPath(t *testing.T) {
	const base = "http://127.0.0.1:8080/"
	assert.Equal(t, base, withPath(base, ""))
	assert.Equal(t, "http://127.0.0.1:8080/api/x", withPath(base, "/api/x"))
	assert.Equal(t, "http://127.0.0.1:8080/api/x?page=2&work=50us", loadgen.WithSchedule(withPath(base, "/api/x?page=2"), results.Schedule{Work: 50_000}))
	assert.Equal(t, "http://127.0.0.1:8080/?work=50us", loadgen.WithSchedule(base, results.Schedule{Work: 50_000}))
}

package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/loadgen"
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

func TestValidateCommandTargets(t *testing.T) {
	prog := fakeProgram(t)
	for _, tt := range []struct {
		name    string
		targets []string
		change  func(*Plan)
		want    string // "" for a valid plan
	}{
		{"tcp", []string{"cmd:" + prog + " -listen {addr}"}, nil, ""},
		{"unix", []string{"cmd:" + prog + " -unix {unix}"}, nil, ""},
		{"with go", []string{"go", "cmd:'" + prog + "' -listen {addr}"}, nil, ""},
		{"a path with a query", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Path = "/api/x?page=2" }, ""},
		{"nowhere to listen", []string{"cmd:" + prog + " -v"}, nil, "-targets: target \"cmd:" + prog + " -v\": the command must say where to listen"},
		{"unknown placeholder", []string{"cmd:" + prog + " -listen {adr}"}, nil, "unknown placeholder {adr}"},
		{"no such program", []string{"cmd:/nonexistent/api -listen {addr}"}, nil, "-targets: target cmd:/nonexistent/api -listen {addr}: program /nonexistent/api"},
		{"two commands of one program", []string{"cmd:" + prog + " -listen {addr}", "cmd:" + prog + " -listen {addr} -v"}, nil, "would both be named cmd-api"},
		{"listed twice", []string{"cmd:" + prog + " -listen {addr}", "cmd:" + prog + " -listen {addr}"}, nil, "listed twice"},
		{"handler work", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Schedules = []results.Schedule{{Work: 1000}} }, "-work: cmd:" + prog},
		{"handler wait", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Schedules = []results.Schedule{{Wait: 1000}} }, "-wait: a command target"},
		{"a path without /", []string{"cmd:" + prog + " -listen {addr}"}, func(p *Plan) { p.Path = "api/x" }, `-path: "api/x"`},
		{"a path with a space", []string{"go"}, func(p *Plan) { p.Path = "/a b" }, "-path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			p.Targets = tt.targets
			if tt.change != nil {
				tt.change(&p)
			}
			err := p.Validate()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
		})
	}
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
			p := DefaultPlan()
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

package sweep

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// TestNewGenerators: one generator per load the plan names; wrk's Lua
// script is written only when wrk runs, and an unknown load is a plan
// error.
func TestNewGenerators(t *testing.T) {
	for _, tt := range []struct {
		name   string
		loads  []results.Generator
		script bool
		want   string
	}{
		{"wrk", []results.Generator{results.LoadWrk}, true, ""},
		{"builtin only: no wrk script", []results.Generator{results.LoadBuiltin}, false, ""},
		{"both", []results.Generator{results.LoadWrk, results.LoadBuiltin}, true, ""},
		{"s_time beside the engine", []results.Generator{results.LoadBuiltin, results.LoadStime}, false, ""},
		{"unknown", []results.Generator{"ab"}, false, "-load: ab cannot run here yet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := smallPlan("standalone")
			p.Loads = tt.loads
			s := &sweep{Options: Options{Dir: dir, WrkBin: "/usr/bin/wrk"}, plan: p}
			err := s.newGenerators()
			if tt.want != "" {
				require.ErrorIs(t, err, ErrPlan)
				assert.Contains(t, err.Error(), tt.want)
				return
			}
			require.NoError(t, err)
			assert.Len(t, s.generators, len(tt.loads))
			matches, _ := filepath.Glob(filepath.Join(dir, "*.lua"))
			assert.Equal(t, tt.script, len(matches) == 1, "%v", matches)
		})
	}
}

// TestDescribeTarget: what the report says a target ran with.
func TestDescribeTarget(t *testing.T) {
	p := smallPlan("standalone")
	s := &sweep{plan: p, layout: topology.DefaultLayout(t.TempDir())}
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"java-pool", []string{"pool of " + strconv.Itoa(target.DefaultPoolThreads) + " threads", "fixed heap " + target.JVMHeap, "-XX:ActiveProcessorCount follows GOMAXPROCS", "command at GOMAXPROCS=1: java"}},
		{"erlang", []string{"schedulers (+S) follow GOMAXPROCS", "command at GOMAXPROCS=1: erl -noshell -noinput +S 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := target.Lookup(tt.name)
			require.NoError(t, err)
			got := s.describeTarget(&target.Program{Target: tg, Dir: "/r/bin/" + tt.name})
			assert.True(t, strings.HasPrefix(got, tg.Model+"; "), got)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
			assert.Contains(t, got, s.layout.HTTPListen(), "the address it listens on")
		})
	}
}

// TestBuildTargetsGoAlone: Go alone builds nothing (plan.Check refuses
// what other targets cannot serve).
func TestBuildTargetsGoAlone(t *testing.T) {
	dir := t.TempDir()
	s := &sweep{Options: Options{Dir: dir}, plan: smallPlan("nginx-fcgi-unix")}
	require.NoError(t, s.buildTargets(context.Background(), nil))
	assert.Empty(t, s.programs)
}

func tops(t *testing.T, names ...string) []topology.Topology {
	t.Helper()
	ts, err := topology.LookupAll(names)
	require.NoError(t, err)
	return ts
}

package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/sweep"
)

// plannedFor is the plan compare makes of args, before anything runs.
func plannedFor(t *testing.T, args ...string) (plan.Plan, error) {
	t.Helper()
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	cc, err := parseCompare(args, allowed, io.Discard)
	require.NoError(t, err)
	o, err := cc.planned(sweep.Options{}, allowed)
	return o.Plan, err
}

// TestComparePresets: a bare compare is make compare's duet; each preset
// sets its plan and design, and the user's flags change them.
func TestComparePresets(t *testing.T) {
	auto := []results.Keepalive{results.KeepaliveAuto}
	for _, tc := range []struct {
		name  string
		args  []string
		check func(t *testing.T, p plan.Plan)
	}{
		{"bare: the duet on a budget", nil, func(t *testing.T, p plan.Plan) {
			require.NotNil(t, p.Paired)
			assert.True(t, p.Paired.Duet)
			assert.Equal(t, []results.Generator{results.LoadBuiltin}, p.Loads)
			assert.Equal(t, []int{5000}, p.Connections)
			assert.Equal(t, []int{1, 8}, p.GOMAXPROCS)
			assert.Equal(t, auto, p.UpstreamKeepalive)
			require.NotNil(t, p.RepsAuto)
			assert.Equal(t, 12*time.Minute, p.RepsAuto.Budget)
			assert.InDelta(t, 0.05, p.RepsAuto.Within, 1e-9)
			assert.Equal(t, 3*time.Second, p.Duration)
			assert.Equal(t, map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second, "nginx-fcgi-unix": 6 * time.Second}, p.Paired.Windows)
			assert.Equal(t, time.Second, p.Paired.Lead)
			assert.Nil(t, p.Paired.Check)
		}},
		{"the default window of a topology not in the plan", []string{"-topologies", "standalone,nginx-http,nginx-fcgi-unix"}, func(t *testing.T, p plan.Plan) {
			assert.Equal(t, map[string]time.Duration{"nginx-fcgi-unix": 6 * time.Second}, p.Paired.Windows)
		}},
		{"a fixed count of pairs", []string{"-reps", "4", "-topologies", "standalone,nginx-http"}, func(t *testing.T, p plan.Plan) {
			assert.Equal(t, 4, p.Paired.Pairs)
			assert.Nil(t, p.RepsAuto, "no budget")
			assert.Nil(t, p.Paired.Windows)
		}},
		{"paired", []string{"-preset", "paired"}, func(t *testing.T, p plan.Plan) {
			require.NotNil(t, p.Paired)
			assert.False(t, p.Paired.Duet)
			assert.Equal(t, 2*time.Second, p.Duration)
			require.NotNil(t, p.Paired.Check)
			assert.Equal(t, results.LoadWrk, p.Paired.Check.Load)
			assert.Equal(t, 15*time.Minute, p.RepsAuto.Budget)
		}},
		{"paired on wrk drops the preset's cross-check", []string{"-preset", "paired", "-load", "wrk", "-budget", "30m"}, func(t *testing.T, p plan.Plan) {
			assert.Nil(t, p.Paired.Check)
		}},
		{"2013", []string{"-preset", "2013"}, func(t *testing.T, p plan.Plan) {
			assert.Nil(t, p.Paired)
			assert.Nil(t, p.RepsAuto)
			assert.Equal(t, 12, p.Reps)
			assert.Equal(t, 15*time.Second, p.Duration)
			assert.Equal(t, []results.Generator{results.LoadWrk}, p.LoadList())
			assert.Empty(t, p.UpstreamKeepalive)
		}},
		{"2013 on a budget", []string{"-preset", "2013", "-budget", "3h"}, func(t *testing.T, p plan.Plan) {
			require.NotNil(t, p.RepsAuto)
			assert.Equal(t, 3*time.Hour, p.RepsAuto.Budget)
		}},
		{"rounds from the duet's plan", []string{"-design", "rounds", "-reps", "2"}, func(t *testing.T, p plan.Plan) {
			assert.Nil(t, p.Paired)
			assert.Equal(t, 2, p.Reps)
			assert.Equal(t, []results.Generator{results.LoadBuiltin}, p.Loads)
		}},
		{"a scenario", []string{"-preset", "2009"}, func(t *testing.T, p plan.Plan) {
			assert.Equal(t, "2009", p.Scenario)
			assert.Equal(t, []int{30, 100, 1000, 5000}, p.Connections)
			assert.Nil(t, p.Paired)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plannedFor(t, tc.args...)
			require.NoError(t, err)
			tc.check(t, p)
		})
	}
}

// TestCompareExplicitWindowOfNoTopology: the user's own TOPOLOGY=D of a
// topology the plan lacks is refused, naming the flag.
func TestCompareExplicitWindowOfNoTopology(t *testing.T) {
	_, err := plannedFor(t, "-topologies", "standalone,nginx-http", "-window", "3s,nginx-fcgi-tcp=6s")
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Contains(t, err.Error(), `-window: "nginx-fcgi-tcp" is not a topology of the plan`)
}

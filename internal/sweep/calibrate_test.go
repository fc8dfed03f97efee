package sweep

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

func cpuRange(n int) []int {
	cpus := make([]int, n)
	for i := range cpus {
		cpus[i] = i
	}
	return cpus
}

// TestChooseSplit: the model's split for fake calibration figures. The
// figures are this 2-core machine's (docs/output.md: wrk 17 µs, cmd/hello 25 µs a
// request standalone at GOMAXPROCS 8 on one CPU; wrk 12 µs, nginx 12 µs on
// nginx-return) and variations of them.
func TestChooseSplit(t *testing.T) {
	standalone := func(load, server float64, g int) results.SplitFigure {
		return results.SplitFigure{Topology: "standalone", LoadUS: load, ServerUS: server, Parallel: g}
	}
	ret := func(load, server float64) results.SplitFigure {
		return results.SplitFigure{Topology: "nginx-return", Reference: true, LoadUS: load, ServerUS: server}
	}
	for _, tc := range []struct {
		name         string
		cpus         int
		figs         []results.SplitFigure
		load, server string
		headroom     bool
		note         string
		predicted    []float64
	}{
		{"2 cores: the only split, the ceiling load-bound", 2,
			[]results.SplitFigure{standalone(17, 25, 8), ret(12, 12)},
			"0", "1", false, "nginx-return's saturation", []float64{0.68, 1}},
		{"2 cores, a cheap generator: headroom everywhere", 2,
			[]results.SplitFigure{standalone(5, 25, 8), ret(5, 12)},
			"0", "1", true, "", []float64{0.2, 0.417}},
		{"2 cores, a generator dearer than the server: nothing works", 2,
			[]results.SplitFigure{standalone(30, 25, 8), ret(12, 12)},
			"0", "1", false, "no split keeps the load side out of the way", []float64{1.2, 1}},
		{"16 cores: nginx-return needs 9 load CPUs", 16,
			[]results.SplitFigure{standalone(17, 25, 8), ret(12, 12)},
			"0-8", "9-15", true, "", []float64{0.529, 0.778}},
		{"16 cores, standalone alone at GOMAXPROCS 8: 7 load CPUs", 16,
			[]results.SplitFigure{standalone(17, 25, 8)},
			"0-6", "7-15", true, "", []float64{0.777}},
		{"16 cores at GOMAXPROCS 1: one load CPU feeds one server CPU", 16,
			[]results.SplitFigure{standalone(17, 25, 1)},
			"0", "1-15", true, "", []float64{0.68}},
		{"64 cores: 34 load CPUs keep nginx-return under 90%", 64,
			[]results.SplitFigure{standalone(17, 25, 64), ret(12, 12)},
			"0-33", "34-63", true, "", []float64{0.6, 0.882}},
		{"64 cores, a dear generator: the most load CPUs, and the advice", 64,
			[]results.SplitFigure{standalone(100, 1, 64), ret(100, 1)},
			"0-62", "63", false, "compare -swarm", []float64{1.587, 1.587}},
		{"64 cores, the ceiling out of reach but standalone fine", 64,
			[]results.SplitFigure{standalone(17, 25, 8), ret(60, 1)},
			"0-6", "7-63", false, "nginx-return", []float64{0.777, 488.571}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			load, server, headroom, note := ChooseSplit(cpuRange(tc.cpus), tc.figs)
			assert.Equal(t, tc.load, load.String())
			assert.Equal(t, tc.server, server.String())
			assert.Equal(t, tc.headroom, headroom)
			if tc.note == "" {
				assert.Empty(t, note)
			} else {
				assert.Contains(t, note, tc.note)
			}
			for i, f := range tc.figs {
				assert.InDelta(t, tc.predicted[i], f.Predicted, 1e-3, f.Topology)
			}
		})
	}
}

// TestCalibrateRuns: a real sweep with -cpus auto calibrates on
// standalone and nginx-return with cmd/hello, nginx and wrk before its
// one cell, records the figures and the split in env.json, says them in
// the progress, runs the cell on the split, and stays within its bound.
func TestCalibrateRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs cmd/hello, nginx and wrk")
	}
	wrkBin, err := exec.LookPath("wrk")
	if err != nil {
		t.Skip("needs wrk")
	}
	nginxBin, err := nginx.Find()
	if err != nil {
		t.Skipf("needs nginx: %v", err)
	}
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	if allowed.Len() < 2 {
		t.Skip("needs 2 CPUs to split")
	}
	p := plan.DefaultPlan()
	p.Topologies = []string{"nginx-http"}
	p.GOMAXPROCS = []int{1}
	p.Connections = []int{50}
	p.Threads = 2
	p.Reps = 1
	p.Duration, p.Warmup = 2*time.Second, time.Second
	p.Isolation = results.IsolateNone
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var progress, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = Run(ctx, Options{Plan: p, Dir: dir, FreePorts: true, HelloBin: testenv.HelloBin(t), WrkBin: wrkBin, NginxBin: nginxBin,
		Progress: &progress, Log: &log, CalibrateCPUs: true})
	require.NoError(t, err, "progress:\n%s\nlog:\n%s", progress.String(), log.String())
	t.Logf("progress:\n%s", progress.String())

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	sp := env.CPUSplit
	require.NotNil(t, sp)
	assert.Equal(t, allowed.Len(), sp.CPUs)
	require.Len(t, sp.Figures, 2)
	for i, name := range []string{"standalone", "nginx-return"} {
		f := sp.Figures[i]
		assert.Equal(t, name, f.Topology)
		assert.Positive(t, f.ReqPerSec, name)
		assert.Positive(t, f.LoadUS, name)
		assert.Positive(t, f.ServerUS, name)
		assert.Positive(t, f.Predicted, name)
	}
	assert.Equal(t, 1, sp.Figures[0].Parallel, "standalone at GOMAXPROCS 1")
	assert.True(t, sp.Figures[1].Reference)
	assert.Equal(t, sp.Load, env.Plan.PinLoad)
	assert.Equal(t, sp.Server, env.Plan.PinServer)
	assert.NotEmpty(t, sp.Load)
	assert.Less(t, sp.Took, 20*time.Second, "the calibration is bounded")
	assert.Contains(t, progress.String(), "cpus auto: load generator on "+sp.Load+", servers on "+sp.Server)
	require.Len(t, runs, 1)
	assert.Equal(t, sp.Load, runs[0].LoadCPUs)
	assert.Equal(t, sp.Server, runs[0].ServerCPUs)
	assert.Empty(t, runs[0].Error)
}

// TestCalibrateLeavesThePlan: the calibration runs as a sweep of its own:
// when its servers do not start, the sweep's plan, CPU lists, topologies
// and generators are as they were.
func TestCalibrateLeavesThePlan(t *testing.T) {
	allowed, err := cpuset.Allowed()
	require.NoError(t, err)
	if allowed.Len() < 2 {
		t.Skip("needs 2 CPUs to split")
	}
	f := newFakeSweep(t, smallPlan("standalone", "nginx-http"))
	f.CalibrateCPUs, f.NginxBin = true, "nginx"
	f.startErr, f.failStartN = errors.New("no servers"), 1
	before, res, gens := f.plan, f.res, f.generators
	err = f.calibrate(context.Background())
	require.ErrorContains(t, err, "starting the servers for the calibration: no servers")
	require.Len(t, f.starts, 1)
	assert.Equal(t, []string{"standalone", "nginx-return"}, names(f.starts[0].Topologies), "the calibration's topologies")
	assert.NotEqual(t, res.ServerCPUs, f.starts[0].CPUs, "on its half of the CPUs")
	assert.Equal(t, before, f.plan)
	assert.Equal(t, res, f.res)
	assert.Equal(t, reflect.ValueOf(gens).Pointer(), reflect.ValueOf(f.generators).Pointer(), "the sweep's own generators")
	assert.Nil(t, f.env.CPUSplit, "no split chosen")
}

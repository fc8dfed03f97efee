package sweep

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// TestSpeedProbeSweep: a real sweep with -speed-probe: a probe on every
// CPU from before the first run, every run's record with the speed of
// its servers' and its load's CPUs, and no probe left when it ends.
func TestSpeedProbeSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs cmd/hello, the engine and the probes")
	}
	if os.Geteuid() != 0 {
		t.Skip("the probes' real-time priority needs root")
	}
	p := smallPlan("standalone")
	p.GOMAXPROCS = []int{1}
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Connections, p.Threads = []int{20}, 2
	p.Reps, p.Duration, p.Warmup = 2, time.Second, 0
	p.Isolation = results.IsolateNone
	p.SpeedProbe = true
	bin := testenv.TopobenchBin(t)
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var progress, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := Run(ctx, Options{Plan: p, Dir: dir, FreePorts: true, Progress: &progress, Log: &log,
		HelloBin: testenv.HelloBin(t), LoadBin: bin})
	require.NoError(t, err, "%s\n%s", progress.String(), log.String())
	assert.Equal(t, 2, out.Measured)
	assert.Contains(t, progress.String(), "speed probes: ")

	_, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	for _, r := range runs {
		require.NotNil(t, r.Noise, r.Name())
		sp := r.Noise.Speed
		require.NotNil(t, sp, r.Name())
		assert.Positive(t, sp.Servers, r.Name())
		assert.Positive(t, sp.Load, r.Name())
		assert.GreaterOrEqual(t, sp.Samples, 8, "%s: a spin every 100 ms of each CPU over about a second", r.Name())
	}
	assert.Empty(t, probesLeft(t, bin), "no probe outlives the sweep")
}

// probesLeft lists the running processes of bin's speed command.
func probesLeft(t *testing.T, bin string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var left []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		for i, a := range args {
			if a == bin && i+1 < len(args) && args[i+1] == "speed" {
				left = append(left, strings.Join(args, " "))
			}
		}
	}
	return left
}

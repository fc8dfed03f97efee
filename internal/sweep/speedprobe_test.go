package sweep

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/speed"
	"github.com/topobench/topobench/internal/testenv"
)

// TestSpeedOf: each side reads the probes of its own CPUs over the
// window, every probe where it is not pinned; no probes, no speed.
func TestSpeedOf(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := &speedProbes{probes: []speedProbe{{cpu: 0, series: &speed.Series{}}, {cpu: 1, series: &speed.Series{}}}}
	for i := range 10 {
		at := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		p.probes[0].series.Add(speed.Sample{At: at, Spin: time.Millisecond, Turns: 4000})
		p.probes[1].series.Add(speed.Sample{At: at, Spin: time.Millisecond, Turns: 8000})
	}
	end := t0.Add(time.Second)
	for _, tt := range []struct {
		name          string
		servers, load cpuset.CPUSet
		from          time.Time
		want          *results.Speed
	}{
		{"pinned", cpuset.Of(1), cpuset.Of(0), t0, &results.Speed{Servers: 8, Load: 4, Samples: 20}},
		{"unpinned", cpuset.CPUSet{}, cpuset.CPUSet{}, t0, &results.Speed{Servers: 6, Load: 6, Samples: 40}},
		{"half the window", cpuset.Of(1), cpuset.Of(0), t0.Add(500 * time.Millisecond), &results.Speed{Servers: 8, Load: 4, Samples: 10}},
		{"no sample in it", cpuset.Of(1), cpuset.Of(0), end, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, p.speedOf(tt.servers, tt.load, tt.from, end))
		})
	}
	var none *speedProbes
	assert.Nil(t, none.speedOf(cpuset.Of(1), cpuset.Of(0), t0, end))
}

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

// TestSpeedProbeExits: a probe that exits at once (here a program that
// is no probe) fails the sweep's start in one line naming the CPU, and
// stopping the probes then waits for what is left of them.
func TestSpeedProbeExits(t *testing.T) {
	s := &sweep{Options: Options{LoadBin: "false", Progress: io.Discard, Log: io.Discard}, plan: Plan{Plan: results.Plan{SpeedProbe: true}}}
	err := s.startSpeedProbes(context.Background())
	s.stopSpeedProbes()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-speed-probe: the probe on CPU ")
	assert.Contains(t, err.Error(), " exited: ")
	assert.NotContains(t, err.Error(), "\n")
}

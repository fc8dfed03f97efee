package rig

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/speed"
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

// TestSpeedProbeExits: a probe that exits at once (here a program that
// is no probe) fails the sweep's start in one line naming the CPU, and
// stopping the probes then waits for what is left of them.
func TestSpeedProbeExits(t *testing.T) {
	s := New(Config{Progress: io.Discard, Log: io.Discard})
	err := s.StartSpeedProbes(context.Background(), "false")
	s.StopSpeedProbes()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-speed-probe: the probe on CPU ")
	assert.Contains(t, err.Error(), " exited: ")
	assert.NotContains(t, err.Error(), "\n")
	var fe *plan.FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, plan.SpeedProbe, fe.Field)
}

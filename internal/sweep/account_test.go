package sweep

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
)

// TestAccount checks the arithmetic of a run's CPU and noise on made-up
// samples of a 2-CPU machine over 10s (20s of CPU time).
func TestAccount(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	stat := func(busy, steal, idle float64) procstat.Stat {
		return procstat.Stat{All: procstat.CPUTimes{User: sec(busy), Steal: sec(steal), Idle: sec(idle)}}
	}
	t0 := time.Unix(1000, 0)
	before := sample{at: t0, stat: stat(100, 10, 100),
		server: procstat.Times{User: sec(5)}, nginx: procstat.Times{User: sec(7)}}
	tests := []struct {
		name        string
		busy, steal float64 // over the window
		flagged     string
	}{
		// ours: load 3 + server 6 + nginx 4 = 13s.
		{"quiet", 14, 0.5, ""},
		{"others", 17, 0, "others 20% > 10%"},
		{"steal", 13, 2, "steal 10% > 5%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := sample{at: t0.Add(10 * time.Second), stat: stat(100+tt.busy, 10+tt.steal, 100+20-tt.busy-tt.steal),
				server: procstat.Times{User: sec(9), System: sec(2)}, nginx: procstat.Times{User: sec(10), System: sec(1)}}
			run := results.Run{Figures: &results.Figures{Requests: 100000}, CPU: &results.CPU{Load: results.Usage{User: 1, System: 2}}}
			(&sweep{Options: Options{Log: io.Discard}}).account(&run, before, after)
			require.NotNil(t, run.Noise)
			assert.InDelta(t, 4, run.CPU.Server.User, 1e-9)
			assert.InDelta(t, 2, run.CPU.Server.System, 1e-9)
			assert.InDelta(t, 4, run.CPU.Nginx.Total(), 1e-9)
			assert.InDelta(t, 60, results.PerRequest(run.CPU.Server, 100000), 1e-6, "6s over 100k requests")
			assert.InDelta(t, tt.busy, run.Noise.Busy, 1e-9)
			assert.InDelta(t, tt.busy-13, run.Noise.Others, 1e-9)
			assert.InDelta(t, tt.steal, run.Noise.Steal, 1e-9)
			assert.Equal(t, 10*time.Second, run.Noise.Window)
			assert.Equal(t, tt.flagged, run.Noise.Flagged)
		})
	}
}

func TestCPUNote(t *testing.T) {
	run := results.Run{
		Figures: &results.Figures{Requests: 1000},
		CPU:     &results.CPU{Load: results.Usage{User: 0.01}, Nginx: results.Usage{System: 0.02}, Server: results.Usage{User: 0.03}},
		Settle:  &results.Settle{Waited: 10 * time.Second, CPUShare: 0.4},
		Noise:   &results.Noise{Flagged: "steal 10% > 5%"},
	}
	assert.Equal(t, "  NOT SETTLED: servers at 40% of a CPU after 10s; cpu/req: load 10.0us nginx 20.0us server 30.0us; NOISY: steal 10% > 5%", cpuNote(run))
	assert.Empty(t, cpuNote(results.Run{}))
}

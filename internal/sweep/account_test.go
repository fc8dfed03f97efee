package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

func TestCPUNote(t *testing.T) {
	run := results.Run{
		Figures: &results.Figures{Requests: 1000},
		CPU:     &results.CPU{Load: results.Usage{User: 0.01}, Nginx: &results.Usage{System: 0.02}, Server: &results.Usage{User: 0.03}},
		Settle:  &results.Settle{Waited: 10 * time.Second, CPUShare: 0.4},
		Noise:   &results.Noise{Flagged: "steal 10% > 5%"},
	}
	assert.Equal(t, "  NOT SETTLED: servers at 40% of a CPU after 10s; cpu/req: load 10.0us nginx 20.0us server 30.0us; NOISY: steal 10% > 5%", cpuNote(run))
	assert.Empty(t, cpuNote(results.Run{}))
	run.Settle, run.Noise = nil, nil
	run.CPU.Servers = &results.GroupCPU{Seconds: 0.05, Span: results.SpanWindow, Utilization: 0.98}
	assert.Equal(t, "  cpu/req: load 10.0us nginx 20.0us server 30.0us; servers' group 50.0us over the window, utilization 0.98", cpuNote(run))
}

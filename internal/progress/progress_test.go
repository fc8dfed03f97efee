package progress

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

func TestCellLine(t *testing.T) {
	wrkRun := results.Run{Figures: new(wrk.Result{
		Requests: 600000, RequestsPerSec: 41163.4,
		Latency:      wrk.LatencyStats{Max: 275 * time.Millisecond},
		Distribution: []wrk.Percentile{{P: 50, Latency: 113 * time.Millisecond}, {P: 99, Latency: 1212 * time.Millisecond}},
		Errors:       wrk.Errors{Timeout: 3, Status: 12},
	}.Figures())}
	open := results.Run{Figures: new(load.Summary{
		Requests: 5000, TargetRate: 10000, AchievedRate: 10079, Late: 1190, Dropped: 2,
		Latency: load.Latency{P50: 101.4, P99: 128.4, Max: 300},
		Errors:  load.Errors{Connect: 1},
	}.Figures())}
	probe := results.Run{Cell: results.Cell{Schedule: results.Schedule{Probe: true, Requests: 400}}, Figures: new(load.Summary{
		Requests: 400, AchievedRate: 40, Concurrent: 400, Latency: load.Latency{P50: 10010, P99: 10020, Max: 10020},
	}.Figures())}
	h2 := results.Run{Figures: &results.Figures{Requests: 17396, ReqPerSec: 17396, Mean: 2240 * time.Microsecond, Max: 7650 * time.Microsecond,
		Errors: results.Errors{Read: 2}, Protocol: "h2", Streams: 10}}
	for _, tt := range []struct {
		name string
		run  results.Run
		want string
	}{
		{"h2load", h2, "17,396 req/s  mean 2.2ms  max 7.7ms  errors: connect 0 read 2 write 0 timeout 0 non-2xx 0  h2, 10 in flight a connection"},
		{"wrk", wrkRun, "41,163 req/s  p50 113.0ms  p99 1.21s  errors: connect 0 read 0 write 0 timeout 3 non-2xx 12"},
		{"open loop", open, "10,079 req/s  p50 101.4ms  p99 128.4ms  errors: connect 1 read 0 write 0 timeout 0 non-2xx 0  (target 10,000 req/s, late 1190, dropped 2)"},
		{"probe", probe, "400 of 400 served concurrently  max 10.02s  40 req/s  p50 10.01s  p99 10.02s  errors: connect 0 read 0 write 0 timeout 0 non-2xx 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, RunLine(tt.run))
		})
	}
}

func TestFormatHelpers(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Millisecond, "1.50s"},
		{time.Second, "1.00s"},
		{2500 * time.Microsecond, "2.5ms"},
		{999 * time.Microsecond, "999us"},
		{0, "0us"},
	} {
		assert.Equal(t, tt.want, Latency(tt.d), tt.d.String())
	}
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {999.5, "1,000"}, {1234567, "1,234,567"}, {100000, "100,000"},
	} {
		assert.Equal(t, tt.want, numfmt.Count(tt.f))
	}
	assert.Equal(t, 2*time.Minute+35*time.Second, Round(2*time.Minute+34*time.Second+600*time.Millisecond))
	assert.Equal(t, 12300*time.Millisecond, Round(12340*time.Millisecond))
	assert.Equal(t, 1, Width(9))
	assert.Equal(t, 3, Width(108))
	assert.Equal(t, "first", FirstLine("first\nsecond"))
	assert.Equal(t, "only", FirstLine("only"))
}

func TestHalfWidth(t *testing.T) {
	for _, tt := range []struct {
		name string
		hw   float64
		want string
	}{
		{"narrow", 0.07, "7%"},
		{"none", 0, "0%"},
		{"the figure's width", 1, "100%"},
		{"wider than the figure", 1590673.46, ">100%"},
		{"not a number", math.NaN(), ">100%"},
		{"unknown", math.Inf(1), "∞"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HalfWidth(tt.hw))
		})
	}
}

func TestCPUNote(t *testing.T) {
	run := results.Run{
		Figures: &results.Figures{Requests: 1000},
		CPU:     &results.CPU{Load: results.Usage{User: 0.01}, Nginx: &results.Usage{System: 0.02}, Server: &results.Usage{User: 0.03}},
		Settle:  &results.Settle{Waited: 10 * time.Second, CPUShare: 0.4},
		Noise:   &results.Noise{Flagged: "steal 10% > 5%"},
	}
	assert.Equal(t, "  NOT SETTLED: servers at 40% of a CPU after 10s; cpu/req: load 10.0us nginx 20.0us server 30.0us; NOISY: steal 10% > 5%", CPUNote(run))
	assert.Empty(t, CPUNote(results.Run{}))
	run.Settle, run.Noise = nil, nil
	run.CPU.Servers = &results.GroupCPU{Seconds: 0.05, Span: results.SpanWindow, Utilization: 0.98}
	assert.Equal(t, "  cpu/req: load 10.0us nginx 20.0us server 30.0us; servers' group 50.0us over the window, utilization 0.98", CPUNote(run))
}

func TestFailureKeepsTheChildsTail(t *testing.T) {
	err := "stdbuf: exit status 1\n    taskset: failed to set pid 0's affinity: Invalid argument"
	assert.Equal(t, err, Failure(err), "the cause is on the terminal, not only in summary.md")
	long := "wrk: exit status 1"
	for i := 0; i < 30; i++ {
		long += "\n    line"
	}
	long += "\n    the last line"
	got := Failure(long)
	assert.Len(t, splitLines(got), maxFailureLines)
	assert.Equal(t, "wrk: exit status 1", splitLines(got)[0])
	assert.Equal(t, "    the last line", splitLines(got)[maxFailureLines-1])
}

func splitLines(s string) []string { return strings.Split(s, "\n") }

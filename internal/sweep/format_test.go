package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/load"
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
	probe := results.Run{Cell: Cell{Schedule: results.Schedule{Probe: true, Requests: 400}}, Figures: new(load.Summary{
		Requests: 400, AchievedRate: 40, Concurrent: 400, Latency: load.Latency{P50: 10010, P99: 10020, Max: 10020},
	}.Figures())}
	for _, tt := range []struct {
		name string
		run  results.Run
		want string
	}{
		{"wrk", wrkRun, "41,163 req/s  p50 113.0ms  p99 1.21s  errors: connect 0 read 0 write 0 timeout 3 non-2xx 12"},
		{"open loop", open, "10,079 req/s  p50 101.4ms  p99 128.4ms  errors: connect 1 read 0 write 0 timeout 0 non-2xx 0  (target 10,000 req/s, late 1190, dropped 2)"},
		{"probe", probe, "400 of 400 served concurrently  max 10.02s  40 req/s  p50 10.01s  p99 10.02s  errors: connect 0 read 0 write 0 timeout 0 non-2xx 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cellLine(tt.run))
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
		assert.Equal(t, tt.want, fmtLatency(tt.d), tt.d.String())
	}
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {999.4, "999"}, {999.5, "1,000"}, {1234567, "1,234,567"}, {100000, "100,000"},
	} {
		assert.Equal(t, tt.want, groupThousands(tt.f))
	}
	assert.Equal(t, 2*time.Minute+35*time.Second, roundDur(2*time.Minute+34*time.Second+600*time.Millisecond))
	assert.Equal(t, 12300*time.Millisecond, roundDur(12340*time.Millisecond))
	assert.Equal(t, 1, width(9))
	assert.Equal(t, 3, width(108))
	assert.Equal(t, "first", firstLine("first\nsecond"))
	assert.Equal(t, "only", firstLine("only"))
}

// Package wrk runs the wrk HTTP load generator and reads what it prints.
//
// Parse turns wrk's text report (wrk 3.x and 4.x print the same layout) into
// a Result, every unit converted: latencies to time.Duration, byte counts to
// bytes, "12.34k" counts to plain numbers. wrk rounds what it prints to two
// decimals, so the embedded Lua script (Script, WriteScript) adds a block of
// exact figures — percentiles up to p99.99, the maximum, error counts — that
// Parse reads into Result.Script.
//
// Run starts wrk as a child process (optionally pinned, or in a network
// namespace, as internal/proc wraps it), tees its output, stops it
// gracefully when the context ends and returns the parsed Result together
// with the raw output; RunCPU adds the CPU time wrk used. It times wrk's
// start-up (Result.Startup) and gives up on a wrk that overruns its window,
// returning a *HangError (errors.Is ErrHung) with wrk's threads and sockets
// as /proc showed them (ProcessState).
package wrk

import (
	"time"

	"github.com/topobench/topobench/internal/results"
)

// Result is one wrk report. Durations are time.Duration; JSON field names
// carry their unit (_ns for durations).
type Result struct {
	// URL, Duration, Threads and Connections come from the header lines
	// "Running 30s test @ URL" and "N threads and M connections".
	URL         string        `json:"url"`
	Duration    time.Duration `json:"duration_ns"`
	Threads     int           `json:"threads"`
	Connections int           `json:"connections"`

	// Latency is the "Thread Stats Latency" line. Requests that timed out
	// are not in it (wrk drops them from its samples).
	Latency LatencyStats `json:"latency"`
	// ReqPerSec is the "Thread Stats Req/Sec" line: the request rate of
	// one thread, sampled every 100ms.
	ReqPerSec RateStats `json:"req_per_sec_per_thread"`
	// Distribution is the "Latency Distribution" block (wrk --latency):
	// p50, p75, p90 and p99, rounded as printed.
	Distribution []Percentile `json:"distribution,omitempty"`

	// Requests completed in Elapsed, and BytesRead as printed ("7.25MB",
	// so three significant digits).
	Requests  int64         `json:"requests"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	BytesRead float64       `json:"bytes_read"`

	// Errors holds the "Socket errors" and "Non-2xx or 3xx responses"
	// lines; zero when wrk printed neither.
	Errors Errors `json:"errors"`

	RequestsPerSec      float64 `json:"requests_per_sec"`
	TransferBytesPerSec float64 `json:"transfer_bytes_per_sec"`

	// Script holds the exact figures printed by the topobench Lua script,
	// nil when wrk ran without it.
	Script *ScriptStats `json:"script,omitempty"`

	// Startup is how long wrk took from its start to starting its clock
	// (printing "N threads and M connections"), measured by Run, not read
	// by Parse; zero when unknown. The threads started first send load
	// during it, and wrk counts those requests but not that time, so a
	// long Startup inflates RequestsPerSec.
	Startup time.Duration `json:"startup_ns,omitempty"`
}

// Errors are wrk's error counters, in the record's classes (its
// "Non-2xx or 3xx responses" are Status).
type Errors = results.Errors

// LatencyStats is a "Thread Stats" line for latency.
type LatencyStats struct {
	Avg   time.Duration `json:"avg_ns"`
	Stdev time.Duration `json:"stdev_ns"`
	Max   time.Duration `json:"max_ns"`
	// WithinStdev is the percentage of samples within one standard
	// deviation of the mean; nil when wrk printed "nan" (no samples).
	WithinStdev *float64 `json:"within_stdev_pct"`
}

// RateStats is a "Thread Stats" line for request rates.
type RateStats struct {
	Avg         float64  `json:"avg"`
	Stdev       float64  `json:"stdev"`
	Max         float64  `json:"max"`
	WithinStdev *float64 `json:"within_stdev_pct"`
}

// Percentile is one latency percentile; P is in percent (99.9 = p99.9).
type Percentile struct {
	P       float64       `json:"p"`
	Latency time.Duration `json:"latency_ns"`
}

// ScriptStats are the exact figures the topobench Lua script prints from
// wrk's done() callback, at wrk's microsecond resolution.
type ScriptStats struct {
	Elapsed  time.Duration `json:"elapsed_ns"`
	Requests int64         `json:"requests"`
	Bytes    int64         `json:"bytes"`
	Errors   Errors        `json:"errors"`

	LatencyMin   time.Duration `json:"latency_min_ns"`
	LatencyMean  time.Duration `json:"latency_mean_ns"`
	LatencyStdev time.Duration `json:"latency_stdev_ns"`
	LatencyMax   time.Duration `json:"latency_max_ns"`
	// Percentiles are p50, p75, p90, p99, p99.9 and p99.99.
	Percentiles []Percentile `json:"percentiles"`
}

// ScriptPercentiles are the percentiles the topobench script prints.
var scriptPercentiles = []float64{50, 75, 90, 99, 99.9, 99.99}

// Percentile returns latency percentile p (in percent), exact from the
// script when it ran, otherwise as printed in the Latency Distribution;
// ok is false when neither has it.
func (r Result) Percentile(p float64) (d time.Duration, ok bool) {
	if r.Script != nil {
		for _, q := range r.Script.Percentiles {
			if q.P == p {
				return q.Latency, true
			}
		}
	}
	for _, q := range r.Distribution {
		if q.P == p {
			return q.Latency, true
		}
	}
	return 0, false
}

// MaxLatency is the largest latency sample, exact when the script ran.
func (r Result) MaxLatency() time.Duration {
	if r.Script != nil {
		return r.Script.LatencyMax
	}
	return r.Latency.Max
}

package results

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLegacyDecoding covers the old record forms one case at a time:
// which report wins, which percentiles are kept, what a failed old run
// becomes.
func TestLegacyDecoding(t *testing.T) {
	const cell = `"topology": "nginx-http", "gomaxprocs": 1, "rep": 1`
	ms := time.Millisecond
	tests := []struct {
		name    string
		record  string
		figures *Figures // nil: the run failed
		command []string
	}{
		{
			name:    "an old failed run: no report, wrk_args kept",
			record:  `{` + cell + `, "wrk_args": ["wrk", "-c1"], "error": "starting nginx: exit status 1"}`,
			command: []string{"wrk", "-c1"},
		},
		{
			name:   "a null report is no report",
			record: `{` + cell + `, "result": null, "engine": null}`,
		},
		{
			name: "wrk without its script: the distribution's percentiles",
			record: `{` + cell + `, "result": {"requests": 100, "requests_per_sec": 50.5,
				"latency": {"avg_ns": 3000000, "max_ns": 9000000},
				"distribution": [{"p": 50, "latency_ns": 2000000}, {"p": 90, "latency_ns": 4000000}, {"p": 99, "latency_ns": 8000000}],
				"errors": {"timeout": 2, "non2xx": 1}}}`,
			figures: &Figures{Requests: 100, ReqPerSec: 50.5, Errors: Errors{Timeout: 2, Status: 1},
				Latency: true, Mean: 3 * ms, P50: 2 * ms, P90: 4 * ms, P99: 8 * ms, Max: 9 * ms},
		},
		{
			name: "wrk's script wins over the distribution, and gives the tail",
			record: `{` + cell + `, "result": {"requests": 100, "requests_per_sec": 50,
				"latency": {"avg_ns": 3000000, "max_ns": 9000000},
				"distribution": [{"p": 50, "latency_ns": 2000000}, {"p": 99, "latency_ns": 8000000}],
				"script": {"latency_mean_ns": 3100000, "latency_max_ns": 9100000, "percentiles": [
					{"p": 50, "latency_ns": 2100000}, {"p": 99, "latency_ns": 8100000},
					{"p": 99.9, "latency_ns": 8500000}, {"p": 99.99, "latency_ns": 9000000}]}}}`,
			figures: &Figures{Requests: 100, ReqPerSec: 50, Latency: true, Mean: 3100 * time.Microsecond,
				P50: 2100 * time.Microsecond, P99: 8100 * time.Microsecond, P999: 8500 * time.Microsecond, P9999: 9 * ms, Max: 9100 * time.Microsecond},
		},
		{
			name: "every request timed out: no latency, not zero latency",
			record: `{` + cell + `, "result": {"requests": 0, "requests_per_sec": 0,
				"latency": {"avg_ns": 0, "max_ns": 0}, "distribution": [], "errors": {"timeout": 500}}}`,
			figures: &Figures{Errors: Errors{Timeout: 500}},
		},
		{
			name: "wrk without p99 has no latency figures",
			record: `{` + cell + `, "result": {"requests": 10, "requests_per_sec": 5,
				"latency": {"avg_ns": 1, "max_ns": 2}, "distribution": [{"p": 50, "latency_ns": 1}]}}`,
			figures: &Figures{Requests: 10, ReqPerSec: 5, Max: 2},
		},
		{
			name: "the engine's summary, in milliseconds",
			record: `{` + cell + `, "engine": {"requests": 990, "sent": 1000, "target_rate": 100, "achieved_rate": 99,
				"late": 3, "dropped": 1, "errors": {"connect": 1, "read": 2, "write": 3, "timeout": 4, "status": 5},
				"latency_ms": {"mean": 1.5, "p50": 1, "p90": 2, "p99": 3, "p99.9": 4, "p99.99": 5, "max": 6}}}`,
			figures: &Figures{Requests: 990, Sent: 1000, ReqPerSec: 99, TargetRate: 100, Late: 3, Dropped: 1,
				Errors: Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5}, Histogram: true,
				Latency: true, Mean: 1500 * time.Microsecond, P50: ms, P90: 2 * ms, P99: 3 * ms, P999: 4 * ms, P9999: 5 * ms, Max: 6 * ms},
		},
		{
			name: "the engine's probe",
			record: `{` + cell + `, "engine": {"requests": 800, "sent": 800, "concurrent": 512,
				"latency_ms": {"p50": 10000, "p99": 10010, "max": 10020}}}`,
			figures: &Figures{Requests: 800, Sent: 800, Concurrent: 512, Histogram: true,
				Latency: true, P50: 10 * time.Second, P99: 10010 * ms, Max: 10020 * ms},
		},
		{
			name:    "an engine record with both: the engine's summary is the report",
			record:  `{` + cell + `, "engine": {"requests": 7, "achieved_rate": 7}, "result": {"requests": 9, "requests_per_sec": 9}}`,
			figures: &Figures{Requests: 7, ReqPerSec: 7, Histogram: true},
		},
		{
			name: "new figures win over an old report, and command over wrk_args",
			record: `{` + cell + `, "command": ["builtin"], "wrk_args": ["wrk"], "figures": {"requests": 1, "req_per_sec": 1, "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0, "non2xx": 0}, "latency": false},
				"result": {"requests": 9, "requests_per_sec": 9}}`,
			figures: &Figures{Requests: 1, ReqPerSec: 1},
			command: []string{"builtin"},
		},
		{
			name:    "unknown fields inside an old report are ignored",
			record:  `{` + cell + `, "result": {"requests": 3, "requests_per_sec": 1, "transfer_bytes_per_sec": 12, "whatever": [1]}}`,
			figures: &Figures{Requests: 3, ReqPerSec: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r Run
			require.NoError(t, json.Unmarshal([]byte(tt.record), &r))
			assert.Equal(t, tt.figures, r.Figures)
			assert.Equal(t, tt.figures == nil, r.Failed())
			assert.Equal(t, tt.command, r.Command)
			assert.Equal(t, Cell{Topology: "nginx-http", GOMAXPROCS: 1, Rep: 1}, r.Cell)

			// Written again, the record is in today's form and reads back
			// the same.
			b, err := json.Marshal(r)
			require.NoError(t, err)
			for _, old := range []string{`"wrk_args"`, `"result"`, `"engine"`} {
				assert.NotContains(t, string(b), old)
			}
			var again Run
			require.NoError(t, json.Unmarshal(b, &again))
			assert.Equal(t, r, again)
		})
	}
}

// TestLegacyStrictOutside: the record around an old report is read as
// strictly as a new one.
func TestLegacyStrictOutside(t *testing.T) {
	var r Run
	err := json.Unmarshal([]byte(`{"topology": "standalone", "gomaxprocs": 1, "rep": 1, "result": {"requests": 1}, "extra": 1}`), &r)
	assert.ErrorContains(t, err, `unknown field "extra"`)
}

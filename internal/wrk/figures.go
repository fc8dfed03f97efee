package wrk

import "github.com/topobench/topobench/internal/results"

// Figures is the run in the record's generator-neutral form: exact
// percentiles and mean from the script when it ran, else wrk's printed
// distribution.
func (r Result) Figures() results.Figures {
	f := results.Figures{Requests: r.Requests, ReqPerSec: r.RequestsPerSec, Max: r.MaxLatency(), Errors: r.Errors, Startup: r.Startup}
	p50, ok50 := r.Percentile(50)
	p99, ok99 := r.Percentile(99)
	f.Latency = f.Max > 0 && ok50 && ok99
	if f.Latency {
		f.P50, f.P99 = p50, p99
		f.P90, _ = r.Percentile(90)
		f.P999, _ = r.Percentile(99.9)
		f.P9999, _ = r.Percentile(99.99)
		f.Mean = r.Latency.Avg
		if r.Script != nil {
			f.Mean = r.Script.LatencyMean
		}
	}
	return f
}

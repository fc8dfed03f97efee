package results

import (
	"time"

	"github.com/topobench/topobench/internal/wrk"
)

// Figures are a run's measurements whichever generator produced them:
// wrk's report or the built-in engine's summary. Readers of a run's
// figures (the report, the sweep's progress line, topobench diff) go
// through Run.Figures, not through Result or Engine.
type Figures struct {
	// Requests is the count of complete answers; ReqPerSec their rate
	// (the engine's achieved rate in open loop).
	Requests  int64
	ReqPerSec float64
	// Errors are in wrk's classes (the engine counts in the same ones).
	Errors wrk.Errors
	// Latency says whether the run has latency samples and p50/p99; a
	// run where every request failed has none. P90, P999 and P9999 are
	// zero when the generator did not report them (wrk without its
	// script), Mean when it did not either.
	Latency                               bool
	Mean, P50, P90, P99, P999, P9999, Max time.Duration
	// Open loop only: the target rate, requests that found no free
	// connection at their intended start (late) and were never sent
	// (dropped).
	TargetRate    float64
	Late, Dropped int64
	// Probe only: requests answered within the probe's bound, that is
	// served concurrently.
	Concurrent int64
}

// Figures returns the run's measurements; ok is false when it has none
// (a failed cell without a report).
func (r Run) Figures() (f Figures, ok bool) {
	switch {
	case r.Engine != nil:
		s := r.Engine
		ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
		f = Figures{
			Requests: s.Requests, ReqPerSec: s.AchievedRate,
			Errors: wrk.Errors{Connect: s.Errors.Connect, Read: s.Errors.Read, Write: s.Errors.Write,
				Timeout: s.Errors.Timeout, Status: s.Errors.Status},
			TargetRate: s.TargetRate, Late: s.Late, Dropped: s.Dropped, Concurrent: s.Concurrent,
		}
		if l := s.Latency; l.Max > 0 {
			f.Latency = true
			f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999, f.Max = ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.P9999), ms(l.Max)
		}
		return f, true
	case r.Result != nil:
		res := r.Result
		f = Figures{Requests: res.Requests, ReqPerSec: res.RequestsPerSec, Errors: res.Errors, Max: res.MaxLatency()}
		p50, ok50 := res.Percentile(50)
		p99, ok99 := res.Percentile(99)
		f.Latency = f.Max > 0 && ok50 && ok99
		if f.Latency {
			f.P50, f.P99 = p50, p99
			f.P90, _ = res.Percentile(90)
			f.P999, _ = res.Percentile(99.9)
			f.P9999, _ = res.Percentile(99.99)
			f.Mean = res.Latency.Avg
			if res.Script != nil {
				f.Mean = res.Script.LatencyMean
			}
		}
		return f, true
	}
	return Figures{}, false
}

package load

import (
	"time"

	"github.com/topobench/topobench/internal/results"
)

// Figures is the run in the record's generator-neutral form. Framing
// errors are already counted among the read errors.
func (s Summary) Figures() results.Figures {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	e := s.Errors
	f := results.Figures{
		Requests: s.Requests, Sent: s.Sent, ReqPerSec: s.AchievedRate,
		Errors:     results.Errors{Connect: e.Connect, Read: e.Read, Write: e.Write, Timeout: e.Timeout, Status: e.Status},
		TargetRate: s.TargetRate, Late: s.Late, Dropped: s.Dropped, Concurrent: s.Concurrent,
		Histogram: true, Threads: s.Threads, ReadyPerWake: s.ReadyPerWake,
		Handshakes: s.Handshakes, HandshakesPerSec: s.HandshakesPerSec,
	}
	if l := s.Latency; l.Max > 0 {
		f.Latency = true
		f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999, f.Max = ms(l.Mean), ms(l.P50), ms(l.P90), ms(l.P99), ms(l.P999), ms(l.P9999), ms(l.Max)
	}
	return f
}

// Figures is a window's slice as a run's figures: its answers, rate and
// errors; its latency is in its window's histogram only.
func (sl Slice) Figures() results.Figures {
	e := sl.Errors
	return results.Figures{
		Requests: sl.Requests, ReqPerSec: sl.AchievedRate(),
		Errors: results.Errors{Connect: e.Connect, Read: e.Read, Write: e.Write, Timeout: e.Timeout, Status: e.Status},
	}
}

package load

import (
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary is a run in numbers; its JSON form is what `topobench load -json`
// prints and what scripts read.
type Summary struct {
	Target   string `json:"target"`
	Mode     string `json:"mode"` // "closed", "open" or "probe"
	Arrivals string `json:"arrivals,omitempty"`
	// Seed of the open-mode schedule: generators sharing a target rate
	// need distinct ones (see Split).
	Seed        uint64 `json:"seed,omitempty"`
	Connections int    `json:"connections"` // opened in all

	ElapsedSeconds float64 `json:"elapsed_s"`
	Sent           int64   `json:"sent"`
	// Requests is the count of complete responses, whatever their status.
	Requests   int64   `json:"requests"`
	TargetRate float64 `json:"target_rate"` // 0 in closed mode
	// AchievedRate is answers per second: of the run in closed mode, as
	// wrk counts; of the schedule in open mode (the intended start of the
	// last request plus one mean gap), so that a long handler wait at the
	// end does not dilute it. Requests the server did not answer in time,
	// or the engine could not send, are missing from it.
	AchievedRate float64 `json:"achieved_rate"`
	// Late requests found no free connection at their intended start;
	// dropped ones were never sent (see Options.Timeout).
	Late    int64 `json:"late"`
	Dropped int64 `json:"dropped"`

	Errors Errors `json:"errors"`
	// Reconnects counts dials of connections that had been open: the
	// server closed them (or the engine gave up on an answer). The first
	// dials happen before the measured time; a reconnect in the measured
	// time does not count in any request's latency.
	Reconnects int64 `json:"reconnects"`
	// ConnectRetries are tries to connect, before the measured time, that
	// failed before one succeeded.
	ConnectRetries int64 `json:"connect_retries,omitempty"`
	// LateAnswers came in after their request had been counted as a
	// timeout: the connection was kept for them, as wrk keeps it; they
	// are neither requests nor in the histogram.
	LateAnswers int64   `json:"late_answers,omitempty"`
	Latency     Latency `json:"latency_ms"`

	// Handshakes counts the TLS handshakes of connections opened in the
	// measured time (those opened before it are not counted), and
	// HandshakesPerSec their rate over the run's window: with
	// Options.Close a handshake a request. HandshakeMeanMs is their mean
	// time, from ClientHello to the server's Finished checked; a
	// request's latency in closed loop does not hold it.
	// Resumed of them resumed a session (TLS.Resume).
	Handshakes       int64   `json:"handshakes,omitempty"`
	HandshakesPerSec float64 `json:"handshakes_per_sec,omitempty"`
	HandshakeMeanMs  float64 `json:"handshake_mean_ms,omitempty"`
	Resumed          int64   `json:"resumed,omitempty"`

	// Threads is the closed loop's event loops (0: a goroutine per
	// connection). ReadyPerWake is the mean count of connections an
	// epoll_wait of theirs returned, over the Wakes in the measured time
	// that returned any: how many answers arrive together, the shape of
	// the arrivals the server sees.
	Threads      int     `json:"threads,omitempty"`
	ReadyPerWake float64 `json:"ready_per_wake,omitempty"`
	Wakes        int64   `json:"wakes,omitempty"`

	// Probe only (see Probe): the handler wait each request asked for, the
	// bound within which an answer counts as served concurrently, and how
	// many were.
	ProbeWaitMs   float64 `json:"probe_wait_ms,omitempty"`
	ProbeWithinMs float64 `json:"probe_within_ms,omitempty"`
	Concurrent    int64   `json:"concurrent,omitempty"`

	// StartAt is Options.StartAt, and StartSkewMs how much later than it
	// the measured run began (by this machine's clock): scheduling and
	// timer lateness, or a StartAt that had passed before the connections
	// were open.
	// StartSlackMs is how long before StartAt the connections were open:
	// the margin left of the lead a harness gave (negative when StartAt
	// had passed).
	StartAt      time.Time `json:"start_at,omitzero"`
	StartSkewMs  float64   `json:"start_skew_ms,omitempty"`
	StartSlackMs float64   `json:"start_slack_ms,omitempty"`

	CPUSeconds float64 `json:"cpu_s"`
	// CPUPerRequestUs is CPUSeconds over Requests, in microseconds.
	CPUPerRequestUs float64 `json:"cpu_per_request_us"`
	// MeasuredCPUSeconds is the part of CPUSeconds spent in the measured
	// time, user and system (connecting, 5000 connections with a first
	// request each, is not in it), and MeasuredCPUPerRequestUs that over
	// Requests: the engine's steady cost, which a session's windows
	// report too. Zero when the run did not end by its duration or count.
	MeasuredCPUUserSeconds  float64 `json:"measured_cpu_user_s,omitempty"`
	MeasuredCPUSysSeconds   float64 `json:"measured_cpu_sys_s,omitempty"`
	MeasuredCPUPerRequestUs float64 `json:"measured_cpu_per_request_us,omitempty"`
	Interrupted             bool    `json:"interrupted,omitempty"`
}

// Errors are counted in wrk's classes. Framing errors (see ErrFraming) are
// read errors, as wrk counts a response its parser rejects; Framing says how
// many of them.
type Errors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"`
	// Status counts answers with status 400 and above (wrk's "Non-2xx or
	// 3xx responses").
	Status  int64 `json:"status"`
	Framing int64 `json:"framing"`
}

// Total is the number of failed requests.
func (e Errors) Total() int64 { return e.Connect + e.Read + e.Write + e.Timeout + e.Status }

// Latency holds percentiles in milliseconds.
type Latency struct {
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
	Max   float64 `json:"max"`
}

// LatencyOf reads the percentiles of a histogram in microseconds.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		Mean: h.Mean() / 1000,
		P50:  ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)),
		P99: ms(h.ValueAtQuantile(99)), P999: ms(h.ValueAtQuantile(99.9)),
		P9999: ms(h.ValueAtQuantile(99.99)), Max: ms(h.Max()),
	}
}

func (e *engine) summarize(h *hdrhistogram.Histogram, elapsed, window, cpu time.Duration, late, dropped int64, interrupted bool) Summary {
	s := Summary{
		Target: e.opt.Target.String(), Mode: "closed",
		ElapsedSeconds: elapsed.Seconds(), Late: late, Dropped: dropped,
		Latency: LatencyOf(h), CPUSeconds: cpu.Seconds(), Interrupted: interrupted,
	}
	if len(e.loops) > 0 {
		s.Threads = len(e.loops)
		s.ReadyPerWake, s.Wakes = e.batching()
	}
	if e.opt.Rate > 0 {
		s.Mode, s.Arrivals, s.TargetRate, s.Seed = "open", string(e.opt.Arrivals), e.opt.Rate, e.opt.Seed
	}
	if !e.opt.StartAt.IsZero() {
		s.StartAt = e.opt.StartAt
		s.StartSlackMs = float64(e.slack) / float64(time.Millisecond)
		if !e.start.IsZero() {
			s.StartSkewMs = float64(e.start.Sub(e.opt.StartAt)) / float64(time.Millisecond)
		}
	}
	var hsNs int64
	for _, c := range e.conns {
		s.Connections++
		s.Sent += c.sent.Load()
		s.Requests += c.answered.Load()
		c.addErrors(&s.Errors)
		s.Reconnects += c.reconnects.Load()
		s.ConnectRetries += c.retries.Load()
		s.LateAnswers += c.late.Load()
		s.Handshakes += c.handshakes.Load()
		s.Resumed += c.resumed.Load()
		hsNs += c.handshakeNs.Load()
	}
	if e.opt.Rate == 0 {
		window = elapsed
	}
	if window > 0 {
		s.AchievedRate = float64(s.Requests) / window.Seconds()
		s.HandshakesPerSec = float64(s.Handshakes) / window.Seconds()
	}
	if s.Handshakes > 0 {
		s.HandshakeMeanMs = float64(hsNs) / float64(s.Handshakes) / 1e6
	}
	if s.Requests > 0 {
		s.CPUPerRequestUs = cpu.Seconds() * 1e6 / float64(s.Requests)
	}
	return s
}

func (s *Summary) setMeasuredCPU(c cpuTimes) {
	s.MeasuredCPUUserSeconds, s.MeasuredCPUSysSeconds = c.user.Seconds(), c.sys.Seconds()
	if s.Requests > 0 {
		s.MeasuredCPUPerRequestUs = c.total().Seconds() * 1e6 / float64(s.Requests)
	}
}

// WriteText prints the summary for people, in the order wrk prints.
func (s Summary) WriteText(w io.Writer) error {
	l := s.Latency
	mode := fmt.Sprintf("closed loop, %d connections", s.Connections)
	if s.Threads > 0 {
		mode += fmt.Sprintf(" on %d event loops, %.2f ready per wake-up", s.Threads, s.ReadyPerWake)
	}
	switch s.Mode {
	case "open":
		mode = fmt.Sprintf("open loop, target %.0f req/s, %s arrivals, %d connections opened", s.TargetRate, s.Arrivals, s.Connections)
	case "probe":
		mode = fmt.Sprintf("concurrency probe, %d requests at once, wait %.0f ms: %d answered within %.0f ms (served concurrently)",
			s.Sent, s.ProbeWaitMs, s.Concurrent, s.ProbeWithinMs)
	}
	_, err := fmt.Fprintf(w, `%s: %s
  %d requests in %.2fs, %.1f req/s achieved (sent %d, late %d, dropped %d)
  latency ms: mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  p99.99 %.3f  max %.3f
  errors: connect %d, read %d (framing %d), write %d, timeout %d, status>=400 %d; reconnects %d
  engine CPU %.2fs, %.2f µs per request (in the measured time: %.2f µs)
`, s.Target, mode, s.Requests, s.ElapsedSeconds, s.AchievedRate, s.Sent, s.Late, s.Dropped,
		l.Mean, l.P50, l.P90, l.P99, l.P999, l.P9999, l.Max,
		s.Errors.Connect, s.Errors.Read, s.Errors.Framing, s.Errors.Write, s.Errors.Timeout, s.Errors.Status, s.Reconnects,
		s.CPUSeconds, s.CPUPerRequestUs, s.MeasuredCPUPerRequestUs)
	if err == nil && s.Handshakes > 0 {
		_, err = fmt.Fprintf(w, "  tls: %d handshakes in the measured time (%d resumed), %.1f per second, mean %.3f ms\n",
			s.Handshakes, s.Resumed, s.HandshakesPerSec, s.HandshakeMeanMs)
	}
	if err == nil && s.Interrupted {
		_, err = fmt.Fprintln(w, "  interrupted: the figures cover the run until then")
	}
	return err
}

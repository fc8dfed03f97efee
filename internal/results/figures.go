package results

import (
	"bytes"
	"fmt"
	"time"
)

// Figures are a run's measurements in one form whatever generator produced
// them: each generator's package turns its own report into Figures (wrk's
// Result.Figures, the engine's Summary.Figures), and nothing that reads a
// record needs to know which one ran. Durations are in nanoseconds on
// disk.
type Figures struct {
	// Requests is the count of complete answers; ReqPerSec their rate
	// (the achieved rate in open loop).
	Requests  int64   `json:"requests"`
	ReqPerSec float64 `json:"req_per_sec"`
	// Errors are counted in the classes wrk made usual; every generator
	// maps its own onto them.
	Errors Errors `json:"errors"`
	// Latency says whether the run has latency samples and P50/P99; a run
	// where every request failed has none. P90, P999 and P9999 are zero
	// when the generator did not report them (wrk without its script),
	// Mean when it did not either.
	Latency bool          `json:"latency"`
	Mean    time.Duration `json:"mean_ns,omitempty"`
	P50     time.Duration `json:"p50_ns,omitempty"`
	P90     time.Duration `json:"p90_ns,omitempty"`
	P99     time.Duration `json:"p99_ns,omitempty"`
	P999    time.Duration `json:"p999_ns,omitempty"`
	P9999   time.Duration `json:"p9999_ns,omitempty"`
	Max     time.Duration `json:"max_ns,omitempty"`
	// Histogram says the generator kept every latency sample in an HDR
	// histogram beside the record (runs/<key>.hdr, and .hgrm as text),
	// which merges exactly across runs and load nodes.
	Histogram bool `json:"histogram,omitempty"`
	// Sent is the count of requests sent; zero when the generator does
	// not report it (wrk).
	Sent int64 `json:"sent,omitempty"`
	// Open loop only: the target rate, requests that found no free
	// connection at their intended start (late) and were never sent
	// (dropped).
	TargetRate float64 `json:"target_rate,omitempty"`
	Late       int64   `json:"late,omitempty"`
	Dropped    int64   `json:"dropped,omitempty"`
	// Probe only: requests answered within the probe's bound, that is
	// served concurrently.
	Concurrent int64 `json:"concurrent,omitempty"`
	// Startup is how long the generator took before it started its
	// clock (wrk starts its threads one by one, and counts the requests
	// the first ones made meanwhile but not the time); zero when it did
	// not say.
	Startup time.Duration `json:"startup_ns,omitempty"`
	// Threads and ReadyPerWake: the built-in engine's closed loop on
	// event loops, as wrk's threads; ReadyPerWake is the mean count of
	// connections an epoll_wait of the loops returned in the measured
	// time, how many answers arrive together. Zero when not known (wrk
	// does not report it; the engine's goroutines and open loop have no
	// loops).
	Threads      int     `json:"threads,omitempty"`
	ReadyPerWake float64 `json:"ready_per_wake,omitempty"`
	// Handshakes are the TLS handshakes of the measured time and
	// HandshakesPerSec their rate: connections opened a second, a
	// handshake a request under Connection: close. Zero without TLS or
	// when the generator does not say.
	Handshakes       int64   `json:"handshakes,omitempty"`
	HandshakesPerSec float64 `json:"handshakes_per_sec,omitempty"`
}

// Errors are a run's failed requests by class.
type Errors struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Timeout int64 `json:"timeout"`
	// Status counts answers with a status of 400 or more (wrk's "Non-2xx
	// or 3xx responses").
	Status int64 `json:"non2xx"`
}

// Socket is the sum of the socket errors (connect, read, write, timeout).
func (e Errors) Socket() int64 { return e.Connect + e.Read + e.Write + e.Timeout }

// Total is every error, socket errors and error statuses.
func (e Errors) Total() int64 { return e.Socket() + e.Status }

// Add returns the element-wise sum.
func (e Errors) Add(o Errors) Errors {
	return Errors{e.Connect + o.Connect, e.Read + o.Read, e.Write + o.Write, e.Timeout + o.Timeout, e.Status + o.Status}
}

// String lists the non-zero error counts: "timeout 661, non-2xx 3".
func (e Errors) String() string {
	var b bytes.Buffer
	for _, p := range []struct {
		name string
		n    int64
	}{{"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}, {"timeout", e.Timeout}, {"non-2xx", e.Status}} {
		if p.n == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", p.name, p.n)
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

package load

import (
	"sync"
	"time"
)

// Slices. A window may be cut into equal slices (window or together ...
// slices N): the pools load without a pause from the first slice to the
// last, and each slice is a measurement of its own, its answers, errors,
// CPU time and counter readings taken at its two edges. A duet's two
// pools, cut alike, give a pair a slice with neither a lead nor a drain
// between them.

// Slice is one of a window's slices. Its answers are those that ended
// within it; its latency is in the window's histogram only.
type Slice struct {
	Index      int       `json:"index"` // 1 for the window's first
	Start      time.Time `json:"start"`
	DurationNs int64     `json:"duration_ns"`
	Requests   int64     `json:"requests"`
	Errors     Errors    `json:"errors"`
	// CPUUserNs and CPUSysNs are the load process's CPU time over the
	// slice (every pool of a together).
	CPUUserNs int64 `json:"cpu_user_ns"`
	CPUSysNs  int64 `json:"cpu_sys_ns"`
	// Counters are the counter files' texts at the slice's two edges.
	Counters []CounterReading `json:"counters,omitempty"`
}

// AchievedRate is the slice's answers a second.
func (s Slice) AchievedRate() float64 {
	if s.DurationNs <= 0 {
		return 0
	}
	return float64(s.Requests) / time.Duration(s.DurationNs).Seconds()
}

// mark is what a pool had done at a slice's edge.
type mark struct {
	at       int64 // engine clock (e.now)
	answered int64
	errs     Errors
	cpu      cpuTimes
	counters []string // texts, in the order of the window's paths
	failed   []string // why a counter could not be read
}

// slicer takes the marks of a window's inner edges, at lead + k·d/n.
type slicer struct {
	e     *engine
	cs    []*conn
	paths []string
	n     int
	lead  time.Duration
	d     time.Duration
	mu    sync.Mutex
	marks []mark
}

// run takes the inner marks on the engine's clock until done closes or
// sending stops.
func (s *slicer) run(done <-chan struct{}) {
	for k := 1; k < s.n; k++ {
		at := s.lead + time.Duration(k)*s.d/time.Duration(s.n)
		t := time.NewTimer(time.Until(s.e.start.Add(at)))
		select {
		case <-done:
			t.Stop()
			return
		case <-t.C:
		}
		if s.e.stop.Load() {
			return
		}
		m := s.e.mark(s.cs, s.paths)
		s.mu.Lock()
		s.marks = append(s.marks, m)
		s.mu.Unlock()
	}
}

// mark sums the connections' counts now, with the process's CPU time and
// the counter files.
func (e *engine) mark(cs []*conn, paths []string) mark {
	m := mark{at: e.now(), cpu: readCPU()}
	for _, c := range cs {
		m.answered += c.answered.Load()
		c.addErrors(&m.errs)
	}
	m.counters, m.failed = readCounters(paths)
	return m
}

// slices cuts the window into its slices: the marks of its inner edges
// between first (at the lead's end) and last (at the end of sending, with
// the window's totals).
func (s *slicer) slices(first, last mark, start time.Time) []Slice {
	s.mu.Lock()
	ms := append(append([]mark{first}, s.marks...), last)
	s.mu.Unlock()
	var out []Slice
	for i := 1; i < len(ms); i++ {
		a, b := ms[i-1], ms[i]
		sl := Slice{
			Index: i, Start: start.Add(time.Duration(a.at)), DurationNs: b.at - a.at,
			Requests: b.answered - a.answered, Errors: b.errs.minus(a.errs),
			CPUUserNs: int64(b.cpu.user - a.cpu.user), CPUSysNs: int64(b.cpu.sys - a.cpu.sys),
		}
		for j, p := range s.paths {
			r := CounterReading{Path: p}
			if j < len(a.counters) && j < len(b.counters) {
				r.Start, r.End = a.counters[j], b.counters[j]
			}
			if j < len(a.failed) && a.failed[j] != "" {
				r.Error = a.failed[j]
			} else if j < len(b.failed) && b.failed[j] != "" {
				r.Error = b.failed[j]
			}
			sl.Counters = append(sl.Counters, r)
		}
		out = append(out, sl)
	}
	return out
}

func (e Errors) minus(o Errors) Errors {
	return Errors{Connect: e.Connect - o.Connect, Read: e.Read - o.Read, Write: e.Write - o.Write,
		Timeout: e.Timeout - o.Timeout, Status: e.Status - o.Status, Framing: e.Framing - o.Framing}
}

// addErrors adds the connection's errors so far to e.
func (c *conn) addErrors(e *Errors) {
	e.Connect += c.connectErr.Load()
	e.Read += c.readErr.Load()
	e.Write += c.writeErr.Load()
	e.Timeout += c.timeoutErr.Load()
	e.Status += c.statusErr.Load()
	e.Framing += c.framingErr.Load()
}

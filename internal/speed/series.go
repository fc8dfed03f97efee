package speed

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Sample is one spin of a probe.
type Sample struct {
	At    time.Time     // when the spin started
	Spin  time.Duration // how long it spun
	Turns int64         // turns of the fixed loop it made
}

// Rate is the sample's speed in turns per microsecond.
func (s Sample) Rate() float64 {
	if s.Spin <= 0 {
		return 0
	}
	return float64(s.Turns) / (float64(s.Spin) / float64(time.Microsecond))
}

// ParseLine reads one line a probe printed.
func ParseLine(line string) (Sample, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return Sample{}, fmt.Errorf("speed probe line %q: want 3 fields, got %d", line, len(f))
	}
	var v [3]int64
	for i, s := range f {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return Sample{}, fmt.Errorf("speed probe line %q: field %d is not a positive integer", line, i+1)
		}
		v[i] = n
	}
	return Sample{At: time.Unix(0, v[0]), Spin: time.Duration(v[1]), Turns: v[2]}, nil
}

// Parse reads every line of a probe's output.
func Parse(r io.Reader) ([]Sample, error) {
	var out []Sample
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		s, err := ParseLine(sc.Text())
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// A Series is the samples of one probe as they come, safe for one
// reader and any number of callers of Mean.
type Series struct {
	mu      sync.Mutex
	samples []Sample
}

// ReadFrom appends the samples of the lines read from r until it ends
// (the probe stopped), or until a line it cannot read.
func (s *Series) ReadFrom(r io.Reader) (int64, error) {
	var n int64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		n += int64(len(sc.Bytes())) + 1
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		sm, err := ParseLine(sc.Text())
		if err != nil {
			return n, err
		}
		s.Add(sm)
	}
	return n, sc.Err()
}

// Add appends one sample.
func (s *Series) Add(sm Sample) {
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
}

// Mean is the mean rate of the samples that started in [from, to), with
// their count; 0, 0 when there are none.
func (s *Series) Mean(from, to time.Time) (rate float64, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var sum float64
	for _, sm := range s.samples {
		if !sm.At.Before(from) && sm.At.Before(to) {
			sum += sm.Rate()
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// MeanOf is the mean rate of every sample of several series in [from,
// to), each sample weighing alike, with their count.
func MeanOf(series []*Series, from, to time.Time) (rate float64, n int) {
	var sum float64
	for _, s := range series {
		r, k := s.Mean(from, to)
		sum += r * float64(k)
		n += k
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

package load

import (
	"fmt"
	"math"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Share is one generator's part of a load run on several machines.
type Share struct {
	Rate           float64 // open mode: requests per second; 0 in closed mode
	Connections    int
	MaxConnections int   // open mode: 0 leaves the engine's default
	Requests       int64 // 0: bounded by duration only
	Seed           uint64
}

// Split divides a run among n generators: in open mode (rate > 0) each
// gets rate/n with a seed of its own, so that n Poisson schedules add up
// to one of the whole rate instead of repeating one schedule n times; in
// closed mode each gets conns/n connections, the first conns%n one more,
// so that the shares sum to conns. Initial connections in open mode,
// maxConns and requests are divided the same way (0 stays 0). seed is
// the run's; share i's seed is derived from it and i.
func Split(rate float64, conns, maxConns int, requests int64, n int, seed uint64) ([]Share, error) {
	switch {
	case n <= 0:
		return nil, fmt.Errorf("split among %d generators: want at least one", n)
	case rate < 0 || math.IsNaN(rate) || math.IsInf(rate, 0):
		return nil, fmt.Errorf("rate %v: want a finite rate of at least 0", rate)
	case rate == 0 && conns < n:
		return nil, fmt.Errorf("%d connections among %d generators: each needs at least one", conns, n)
	case maxConns > 0 && maxConns < n:
		return nil, fmt.Errorf("max connections %d among %d generators: each needs at least one", maxConns, n)
	case requests > 0 && requests < int64(n):
		return nil, fmt.Errorf("%d requests among %d generators: each needs at least one", requests, n)
	}
	part := func(total, i int64) int64 {
		p := total / int64(n)
		if i < total%int64(n) {
			p++
		}
		return p
	}
	shares := make([]Share, n)
	for i := range shares {
		s := &shares[i]
		s.Connections = int(part(int64(conns), int64(i)))
		s.MaxConnections = int(part(int64(maxConns), int64(i)))
		s.Requests = part(requests, int64(i))
		s.Seed = shareSeed(seed, uint64(i))
		if rate > 0 {
			s.Rate = rate / float64(n)
			s.MaxConnections = max(s.MaxConnections, s.Connections)
			if maxConns == 0 {
				s.MaxConnections = 0
			}
		}
	}
	return shares, nil
}

// shareSeed mixes the run's seed with the share's index (SplitMix64's
// finaliser): distinct indices give distinct, unrelated seeds.
func shareSeed(seed, i uint64) uint64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// MergeSummaries sums the runs of generators that ran at the same time
// against the same target: counts, error classes, connections, CPU time,
// target and achieved rates (each generator's rate is over its own
// window, and the windows overlap). Latency comes from merged, the
// MergeHistograms of their histograms, never from their percentiles.
// Elapsed is the longest run, start skew the largest, start slack the
// smallest; Interrupted if any was. Threads and wake-ups add up, and
// ready connections per wake-up is their mean over all wake-ups.
func MergeSummaries(ss []Summary, merged *hdrhistogram.Histogram) Summary {
	var m Summary
	if len(ss) == 0 {
		return m
	}
	m.Target, m.Mode, m.Arrivals, m.StartAt = ss[0].Target, ss[0].Mode, ss[0].Arrivals, ss[0].StartAt
	for i, s := range ss {
		m.Connections += s.Connections
		m.ElapsedSeconds = max(m.ElapsedSeconds, s.ElapsedSeconds)
		m.Sent += s.Sent
		m.Requests += s.Requests
		m.TargetRate += s.TargetRate
		m.AchievedRate += s.AchievedRate
		m.Late += s.Late
		m.Dropped += s.Dropped
		m.Errors.Connect += s.Errors.Connect
		m.Errors.Read += s.Errors.Read
		m.Errors.Write += s.Errors.Write
		m.Errors.Timeout += s.Errors.Timeout
		m.Errors.Status += s.Errors.Status
		m.Errors.Framing += s.Errors.Framing
		m.CPUSeconds += s.CPUSeconds
		m.Threads += s.Threads
		m.Wakes += s.Wakes
		m.ReadyPerWake += s.ReadyPerWake * float64(s.Wakes) // divided below
		m.Interrupted = m.Interrupted || s.Interrupted
		if i == 0 || s.StartSkewMs > m.StartSkewMs {
			m.StartSkewMs = s.StartSkewMs
		}
		if i == 0 || s.StartSlackMs < m.StartSlackMs {
			m.StartSlackMs = s.StartSlackMs
		}
	}
	if m.Wakes > 0 {
		m.ReadyPerWake /= float64(m.Wakes)
	}
	if merged != nil {
		m.Latency = LatencyOf(merged)
	}
	if m.Requests > 0 {
		m.CPUPerRequestUs = m.CPUSeconds * 1e6 / float64(m.Requests)
	}
	return m
}

// StartSkew is the summary's start skew as a duration.
func (s Summary) StartSkew() time.Duration {
	return time.Duration(s.StartSkewMs * float64(time.Millisecond))
}

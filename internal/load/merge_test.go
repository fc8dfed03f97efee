package load

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/hdr"
)

func histOf(t *testing.T, vs []int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdr.New()
	for _, v := range vs {
		require.NoError(t, h.RecordValue(v))
	}
	return h
}

// TestMergeNotAverage: one fast generator with many samples and one slow
// one with few. The merged p99.9 is the true p99.9 of all samples; the
// average of the two generators' p99.9 is far from it.
func TestMergeNotAverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	fast := make([]int64, 90_000)
	for i := range fast {
		fast[i] = 200 + int64(rng.IntN(300)) // 0.2-0.5 ms
	}
	slow := make([]int64, 10_000)
	for i := range slow {
		slow[i] = 1000 + int64(rng.IntN(1000)) // 1-2 ms
		if i%50 == 0 {
			slow[i] = 50_000 + int64(rng.IntN(50_000)) // 2%: 50-100 ms stalls
		}
	}
	hf, hs := histOf(t, fast), histOf(t, slow)
	m, err := hdr.Merge(hf, hs)
	require.NoError(t, err)
	all := histOf(t, append(fast, slow...))
	assert.True(t, all.Equals(m))

	merged := m.ValueAtQuantile(99.9)
	avg := (hf.ValueAtQuantile(99.9) + hs.ValueAtQuantile(99.9)) / 2
	t.Logf("p99.9: fast %d µs, slow %d µs, their average %d µs, merged %d µs", hf.ValueAtQuantile(99.9), hs.ValueAtQuantile(99.9), avg, merged)
	// The slow generator's 200 stalls are 0.2% of all samples: the merged
	// p99.9 is among them (>= 50 ms), near their median; the average is
	// near half the slow generator's p99.9.
	assert.GreaterOrEqual(t, merged, int64(50_000))
	assert.Greater(t, math.Abs(float64(merged-avg))/float64(merged), 0.2, "average of percentiles is not the merged percentile")
	// Same for p99: merged is the fast bulk's tail plus the slow's body.
	assert.NotEqual(t, (hf.ValueAtQuantile(99)+hs.ValueAtQuantile(99))/2, m.ValueAtQuantile(99))
}

func TestMergeSummaries(t *testing.T) {
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	a := Summary{Target: "http://x/", Mode: "open", Arrivals: "poisson", Connections: 3, ElapsedSeconds: 10, Sent: 1000, Requests: 990,
		TargetRate: 100, AchievedRate: 99, Late: 2, Dropped: 1, CPUSeconds: 1, StartAt: at, StartSkewMs: 0.5,
		Errors: Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5, Framing: 1}}
	b := a
	b.Connections, b.ElapsedSeconds, b.Requests, b.AchievedRate, b.StartSkewMs, b.Interrupted = 5, 10.2, 1000, 100, 2.5, true
	m := MergeSummaries([]Summary{a, b}, histOf(t, []int64{1000, 2000}))
	assert.Equal(t, 8, m.Connections)
	assert.EqualValues(t, 2000, m.Sent)
	assert.EqualValues(t, 1990, m.Requests)
	assert.InDelta(t, 200, m.TargetRate, 1e-9)
	assert.InDelta(t, 199, m.AchievedRate, 1e-9)
	assert.EqualValues(t, 4, m.Late)
	assert.EqualValues(t, 2, m.Dropped)
	assert.Equal(t, Errors{Connect: 2, Read: 4, Write: 6, Timeout: 8, Status: 10, Framing: 2}, m.Errors)
	assert.InDelta(t, 10.2, m.ElapsedSeconds, 1e-9)
	assert.InDelta(t, 2.5, m.StartSkewMs, 1e-9)
	assert.True(t, m.Interrupted)
	assert.Equal(t, at, m.StartAt)
	assert.InDelta(t, 2.0, m.Latency.Max, 0.01)
	assert.InDelta(t, 2e6/1990, m.CPUPerRequestUs, 1e-6)
}

func TestSplit(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		for _, tc := range []struct {
			rate float64
			n    int
		}{{1000, 1}, {1000, 3}, {100_000, 7}, {1, 2}, {12_345.6, 5}} {
			shares, err := Split(tc.rate, 10, 0, 0, tc.n, 42)
			require.NoError(t, err)
			require.Len(t, shares, tc.n)
			sum := 0.0
			seeds := map[uint64]bool{}
			for _, s := range shares {
				sum += s.Rate
				seeds[s.Seed] = true
				assert.Zero(t, s.MaxConnections, "engine default kept")
			}
			assert.InEpsilon(t, tc.rate, sum, 0.01, "N x R/N reproduces R")
			assert.Len(t, seeds, tc.n, "distinct seeds")
		}
	})
	t.Run("closed", func(t *testing.T) {
		shares, err := Split(0, 5000, 0, 100_001, 3, 1)
		require.NoError(t, err)
		conns, reqs := 0, int64(0)
		for _, s := range shares {
			conns += s.Connections
			reqs += s.Requests
			assert.Zero(t, s.Rate)
			assert.InDelta(t, 5000.0/3, s.Connections, 1)
		}
		assert.Equal(t, 5000, conns)
		assert.EqualValues(t, 100_001, reqs)
	})
	t.Run("max connections", func(t *testing.T) {
		shares, err := Split(300, 4, 10, 0, 2, 1)
		require.NoError(t, err)
		for _, s := range shares {
			assert.Equal(t, 5, s.MaxConnections)
			assert.Equal(t, 2, s.Connections)
		}
	})
	t.Run("seeds differ between runs", func(t *testing.T) {
		a, _ := Split(10, 1, 0, 0, 2, 1)
		b, _ := Split(10, 1, 0, 0, 2, 2)
		assert.NotEqual(t, a[0].Seed, b[0].Seed)
	})
	for name, args := range map[string]struct {
		rate       float64
		conns, max int
		reqs       int64
		n          int
	}{
		"no generators":         {100, 1, 0, 0, 0},
		"negative rate":         {-1, 1, 0, 0, 2},
		"fewer conns than gens": {0, 2, 0, 0, 3},
		"fewer reqs than gens":  {100, 3, 0, 2, 3},
		"fewer max than gens":   {100, 0, 2, 0, 3},
		"infinite rate":         {math.Inf(1), 1, 0, 0, 1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Split(args.rate, args.conns, args.max, args.reqs, args.n, 1)
			assert.Error(t, err)
		})
	}
}

// TestReportRoundTrip: a report read back out of log output, with the
// prefixes docker service logs adds and other lines between, is the run
// exactly.
func TestReportRoundTrip(t *testing.T) {
	h := hdr.New()
	for i := range 200_000 {
		require.NoError(t, h.RecordValue(int64(i%5_000+1)))
	}
	res := &Result{Summary: Summary{Target: "http://169.254.1.2:8080/", Mode: "closed", Requests: 200_000, StartAt: time.Date(2026, 11, 24, 19, 0, 0, 123, time.UTC), StartSkewMs: 0.25}, Histogram: h}
	var buf bytes.Buffer
	require.NoError(t, WriteReport(&buf, res))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	for _, l := range lines {
		assert.Less(t, len(l), 16*1024, "no line a log driver would split")
	}
	t.Logf("report: %d lines, %d bytes", len(lines), buf.Len())

	var logs strings.Builder
	logs.WriteString("tb-job.1.abc@node1    | load: starting\n")
	for _, l := range lines {
		logs.WriteString("tb-job.1.abc@node1    | " + l + "\n")
	}
	for name, in := range map[string]string{"plain": buf.String(), "prefixed": logs.String()} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadReport(strings.NewReader(in))
			require.NoError(t, err)
			assert.Equal(t, res.Summary, got.Summary)
			assert.True(t, h.Equals(got.Histogram))
		})
	}
}

func TestReportChunked(t *testing.T) {
	// Many distinct values make a long encoding: several chunks, which
	// must come back in order even when the log interleaves them.
	rng := rand.New(rand.NewPCG(3, 3))
	h := hdr.New()
	for range 300_000 {
		require.NoError(t, h.RecordValues(1+rng.Int64N(hdr.HighestMicros), 1+rng.Int64N(1000)))
	}
	var buf bytes.Buffer
	require.NoError(t, WriteReport(&buf, &Result{Histogram: h}))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Greater(t, len(lines), 3, "want several chunks")
	// Reverse the chunks.
	rev := []string{lines[0]}
	for i := len(lines) - 1; i >= 1; i-- {
		rev = append(rev, lines[i])
	}
	got, err := ReadReport(strings.NewReader(strings.Join(rev, "\n")))
	require.NoError(t, err)
	assert.True(t, h.Equals(got.Histogram))

	_, err = ReadReport(strings.NewReader(strings.Join(lines[:len(lines)-1], "\n")))
	assert.ErrorIs(t, err, ErrNoReport, "a missing chunk")
}

func TestReadReportErrors(t *testing.T) {
	for name, in := range map[string]string{
		"nothing":         "load: interrupted\n",
		"no histogram":    "topobench-summary {}\n",
		"no summary":      "topobench-hdr 1/1 HISTFAAAA\n",
		"bad summary":     "topobench-summary {\n",
		"bad chunk":       "topobench-summary {}\ntopobench-hdr x HISTFAAAA\n",
		"chunk past end":  "topobench-summary {}\ntopobench-hdr 2/1 HISTFAAAA\n",
		"two summaries":   "topobench-summary {}\ntopobench-summary {}\n",
		"bad histogram":   "topobench-summary {}\ntopobench-hdr 1/1 !!!!\n",
		"conflicting of":  "topobench-summary {}\ntopobench-hdr 1/2 AA\ntopobench-hdr 2/3 AA\n",
		"duplicate chunk": "topobench-summary {}\ntopobench-hdr 1/2 AA\ntopobench-hdr 1/2 AA\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadReport(strings.NewReader(in))
			assert.Error(t, err)
		})
	}
	_, err := ReadReport(strings.NewReader("nothing here\n"))
	assert.ErrorIs(t, err, ErrNoReport)
}

// TestStartAt: the engine connects, then waits for StartAt; the measured
// run begins no earlier, and the summary says how much later.
func TestStartAt(t *testing.T) {
	skipShort(t)
	ln := listenTCP(t)
	startServer(t, ln, answerEach(okResponse, nil))
	at := time.Now().Add(400 * time.Millisecond)
	res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Rate: 500, Connections: 2, Duration: 300 * time.Millisecond, StartAt: at, Seed: 9})
	require.NoError(t, err)
	s := res.Summary
	ended := time.Now()
	t.Logf("start skew %.3f ms", s.StartSkewMs)
	assert.True(t, s.StartAt.Equal(at))
	assert.GreaterOrEqual(t, s.StartSkewMs, 0.0, "never early")
	assert.Less(t, s.StartSkewMs, 100.0, "a timer on this machine is not 100 ms late")
	assert.Greater(t, s.StartSlackMs, 0.0, "connected before StartAt")
	assert.Less(t, s.StartSlackMs, 400.0)
	assert.GreaterOrEqual(t, ended.Sub(at), 250*time.Millisecond, "the run came after StartAt")
	assert.EqualValues(t, 9, s.Seed)
	assert.Positive(t, s.Requests)

	// Already past: starts at once, with the lateness as skew.
	past := time.Now().Add(-time.Second)
	res, err = Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 1, Requests: 10, StartAt: past})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, res.Summary.StartSkewMs, 1000.0)
	assert.Less(t, res.Summary.StartSlackMs, -1000.0)

	// Interrupted while waiting: nothing measured, marked interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	res, err = Run(ctx, Options{Target: tcpTarget(t, ln), Connections: 1, Duration: time.Second, StartAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.True(t, res.Summary.Interrupted)
	assert.Zero(t, res.Summary.Requests)
}

package speed

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParse reads a probe's real output (testdata/probe-cpu0.txt: topobench
// speed on CPU 0 for 2 s) and refuses lines it cannot read.
func TestParse(t *testing.T) {
	f, err := os.Open("testdata/probe-cpu0.txt")
	require.NoError(t, err)
	defer f.Close()
	got, err := Parse(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(got), 15)
	for i, s := range got {
		assert.GreaterOrEqual(t, s.Spin, time.Millisecond, "sample %d", i)
		assert.Positive(t, s.Turns, "sample %d", i)
		if i > 0 {
			assert.InDelta(t, 100*time.Millisecond, s.At.Sub(got[i-1].At), float64(20*time.Millisecond), "sample %d comes a period after the last", i)
		}
	}

	for _, tt := range []struct{ name, in, want string }{
		{"two fields", "1795865214224309607 1000102\n", "want 3 fields"},
		{"not a number", "1795865214224309607 x 7260\n", "field 2"},
		{"zero turns", "1795865214224309607 1000102 0\n", "field 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tt.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestMean: the mean rate over a span takes the samples that started in
// it, each weighing alike, across series too.
func TestMean(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var a, b Series
	// 1000 turns in 1 ms is 1 turn a µs.
	a.Add(Sample{At: at(0), Spin: time.Millisecond, Turns: 1000})
	a.Add(Sample{At: at(100), Spin: time.Millisecond, Turns: 3000})
	a.Add(Sample{At: at(200), Spin: 2 * time.Millisecond, Turns: 2000})
	b.Add(Sample{At: at(50), Spin: time.Millisecond, Turns: 5000})
	for _, tt := range []struct {
		name     string
		series   []*Series
		from, to time.Time
		rate     float64
		n        int
	}{
		{"all of a", []*Series{&a}, at(0), at(300), (1 + 3 + 1) / 3.0, 3},
		{"end excluded", []*Series{&a}, at(0), at(200), 2, 2},
		{"start included", []*Series{&a}, at(100), at(101), 3, 1},
		{"none", []*Series{&a}, at(300), at(400), 0, 0},
		{"two series", []*Series{&a, &b}, at(0), at(101), (1 + 3 + 5) / 3.0, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rate, n := MeanOf(tt.series, tt.from, tt.to)
			assert.InDelta(t, tt.rate, rate, 1e-9)
			assert.Equal(t, tt.n, n)
		})
	}
}

// TestRun probes for real: at real-time priority, a line every period
// that Parse reads, and nil when the context ends.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("spins the CPU for real; -short skips it")
	}
	if os.Geteuid() != 0 {
		t.Skip("real-time priority needs root (or CAP_SYS_NICE): not root here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, &out, Options{Period: 20 * time.Millisecond, Spin: time.Millisecond, Priority: 1})
	}()
	require.NoError(t, <-done)
	got, err := Parse(&out)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, len(got), 15, "a sample every 20 ms for 500 ms")
	var ser Series
	for _, s := range got {
		ser.Add(s)
	}
	rate, n := ser.Mean(time.Now().Add(-time.Minute), time.Now())
	assert.Equal(t, len(got), n)
	assert.Positive(t, rate)

	t.Run("bad options", func(t *testing.T) {
		for _, opt := range []Options{{Period: time.Millisecond, Spin: time.Millisecond, Priority: 1}, {Period: time.Second, Spin: time.Millisecond}} {
			assert.Error(t, Run(context.Background(), &out, opt))
		}
	})
}

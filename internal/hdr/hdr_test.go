package hdr

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomHistogram(t *testing.T, seed uint64, n int) (*hdrhistogram.Histogram, []int64) {
	rng := rand.New(rand.NewPCG(seed, 0))
	h := New()
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(rng.ExpFloat64()*2000) + 1 // µs, mean 2 ms
		if i%1000 == 0 {
			vs[i] = int64(rng.IntN(5_000_000)) + 1 // a few slow ones
		}
		require.NoError(t, h.RecordValue(vs[i]))
	}
	return h, vs
}

// TestEncodedRoundTripAndMerge: a histogram written and read back is the
// same; two read back and merged equal one histogram of all their values.
func TestEncodedRoundTripAndMerge(t *testing.T) {
	a, va := randomHistogram(t, 1, 20_000)
	b, vb := randomHistogram(t, 2, 30_000)
	dir := t.TempDir()
	require.NoError(t, WriteFiles(dir, "a", a))
	require.NoError(t, WriteFiles(dir, "b", b))

	ra, err := ReadFile(filepath.Join(dir, "a"+EncodedExt))
	require.NoError(t, err)
	assert.True(t, a.Equals(ra), "round trip")
	rb, err := ReadFile(filepath.Join(dir, "b"+EncodedExt))
	require.NoError(t, err)

	all := New()
	for _, v := range append(va, vb...) {
		all.RecordValue(v)
	}
	assert.Zero(t, ra.Merge(rb))
	assert.True(t, all.Equals(ra), "merged files equal the histogram of all values")
	for _, q := range []float64{50, 90, 99, 99.9, 100} {
		assert.Equal(t, all.ValueAtQuantile(q), ra.ValueAtQuantile(q), "p%g", q)
	}
}

// TestPercentilesRoundTrip: the .hgrm text reads back to rows that agree
// with the histogram.
func TestPercentilesRoundTrip(t *testing.T) {
	h, _ := randomHistogram(t, 3, 10_000)
	var buf bytes.Buffer
	require.NoError(t, WritePercentiles(&buf, h))
	text := buf.String()
	assert.True(t, strings.HasPrefix(text, " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n"), "hdrhistogram-go's header line")
	assert.Contains(t, text, "#[Max     =")

	rows, err := ReadPercentiles(strings.NewReader(text))
	require.NoError(t, err)
	require.NotEmpty(t, rows)
	last := rows[len(rows)-1]
	assert.Equal(t, h.TotalCount(), last.TotalCount)
	assert.InDelta(t, 1.0, last.Percentile, 1e-9)
	assert.InDelta(t, float64(h.Max())/1000, last.ValueMs, 0.001)
	dist := h.CumulativeDistributionWithTicks(5)
	require.Len(t, rows, len(dist))
	for i, r := range rows {
		assert.InDelta(t, float64(dist[i].ValueAt)/1000, r.ValueMs, 0.0005, "row %d", i)
		assert.Equal(t, dist[i].Count, r.TotalCount, "row %d", i)
		assert.InDelta(t, dist[i].Quantile/100, r.Percentile, 1e-6, "row %d", i)
	}
	for i := 1; i < len(rows); i++ {
		assert.GreaterOrEqual(t, rows[i].Percentile, rows[i-1].Percentile)
		assert.GreaterOrEqual(t, rows[i].TotalCount, rows[i-1].TotalCount)
	}
}

func TestReadPercentilesErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":       "",
		"only header": " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n",
		"short row":   " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n 1.0 0.5 3\n",
		"bad number":  " Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n 1.0 x 3 2.00\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadPercentiles(strings.NewReader(in))
			assert.Error(t, err)
		})
	}
	_, err := ReadPercentiles(strings.NewReader(" Value\tPercentile\tTotalCount\t1/(1-Percentile)\n\n 1.0 x 3 2.00\n"))
	assert.ErrorContains(t, err, "line 3")
}

func TestReadEncodedRejectsGarbage(t *testing.T) {
	_, err := ReadEncoded(strings.NewReader("not base64 at all!"))
	assert.Error(t, err)
}

// TestMergeHistogramsExact: merging the generators' histograms gives the
// histogram of all their samples, bucket for bucket, and leaves the
// inputs as they were.
func TestMergeHistogramsExact(t *testing.T) {
	a, va := randomHistogram(t, 11, 40_000)
	b, vb := randomHistogram(t, 12, 10_000)
	c, vc := randomHistogram(t, 13, 1)
	before := a.Export()
	m, err := Merge(a, b, c)
	require.NoError(t, err)
	all := New()
	for _, v := range append(append(va, vb...), vc...) {
		require.NoError(t, all.RecordValue(v))
	}
	assert.True(t, all.Equals(m), "merged equals the histogram of every sample")
	assert.EqualValues(t, 50_001, m.TotalCount())
	assert.Equal(t, before, a.Export(), "inputs unchanged")

	empty, err := Merge()
	require.NoError(t, err)
	assert.Zero(t, empty.TotalCount())
	_, err = Merge(a, nil)
	assert.Error(t, err)
}

// TestMergeHistogramsRefusesLoss: values the range cannot hold
// are an error, not silently dropped.
func TestMergeHistogramsRefusesLoss(t *testing.T) {
	wide := hdrhistogram.New(1, 10*HighestMicros, SigFigs)
	require.NoError(t, wide.RecordValue(5*HighestMicros))
	_, err := Merge(wide)
	assert.ErrorIs(t, err, ErrMergeLoss)
}

package stats

import (
	"bufio"
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchunit"
)

var update = flag.Bool("update", false, "rewrite testdata/benchstat.golden by running benchstat")

// readBench reads the samples of a benchmark file in the Go benchmark
// format, by benchmark name (without the Benchmark prefix).
func readBench(t *testing.T, path string) (map[string][]float64, []string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	samples := map[string][]float64{}
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 4 || !strings.HasPrefix(fs[0], "Benchmark") {
			continue
		}
		v, err := strconv.ParseFloat(fs[2], 64)
		require.NoError(t, err, sc.Text())
		name := strings.TrimPrefix(fs[0], "Benchmark")
		if samples[name] == nil {
			order = append(order, name)
		}
		samples[name] = append(samples[name], v)
	}
	require.NoError(t, sc.Err())
	return samples, order
}

// benchstatOutput runs benchstat on the two sample files.
func benchstatOutput(t *testing.T) []byte {
	t.Helper()
	cmd := exec.Command("go", "run", "golang.org/x/perf/cmd/benchstat", "old.txt", "new.txt")
	cmd.Dir = "testdata"
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if *update {
			t.Fatalf("running benchstat: %v\n%s", err, stderr.String())
		}
		t.Skipf("cannot run benchstat here (%v: %s); the golden file is still checked by TestAgainstBenchstat", err, strings.TrimSpace(stderr.String()))
	}
	return out
}

// TestGoldenIsBenchstat checks that testdata/benchstat.golden is what the
// benchstat of this module's golang.org/x/perf prints for the samples.
func TestGoldenIsBenchstat(t *testing.T) {
	if testing.Short() && !*update {
		t.Skip("builds and runs benchstat; skipped under -short")
	}
	got := benchstatOutput(t)
	golden := filepath.Join("testdata", "benchstat.golden")
	if *update {
		require.NoError(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "benchstat's output changed; rerun with -update")
}

// row is one line of benchstat's comparison table:
//
//	Cell/g=1/topo=few      48.45k ±   ∞ ¹   59.78k ±  ∞ ¹         ~ (p=0.100 n=3)   ²
var row = regexp.MustCompile(`^(Cell/\S+)\s+(\S+) ±\s+(\S+)( ¹)?\s+(\S+) ±\s+(\S+)( ¹)?\s+(\S+) \(([^)]*)\)(\s+²)?$`)

// TestAgainstBenchstat computes every cell of benchstat's table from the
// same samples and expects the same text: medians, intervals, deltas,
// p-values and footnotes.
func TestAgainstBenchstat(t *testing.T) {
	old, names := readBench(t, filepath.Join("testdata", "old.txt"))
	new, _ := readBench(t, filepath.Join("testdata", "new.txt"))
	golden, err := os.ReadFile(filepath.Join("testdata", "benchstat.golden"))
	require.NoError(t, err)

	rows := map[string][]string{}
	for _, line := range strings.Split(string(golden), "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			rows[m[1]] = m
		}
	}
	require.Len(t, rows, len(names), "rows of the golden table")
	const ciNote = "need >= 6 samples for confidence interval at level 0.95"
	const testNote = "need >= 4 samples to detect a difference at alpha level 0.05"
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m := rows[name]
			require.NotNil(t, m, "no row for %s in the golden file", name)
			c := Compare(old[name], new[name])
			// benchstat scales a row's figures alike.
			scale := benchunit.CommonScale([]float64{c.Old.Center, c.New.Center}, benchunit.Decimal)
			assert.Equal(t, m[2], scale.Format(c.Old.Center), "old median")
			assert.Equal(t, m[3], c.Old.Range(), "old interval")
			assert.Equal(t, m[4] != "", slicesContains(c.Old.Warnings, ciNote), "old footnote")
			assert.Equal(t, m[5], scale.Format(c.New.Center), "new median")
			assert.Equal(t, m[6], c.New.Range(), "new interval")
			assert.Equal(t, m[7] != "", slicesContains(c.New.Warnings, ciNote), "new footnote")
			assert.Equal(t, m[8], c.DeltaString(), "delta")
			assert.Equal(t, m[9], c.Test(), "test")
			assert.Equal(t, m[10] != "", slicesContains(c.Warnings, testNote), "test footnote")
			assert.Equal(t, m[8] != "~", c.Significant())
			assert.Equal(t, c.Old.Range() != "∞", c.Old.Known())
		})
	}
}

func slicesContains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func TestSummary(t *testing.T) {
	// benchmath's own example: at n=6 the interval is the extremes, at
	// level 1 - 2/64.
	s := Summarize([]float64{-10, 2, 3, 4, 5, 6})
	assert.Equal(t, Summary{N: 6, Center: 3.5, Lo: -10, Hi: 6, Confidence: 1 - 0.03125}, s)
	assert.Equal(t, "?", s.Range())

	xs := []float64{105, 100, 95, 101, 99, 102}
	s = Summarize(xs)
	assert.Equal(t, []float64{105, 100, 95, 101, 99, 102}, xs, "input not modified")
	assert.Equal(t, 100.5, s.Center)
	assert.True(t, s.Known())
	assert.InDelta(t, 1-95/100.5, s.HalfWidth(), 1e-12)
	assert.Equal(t, "5%", s.Range())

	s = Summarize([]float64{1, 2, 3})
	assert.False(t, s.Known())
	assert.True(t, math.IsInf(s.HalfWidth(), 1))
	assert.Equal(t, []string{"need >= 6 samples for confidence interval at level 0.95"}, s.Warnings)

	s = Summarize(nil)
	assert.False(t, s.Known())
}

// TestRatioByHand checks the ratio interval against values worked out by
// hand from the U distribution.
func TestRatioByHand(t *testing.T) {
	t.Run("4 and 4", func(t *testing.T) {
		// P(U <= 0) = 1/70 <= 0.025 < P(U <= 1) = 2/70: the interval is
		// the smallest and largest of the 16 ratios, at level 1 - 2/70.
		num := []float64{50, 52, 48, 51}
		den := []float64{100, 98, 104, 101}
		r := RatioOf(num, den)
		assert.InDelta(t, 50.5/100.5, r.Center, 1e-12)
		assert.InDelta(t, 48.0/104, r.Lo, 1e-12)
		assert.InDelta(t, 52.0/98, r.Hi, 1e-12)
		assert.InDelta(t, 1-2.0/70, r.Confidence, 1e-12)
		assert.Empty(t, r.Warnings)
	})
	t.Run("5 and 5", func(t *testing.T) {
		// The U distribution for 5 and 5 has C(10,5) = 252 arrangements;
		// 1, 1, 2, 3 of them have U = 0, 1, 2, 3. P(U <= 2) = 4/252 <=
		// 0.025 < P(U <= 3) = 7/252: the interval runs from the 3rd
		// smallest to the 3rd largest of the 25 ratios.
		num := []float64{1, 2, 3, 4, 5}
		den := []float64{1, 1, 1, 1, 1e3}
		// Ratios: 1,2,3,4,5 four times each, and 0.001..0.005.
		// Sorted: 0.001 0.002 [0.003] ... [5] 5 5 (the 3rd largest is 5).
		r := RatioOf(num, den)
		assert.InDelta(t, 0.003, r.Lo, 1e-12)
		assert.InDelta(t, 5, r.Hi, 1e-12)
		assert.InDelta(t, 1-8.0/252, r.Confidence, 1e-12)
		assert.InDelta(t, 3.0, r.Center, 1e-12)
	})
	t.Run("3 and 3", func(t *testing.T) {
		r := RatioOf([]float64{1, 2, 3}, []float64{1, 2, 3})
		assert.False(t, r.Known())
		assert.Equal(t, 1.0, r.Center)
		assert.Equal(t, []string{"need >= 4 samples of each for a ratio interval at level 0.95"}, r.Warnings)
	})
	t.Run("not positive", func(t *testing.T) {
		r := RatioOf([]float64{1, 2, 3, 0}, []float64{1, 2, 3, 4})
		assert.False(t, r.Known())
		assert.Contains(t, r.Warnings[0], "positive")
	})
}

// TestRatioAgreesWithUTest checks, on random samples without ties, that the
// ratio interval excludes 1 exactly when benchstat's U test calls the
// difference significant: the interval inverts that test.
func TestRatioAgreesWithUTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	checked := map[bool]int{}
	for i := 0; i < 400; i++ {
		n1, n2 := 4+rng.IntN(7), 4+rng.IntN(7)
		shift := 0.8 + 0.4*rng.Float64()
		num, den := make([]float64, n1), make([]float64, n2)
		for j := range num {
			num[j] = shift * (1 + 0.1*rng.NormFloat64())
		}
		for j := range den {
			den[j] = 1 + 0.1*rng.NormFloat64()
		}
		r := RatioOf(num, den)
		require.True(t, r.Known(), "n=%d+%d", n1, n2)
		c := Compare(den, num)
		excludes := r.Lo > 1 || r.Hi < 1
		// The U test's p is two-sided with the same distribution; the
		// interval is significant at the level it actually has, which is
		// at least 95%: equal decisions unless p falls between the levels.
		if c.P <= 1-r.Confidence || c.P > Alpha {
			require.Equal(t, c.Significant(), excludes, "num=%v den=%v p=%v interval=[%v,%v]", num, den, c.P, r.Lo, r.Hi)
			checked[excludes]++
		}
	}
	t.Logf("checked %d significant and %d not", checked[true], checked[false])
	assert.Greater(t, checked[true], 50)
	assert.Greater(t, checked[false], 50)
}

func TestPairwise(t *testing.T) {
	got, err := Pairwise([]float64{10, math.NaN(), 30}, []float64{20, 20, 60})
	require.NoError(t, err)
	assert.Equal(t, []float64{0.5, 0.5}, got)
	_, err = Pairwise([]float64{1}, []float64{1, 2})
	require.Error(t, err)
}

// TestRatioOrderBisection: the bisection finds what a walk from u = 0
// finds, for every sample size up to 16 of each.
func TestRatioOrderBisection(t *testing.T) {
	walk := func(n1, n2 int) (int, float64) {
		dist := stats.UDist{N1: n1, N2: n2}
		k, level := -1, 0.0
		for u := 0; u < n1*n2/2; u++ {
			p := dist.CDF(float64(u))
			if p > (1-Confidence)/2 {
				break
			}
			k, level = u, 1-2*p
		}
		return k, level
	}
	for n1 := 1; n1 <= 16; n1++ {
		for n2 := 1; n2 <= 16; n2++ {
			wk, wl := walk(n1, n2)
			k, l := ratioOrder(n1, n2, Confidence)
			require.Equal(t, wk, k, "n1=%d n2=%d", n1, n2)
			require.InDelta(t, wl, l, 1e-12, "n1=%d n2=%d", n1, n2)
		}
	}
}

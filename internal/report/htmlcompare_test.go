package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// TestRatioChanges: a comparison's ratio rows become the page's changes;
// a cell only one sweep measured has no change and no row.
func TestRatioChanges(t *testing.T) {
	k := func(top string) analysis.Key { return analysis.Key{Group: wrkGroup(1), Topology: top} }
	c := analysis.Comparison{Ratios: analysis.Table{Rows: []analysis.Row{
		{Key: k("nginx-http"), Old: &stats.Summary{N: 6, Center: 0.5}, New: &stats.Summary{N: 5, Center: 0.6},
			Change: &stats.Comparison{Old: stats.Summary{Center: 0.5}, New: stats.Summary{Center: 0.6}, P: 0.01, Alpha: 0.05}},
		{Key: k("nginx-fcgi-tcp"), Old: &stats.Summary{N: 6, Center: 0.4}},
		{Key: k("nginx-fcgi-unix"), Old: &stats.Summary{N: 6, Center: 0.45}, New: &stats.Summary{N: 6, Center: 0.44},
			Change: &stats.Comparison{Old: stats.Summary{Center: 0.45}, New: stats.Summary{Center: 0.44}, P: 0.4, Alpha: 0.05}},
	}}}
	got := ratioChanges(c)
	require.Len(t, got, 2)
	assert.Equal(t, RatioChange{Key: k("nginx-http"), Base: 0.5, New: 0.6, BaseN: 6, NewN: 5, Change: got[0].Change, P: 0.01, Significant: true}, got[0])
	assert.InDelta(t, 0.2, got[0].Change, 1e-12)
	assert.Equal(t, "nginx-fcgi-unix", got[1].Key.Topology)
	assert.InDelta(t, -0.0222, got[1].Change, 1e-4)
	assert.False(t, got[1].Significant)
	assert.Empty(t, ratioChanges(analysis.Comparison{}))

	t.Run("table", func(t *testing.T) {
		tb := changeTable(Sweep{}, Sweep{Changes: got}, "A", "B")
		assert.Equal(t, "Ratios to standalone, B against A (round by round, as topobench diff)", tb.Caption)
		assert.Equal(t, []string{"cell", "A ratio", "n", "B ratio", "n", "change", "significance"}, tb.Head)
		assert.Equal(t, [][]string{
			{k("nginx-http").String(), "0.500", "6", "0.600", "5", "+20.0%", "p=0.010, significant at 95%"},
			{k("nginx-fcgi-unix").String(), "0.450", "6", "0.440", "6", "~ (-2.2%)", "p=0.400, not significant"},
		}, tb.Rows)
		assert.Equal(t, []bool{true, false}, tb.Marked)
	})
}

// twoGroups is the isolated fixture at GOMAXPROCS 1 and 2; loadShift
// scales the load generator's CPU of the GOMAXPROCS=2 runs.
func twoGroups(t *testing.T, loadShift float64) (results.Env, []results.Run) {
	env, runs := analysistest.IsolatedFixture(t)
	env.Plan.GOMAXPROCS = []int{1, 2}
	for _, r := range append([]results.Run(nil), runs...) {
		r.GOMAXPROCS = 2
		cpu := *r.CPU
		cpu.Load.User, cpu.Load.System = cpu.Load.User*loadShift, cpu.Load.System*loadShift
		r.CPU = &cpu
		runs = append(runs, r)
	}
	return env, runs
}

// TestMachineStatements: what the page says of the two machines, for
// each way they can differ.
func TestMachineStatements(t *testing.T) {
	compared := func(t *testing.T, a, b Sweep) (Sweep, Sweep) {
		out, err := CompareSweeps([]Sweep{a, b})
		require.NoError(t, err)
		return out[0], out[1]
	}
	t.Run("setups differ", func(t *testing.T) {
		env, runs := analysistest.IsolatedFixture(t)
		other := env
		other.CPUModel, other.Kernel = "Other CPU", "6.12.0"
		a, b := compared(t, sweepOf("a", "", env, runs), sweepOf("b", "", other, runs))
		st := machineStatements(a, b, "A", "B")
		require.Len(t, st, 2)
		assert.Equal(t, `A and B ran on different setups: CPU "`+env.CPUModel+`" in A, "Other CPU" in B; kernel "`+env.Kernel+`" in A, "6.12.0" in B. Compare their ratios, not their rates.`, st[0])
		assert.Contains(t, st[1], "ran at the same speed")
	})
	t.Run("isolation differs", func(t *testing.T) {
		env, runs := analysistest.IsolatedFixture(t)
		other := env
		other.Plan.Isolation, other.Plan.PinLoad, other.Plan.PinServer = "", "", ""
		a, b := compared(t, sweepOf("a", "", env, runs), sweepOf("b", "", other, runs))
		st := machineStatements(a, b, "A", "B")
		require.Len(t, st, 2)
		assert.Contains(t, st[0], "isolation ")
	})
	t.Run("CPU not measured", func(t *testing.T) {
		env, runs := analysistest.IsolatedFixture(t)
		bare := make([]results.Run, len(runs))
		for i, r := range runs {
			r.CPU = nil
			bare[i] = r
		}
		a, b := compared(t, sweepOf("a", "", env, runs), sweepOf("b", "", env, bare))
		st := machineStatements(a, b, "A", "B")
		require.Len(t, st, 1)
		assert.Equal(t, "The load generator's CPU per request was not measured in both A and B, so whether the machine ran at the same speed is unknown.", st[0])
		st = machineStatements(a, Sweep{Summary: a.Summary}, "A", "B")
		assert.Contains(t, st[0], "not measured in both", "not compared at all")
	})
	t.Run("one group shifted", func(t *testing.T) {
		env, runs := twoGroups(t, 1)
		senv, sruns := twoGroups(t, 1.08)
		a, b := compared(t, sweepOf("a", "", env, runs), sweepOf("b", "", senv, sruns))
		st := machineStatements(a, b, "A", "B")
		require.Len(t, st, 1)
		// Half the cells moved 8%: the geomean √1.08 − 1.
		assert.Equal(t, "The machine changed speed for part of the sweeps: overall the load generator's CPU per request moved +3.9% from A to B, but GOMAXPROCS=2 +8%. Compare the ratios of those groups, not their rates.", st[0])
	})
	t.Run("small drift is the same speed", func(t *testing.T) {
		env, runs := twoGroups(t, 1)
		senv, sruns := twoGroups(t, 1.03)
		a, b := compared(t, sweepOf("a", "", env, runs), sweepOf("b", "", senv, sruns))
		st := machineStatements(a, b, "A", "B")
		require.Len(t, st, 1)
		assert.Equal(t, "The load generator's CPU per request agrees within ±5% (+1.5% geomean over 10 cells): A and B ran at the same speed.", st[0])
	})
}

// TestCompareSweepsEdges: no sweeps, and a sweep with nothing to compare.
func TestCompareSweepsEdges(t *testing.T) {
	out, err := CompareSweeps(nil)
	require.NoError(t, err)
	assert.Empty(t, out)

	env, runs := analysistest.IsolatedFixture(t)
	failed := make([]results.Run, len(runs))
	for i, r := range runs {
		r.Figures, r.Error = nil, "wrk: connection refused"
		failed[i] = r
	}
	_, err = CompareSweeps([]Sweep{sweepOf("a", "", env, runs), sweepOf("b", "", env, failed)})
	assert.ErrorContains(t, err, "b holds no successful runs")
	_, err = CompareSweeps([]Sweep{sweepOf("a", "", env, failed), sweepOf("b", "", env, runs)})
	assert.ErrorContains(t, err, "a holds no successful runs")

	out, err = CompareSweeps([]Sweep{sweepOf("a", "", env, runs)})
	require.NoError(t, err)
	assert.Nil(t, out[0].Changes, "the baseline has no changes")

	assert.Error(t, WriteCompareHTML(&strings.Builder{}, nil))
}

// TestWriteHTMLFile: one directory's page or a comparison, written whole
// or not at all.
func TestWriteHTMLFile(t *testing.T) {
	a, b := analysistest.Copy(t), analysistest.Copy(t)
	out := t.TempDir()
	read := func(t *testing.T, path string) string {
		t.Helper()
		page, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(page)
	}
	t.Run("one", func(t *testing.T) {
		path := filepath.Join(out, "one.html")
		require.NoError(t, WriteHTMLFile(path, a))
		page := read(t, path)
		assert.Contains(t, page, "<title>topobench report · ")
		assert.NotContains(t, page, "topobench comparison")
	})
	t.Run("several", func(t *testing.T) {
		path := filepath.Join(out, "two.html")
		require.NoError(t, WriteHTMLFile(path, a, b))
		page := read(t, path)
		assert.Contains(t, page, "<title>topobench comparison · ")
		assert.Contains(t, page, "Ratios to standalone, B against A")
	})
	t.Run("a missing directory", func(t *testing.T) {
		path := filepath.Join(out, "kept.html")
		require.NoError(t, os.WriteFile(path, []byte("before"), 0o644))
		missing := filepath.Join(out, "no-such-sweep")
		err := WriteHTMLFile(path, a, missing)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), missing+": "), err.Error())
		assert.Equal(t, "before", read(t, path), "the old page is left as it was")
	})
	t.Run("an unwritable path", func(t *testing.T) {
		notDir := filepath.Join(out, "file")
		require.NoError(t, os.WriteFile(notDir, nil, 0o644))
		err := WriteHTMLFile(filepath.Join(notDir, "report.html"), a)
		require.Error(t, err)
		assert.Contains(t, err.Error(), notDir)
		entries, err := os.ReadDir(out)
		require.NoError(t, err)
		for _, e := range entries {
			assert.False(t, strings.Contains(e.Name(), "tmp"), "no temporary file left: %s", e.Name())
		}
	})
}

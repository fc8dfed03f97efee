package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// benchSamples reads one benchmark's samples from the files the stats
// package checks against benchstat, so this test can expect benchstat's
// own text for them.
func benchSamples(t *testing.T, file, name string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "internal", "stats", "testdata", file))
	require.NoError(t, err)
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 4 && fs[0] == "BenchmarkCell/"+name {
			v, err := strconv.ParseFloat(fs[2], 64)
			require.NoError(t, err)
			out = append(out, v)
		}
	}
	require.NotEmpty(t, out, "%s in %s", name, file)
	return out
}

type fakeCell struct {
	topology   string
	gomaxprocs int
	reqs       []float64
}

// writeSweep writes a results directory holding one successful run per
// value, and failed runs for the cells in failed.
func writeSweep(t *testing.T, dir string, cells []fakeCell, failed ...fakeCell) {
	t.Helper()
	require.NoError(t, results.Create(dir))
	env := results.Env{
		Command: []string{"topobench", "compare"},
		Start:   time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC),
		Plan: results.Plan{
			Topologies: []string{"standalone", "nginx-http", "nginx-fcgi-unix"},
			GOMAXPROCS: []int{1, 8}, Reps: 6, Duration: 10 * time.Second,
		},
	}
	require.NoError(t, results.WriteEnv(dir, env))
	for _, c := range cells {
		for i, v := range c.reqs {
			run := results.Run{
				Cell:    results.Cell{Topology: c.topology, GOMAXPROCS: c.gomaxprocs, Rep: i + 1},
				Figures: &results.Figures{ReqPerSec: v, Requests: int64(v * 10)},
			}
			require.NoError(t, results.WriteRun(dir, run, nil))
		}
	}
	for _, c := range failed {
		run := results.Run{Cell: results.Cell{Topology: c.topology, GOMAXPROCS: c.gomaxprocs, Rep: len(c.reqs) + 1}, Error: "starting nginx: exit status 1"}
		require.NoError(t, results.WriteRun(dir, run, nil))
	}
}

func TestDiff(t *testing.T) {
	shiftOld, shiftNew := benchSamples(t, "old.txt", "g=1/topo=shift"), benchSamples(t, "new.txt", "g=1/topo=shift")
	sameOld, sameNew := benchSamples(t, "old.txt", "g=1/topo=same"), benchSamples(t, "new.txt", "g=1/topo=same")
	fewOld, fewNew := benchSamples(t, "old.txt", "g=1/topo=few"), benchSamples(t, "new.txt", "g=1/topo=few")

	root := t.TempDir()
	oldDir, newDir := filepath.Join(root, "old"), filepath.Join(root, "new")
	writeSweep(t, oldDir, []fakeCell{
		{"standalone", 1, shiftOld},
		{"nginx-http", 1, sameOld},
		{"standalone", 8, fewOld},
	}, fakeCell{"nginx-http", 8, nil})
	writeSweep(t, newDir, []fakeCell{
		{"standalone", 1, shiftNew},
		{"nginx-http", 1, sameNew},
		{"standalone", 8, fewNew},
		{"nginx-fcgi-unix", 8, []float64{30000, 31000, 29000}},
	})

	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"diff", oldDir, newDir}, &stdout, &stderr), stderr.String())
	out := stdout.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	find := func(prefix string, from int) string {
		t.Helper()
		for _, l := range lines[from:] {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line starting %q in\n%s", prefix, out)
		return ""
	}
	fields := func(l string) string { return strings.Join(strings.Fields(l), " ") }

	// The req/s rows read as benchstat's rows for the same samples
	// (internal/stats/testdata/benchstat.golden).
	assert.Equal(t, "standalone/gomaxprocs=1 21.68k ± 6% 35.65k ± 6% +64.45% (p=0.002 n=6)", fields(find("standalone/gomaxprocs=1 ", 0)))
	assert.Equal(t, "nginx-http/gomaxprocs=1 31.51k ± 14% 29.54k ± 7% ~ (p=0.485 n=6)", fields(find("nginx-http/gomaxprocs=1 ", 0)))
	assert.Equal(t, "standalone/gomaxprocs=8 48.45k ± ∞ ¹ 59.78k ± ∞ ¹ ~ (p=0.100 n=3) ²", fields(find("standalone/gomaxprocs=8 ", 0)))
	assert.Contains(t, fields(find("nginx-fcgi-unix/gomaxprocs=8 ", 0)), "30.00k ± ∞ ¹ only in NEW")
	assert.Contains(t, out, "¹ need >= 6 samples for confidence interval at level 0.95\n")
	assert.Contains(t, out, "² need >= 4 samples to detect a difference at alpha level 0.05\n")
	assert.Contains(t, out, "left out: 1 failed runs of OLD, 0 of NEW\n")
	assert.Contains(t, find("geomean", 0), "%")

	// The ratio table: repetition r of nginx-http over repetition r of
	// standalone, compared across the sweeps as benchstat would compare
	// those ratios.
	ratioTable := -1
	for i, l := range lines {
		if strings.Contains(l, "vs standalone") {
			ratioTable = i
			break
		}
	}
	require.Positive(t, ratioTable, "no ratio table")
	ro, err := stats.Pairwise(sameOld, shiftOld)
	require.NoError(t, err)
	rn, err := stats.Pairwise(sameNew, shiftNew)
	require.NoError(t, err)
	c := stats.Compare(ro, rn)
	require.True(t, c.Significant(), "standalone rose 64%% and nginx-http did not: the ratio fell")
	row := fields(find("nginx-http/gomaxprocs=1 ", ratioTable))
	assert.True(t, strings.HasSuffix(row, c.String()), "%q does not end with %q", row, c.String())
	assert.True(t, strings.HasPrefix(row, "nginx-http/gomaxprocs=1 "+strconv.FormatFloat(c.Old.Center, 'f', 3, 64)+" ± "+c.Old.Range()), row)
	assert.Less(t, c.Delta(), -0.3)
	// standalone has no ratio row; nginx-fcgi-unix has a ratio only in
	// NEW (over standalone's first 3 repetitions).
	assert.NotContains(t, strings.Join(lines[ratioTable:], "\n"), "standalone/gomaxprocs")
	assert.Contains(t, fields(find("nginx-fcgi-unix/gomaxprocs=8 ", ratioTable)), "only in NEW")
}

func TestDiffBadInput(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "good")
	writeSweep(t, good, []fakeCell{{"standalone", 1, []float64{1, 2, 3}}})
	empty := filepath.Join(root, "empty")
	writeSweep(t, empty, nil, fakeCell{"standalone", 1, nil})
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no args", []string{"diff"}, 2, "want two results directories"},
		{"one arg", []string{"diff", good}, 2, "want two results directories"},
		{"three args", []string{"diff", good, good, good}, 2, "want two results directories"},
		{"missing old", []string{"diff", filepath.Join(root, "nope"), good}, 1, "diff: OLD: results directory"},
		{"not a sweep", []string{"diff", good, root}, 1, "diff: NEW: " + root + " is not a results directory"},
		{"no successful runs", []string{"diff", empty, good}, 1, "holds no successful runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Equal(t, tt.code, exitCode(err))
		})
	}
}

// TestDiffMachineShift: the load generator's CPU per request is compared
// cell by cell, and a common shift is called a change of the machine.
func TestDiffMachineShift(t *testing.T) {
	// usPerReq is the load generator's CPU per request at GOMAXPROCS 1 and 8.
	write := func(t *testing.T, dir string, usPerReq [2]float64) {
		require.NoError(t, results.Create(dir))
		require.NoError(t, results.WriteEnv(dir, results.Env{Plan: results.Plan{
			Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 8}, Reps: 3, Duration: 10 * time.Second}}))
		for i, g := range []int{1, 8} {
			for _, top := range []string{"standalone", "nginx-http"} {
				for rep := 1; rep <= 3; rep++ {
					n := int64(100000 + rep)
					run := results.Run{
						Cell:    results.Cell{Topology: top, GOMAXPROCS: g, Rep: rep},
						Figures: &results.Figures{ReqPerSec: float64(n) / 10, Requests: n},
						CPU:     &results.CPU{Load: results.Usage{User: usPerReq[i] * float64(n) / 1e6}},
					}
					require.NoError(t, results.WriteRun(dir, run, nil))
				}
			}
		}
	}
	for _, tt := range []struct {
		name     string
		old, new [2]float64
		want     string
	}{
		{"slower machine", [2]float64{20, 20}, [2]float64{26, 26}, "\nthe load generator spent +30% CPU per request in NEW"},
		{"slower for one block", [2]float64{20, 20}, [2]float64{21.6, 20}, "\ngomaxprocs=1: the load generator spent +8% CPU per request in NEW"},
		{"same machine", [2]float64{20, 20}, [2]float64{20.4, 19.8}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			oldDir, newDir := filepath.Join(root, "old"), filepath.Join(root, "new")
			write(t, oldDir, tt.old)
			write(t, newDir, tt.new)
			var stdout, stderr bytes.Buffer
			require.NoError(t, run(context.Background(), []string{"diff", oldDir, newDir}, &stdout, &stderr), stderr.String())
			out := stdout.String()
			t.Log("\n" + out)
			assert.Contains(t, out, "load CPU µs/req")
			if tt.want == "" {
				assert.NotContains(t, out, "spent")
				return
			}
			assert.Contains(t, out, tt.want)
		})
	}
}

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
)

// TestReportFailIf re-checks the committed fixture sweep (three runs a
// cell, so the point values decide) against bounds: each crossed bound
// is one line of the error, exit 1; bounds held or skipped are a line
// each on stderr, exit 0; a malformed one is one line naming it, exit 2,
// before anything is written.
func TestReportFailIf(t *testing.T) {
	for _, tt := range []struct {
		name    string
		bounds  []string
		code    int
		lines   []string // the error's lines, or stderr's when it exits 0
		written bool
	}{
		{"crossed", []string{"nginx-http@gomaxprocs=8 ratio < 0.35"}, 1,
			[]string{`fail-if "nginx-http@gomaxprocs=8 ratio < 0.35": crossed: GOMAXPROCS=8 nginx-http ratio 0.222 (no interval, 3 runs) < 0.350`}, true},
		{"every crossed bound a line", []string{"nginx-http ratio < 0.35", "nginx-fcgi-tcp p99 > 1s", "nginx-http p99 > 2s"}, 1,
			[]string{
				`fail-if "nginx-http ratio < 0.35": crossed: GOMAXPROCS=8 nginx-http ratio 0.222 (no interval, 3 runs) < 0.350`,
				`fail-if "nginx-fcgi-tcp p99 > 1s": crossed: GOMAXPROCS=8 nginx-fcgi-tcp p99 1.80 s (no interval, 3 runs) > 1.00 s`,
			}, true},
		{"held", []string{"nginx-http ratio < 0.1"}, 0,
			[]string{
				`fail-if "nginx-http ratio < 0.1": held: GOMAXPROCS=1 nginx-http ratio 0.404 (no interval, 3 runs)`,
				`fail-if "nginx-http ratio < 0.1": held: GOMAXPROCS=8 nginx-http ratio 0.222 (no interval, 3 runs)`,
			}, true},
		{"a figure the sweep lacks", []string{"nginx-http@gomaxprocs=1 nginx-us > 40"}, 0,
			[]string{`fail-if "nginx-http@gomaxprocs=1 nginx-us > 40": skipped: GOMAXPROCS=1 nginx-http has no nginx-us: no run measured nginx's CPU time`}, true},
		{"malformed", []string{"nginx-http ratio < 0.35", "nginx-http ratio 0.35"}, 2,
			[]string{`-fail-if "nginx-http ratio 0.35": no comparison: want TOPOLOGY FIGURE OP VALUE, OP one of < <= > >=`}, false},
		{"unknown figure", []string{"nginx-http rps < 100"}, 2,
			[]string{`-fail-if "nginx-http rps < 100": unknown figure "rps" (known: ratio, req/s, nginx-us, backend-us, servers-us, p50, p99, added-p99)`}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := analysistest.Copy(t)
			args := []string{"report", "-format", "json"}
			for _, b := range tt.bounds {
				args = append(args, "-fail-if", b)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append(args, dir), &stdout, &stderr)
			assert.Equal(t, tt.code, codeOf(err), "%v", err)
			if tt.code == 0 {
				assert.Equal(t, tt.lines, nonEmptyLines(stderr.String()))
			} else {
				require.Error(t, err)
				assert.Equal(t, tt.lines, strings.Split(err.Error(), "\n"))
			}
			if tt.written {
				assert.Equal(t, dir+"\n", stdout.String(), "the report is written before the check")
				assert.FileExists(t, filepath.Join(dir, "summary.json"))
			} else {
				assert.NoFileExists(t, filepath.Join(dir, "summary.json"), "a bad bound stops before any work")
			}
		})
	}
}

func TestReportFailIfHTML(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"report", "-fail-if", "nginx-http ratio < 0.35", "-html", filepath.Join(t.TempDir(), "x.html"), analysistest.Dir()}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Equal(t, "report: -fail-if checks one results directory, not an -html page", err.Error())
}

// TestCompareFailIfMalformed: compare refuses a bad bound before it
// measures anything, in one line.
func TestCompareFailIfMalformed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-reps", "1", "-out", out,
		"-fail-if", "nginx-http@gomaxprocs=1 p99 > 2"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	assert.Equal(t, `-fail-if "nginx-http@gomaxprocs=1 p99 > 2": p99: "2" is not a duration such as 2ms or 500us`, err.Error())
	assert.NoDirExists(t, out)
	assert.Empty(t, stdout.String())
}

// TestDiffFailIfRegression: diff exits 1, a line a cell, when a ratio to
// standalone fell significantly by more than the limit; 0 when the fall
// is within it or no ratio fell.
func TestDiffFailIfRegression(t *testing.T) {
	st := []float64{30000, 30500, 29500, 30200, 29800, 30000}
	root := t.TempDir()
	oldDir, newDir := filepath.Join(root, "old"), filepath.Join(root, "new")
	writeSweep(t, oldDir, []fakeCell{
		{"standalone", 1, st}, {"nginx-http", 1, []float64{12000, 12200, 11800, 12100, 11900, 12000}},
		{"standalone", 8, st}, {"nginx-fcgi-unix", 8, []float64{15000, 15100, 14900, 15050, 14950, 15000}},
	})
	writeSweep(t, newDir, []fakeCell{
		{"standalone", 1, st}, {"nginx-http", 1, []float64{10800, 10980, 10620, 10890, 10710, 10800}}, // -10%
		{"standalone", 8, st}, {"nginx-fcgi-unix", 8, []float64{15100, 14900, 15000, 14950, 15050, 15000}},
	})
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		lines []string
	}{
		{"no limit", nil, 0, nil},
		{"fell more than the limit", []string{"-fail-if-regression", "5%"}, 1, []string{"regressed: nginx-http/gomaxprocs=1 ratio to standalone 0.400 to 0.360, -10.00% (p=0.002 n=6), more than -5%"}},
		{"fell more than a fraction", []string{"-fail-if-regression", "0.05"}, 1, []string{"regressed: nginx-http/gomaxprocs=1 ratio to standalone 0.400 to 0.360, -10.00% (p=0.002 n=6), more than -5%"}},
		{"fell within the limit", []string{"-fail-if-regression", "15%"}, 0, nil},
		{"malformed", []string{"-fail-if-regression", "five"}, 2, []string{`-fail-if-regression: "five", want a fall such as 5% or 0.05, at least 0 and below 100%`}},
		{"out of range", []string{"-fail-if-regression", "100%"}, 2, []string{`-fail-if-regression: "100%", want a fall such as 5% or 0.05, at least 0 and below 100%`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append(append([]string{"diff"}, tt.args...), oldDir, newDir), &stdout, &stderr)
			assert.Equal(t, tt.code, codeOf(err), "%v", err)
			if tt.code == 0 {
				require.NoError(t, err)
				return
			}
			assert.Equal(t, tt.lines, strings.Split(err.Error(), "\n"))
			if tt.code == 1 {
				assert.Contains(t, stdout.String(), "vs standalone", "the tables come first")
			}
		})
	}
}

// TestPrintError: an error of several lines gets the command's name on
// each; another error once.
func TestPrintError(t *testing.T) {
	var b bytes.Buffer
	printError(&b, linesError([]string{"one", "two"}))
	printError(&b, usageError("bad\n  tail"))
	assert.Equal(t, "topobench: one\ntopobench: two\ntopobench: bad\n  tail\n", b.String())
}

// codeOf is the status the command exits with: 0 without an error.
func codeOf(err error) int {
	if err == nil {
		return 0
	}
	return exitCode(err)
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

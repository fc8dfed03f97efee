package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// failIfUsage is -fail-if's help, shared by compare and report.
var failIfUsage = "exit 1 when a figure of the report crosses this `BOUND`, as in 'nginx-http ratio < 0.35' or 'nginx-http@gomaxprocs=1 p99 > 2ms' (repeatable): TOPOLOGY[@DIM=VALUE] FIGURE OP VALUE, FIGURE one of " +
	strings.Join(analysis.FigureNames(), ", ") + ", OP one of < <= > >=; crossed when the figure's whole interval is past the value, or its point value where it has no interval (docs/ci.md)"

// addFailIf declares -fail-if on fs; the bounds are read after the parse
// (parseBounds), so that a bad one is one line.
func addFailIf(fs *flag.FlagSet) *[]string {
	var raw []string
	fs.Func("fail-if", failIfUsage, func(v string) error { raw = append(raw, v); return nil })
	return &raw
}

// parseBounds reads the -fail-if values; a bad one is a usage error
// naming it.
func parseBounds(raw []string) ([]analysis.Bound, error) {
	var bs []analysis.Bound
	for _, r := range raw {
		b, err := analysis.ParseBound(r)
		if err != nil {
			return nil, usageError("-fail-if %v", err)
		}
		bs = append(bs, b)
	}
	return bs, nil
}

// checkBounds judges the bounds on the results directory's analysis: a
// line on stderr for each bound held or skipped, and an error of one line
// a crossed bound, exit 1.
func checkBounds(dir string, bounds []analysis.Bound, stderr io.Writer) error {
	if len(bounds) == 0 {
		return nil
	}
	env, runs, err := results.Load(dir)
	if err != nil {
		return fmt.Errorf("-fail-if: %w", err)
	}
	var crossed []string
	for _, v := range analysis.Check(analysis.Summarize(env, runs), bounds) {
		if v.State == analysis.Crossed {
			crossed = append(crossed, v.String())
			continue
		}
		fmt.Fprintln(stderr, v.String())
	}
	return linesError(crossed)
}

// linesError is one exit-1 error of lines (nil for none), which main
// prints a line each.
func linesError(lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	return &exitError{code: 1, err: &lineList{lines}}
}

// lineList is an error of several lines, each one complete.
type lineList struct{ lines []string }

func (l *lineList) Error() string { return strings.Join(l.lines, "\n") }

// parseLimit reads -fail-if-regression's "5%" or "0.05"; 0 fails on any
// significant fall.
func parseLimit(v string) (float64, error) {
	num, isPct := strings.CutSuffix(v, "%")
	f, err := strconv.ParseFloat(num, 64)
	if isPct {
		f /= 100
	}
	if err != nil || !(f >= 0 && f < 1) {
		return 0, usageError("-fail-if-regression: %q, want a fall such as 5%% or 0.05, at least 0 and below 100%%", v)
	}
	return f, nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/report"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stopping"
)

// runWindows compares paired sweeps of different window lengths:
//
//	topobench windows [-precision 5%] DIR...
//
// Each DIR is a results directory of compare -design paired, one a window
// length. For each path it prints the spread of standalone's and the
// path's per-window rates, the spread and lag-1 autocorrelation of the
// pair ratios, and the pairs and measured time a ratio needs for
// -precision under the design -budget looks by; then the window length
// that gets every path there in the least time.
func runWindows(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("windows", stderr)
	precision := fs.String("precision", "5%", "how narrow each ratio to standalone's interval should get, e.g. 5% or 0.05")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench windows [-precision 5%] DIR...\n\nCompares paired sweeps (compare -design paired), one a window length: the\nspread of per-window rates of each path, and the time its ratio needs.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	prec, err := parsePrecision(*precision)
	if err != nil {
		return usageError("-precision: %v", err)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError("windows: want one or more results directories of paired sweeps")
	}
	var envs []results.Env
	var runs [][]results.Run
	for _, dir := range fs.Args() {
		env, rs, err := results.Load(dir)
		if err != nil {
			return fmt.Errorf("windows: %w", err)
		}
		envs, runs = append(envs, env), append(runs, rs)
	}
	spreads, err := analysis.WindowSpreads(fs.Args(), envs, runs, prec, stopping.MaxPairs)
	if err != nil {
		return usageError("windows: %v", err)
	}
	return report.WriteWindowSpreads(stdout, spreads, prec)
}

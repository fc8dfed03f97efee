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
)

// runDiff compares two sweeps the way benchstat compares two benchmark
// files:
//
//	topobench diff OLD NEW
//
// OLD and NEW are results directories written by topobench compare. For
// every cell (a topology at a GOMAXPROCS value) measured in both, it prints
// the median req/s of each sweep with its 95% confidence interval, the
// change of the median, and whether the change is significant: "~" when the
// Mann-Whitney U test does not find the two sets of repetitions different
// at alpha 0.05, else the change with its p-value. A second table does the
// same for each cell's ratio to standalone at the same GOMAXPROCS, taken
// repetition by repetition (repetition r of a cell over repetition r of
// standalone, which ran in the same round), so a change of the ratio is
// tested on the ratios themselves. Failed runs are left out and counted.
// The figures are benchstat's: the same samples written as benchmark
// files give the same medians, intervals, deltas and p-values.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", stderr)
	across := fs.Bool("across-loads", false, "compare cells whatever their load generator (each sweep's first -load; a paired sweep's cross-check left out), e.g. make compare's engine against make compare-2013's wrk")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench diff [-across-loads] OLD NEW\n\nCompares the req/s and the ratios to standalone of two results directories\n(written by topobench compare), cell by cell, as benchstat compares two files.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usageError("diff: want two results directories, OLD and NEW; got %d arguments", fs.NArg())
	}
	old, err := loadSamples(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("diff: OLD: %w", err)
	}
	new, err := loadSamples(fs.Arg(1))
	if err != nil {
		return fmt.Errorf("diff: NEW: %w", err)
	}
	if *across {
		old, new = old.AcrossLoads(), new.AcrossLoads()
	}
	return report.WriteDiff(stdout, analysis.Compare(old, new))
}

func loadSamples(dir string) (*analysis.Samples, error) {
	env, runs, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	return analysis.NewSamples(dir, env, runs)
}

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
// files give the same medians, intervals, deltas and p-values. With
// -fail-if-regression P it exits 1 after the tables, a line each, when a
// ratio to standalone fell significantly by more than P.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", stderr)
	across := fs.Bool("across-loads", false, "compare cells whatever their load generator (each sweep's first -load; a paired sweep's cross-check left out), e.g. make compare's engine against make compare-2013's wrk")
	regression := fs.String("fail-if-regression", "", "exit 1 when a ratio to standalone fell significantly (the ratio table's test) by more than this, as in 5% or 0.05; each such cell one line")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench diff [-across-loads] [-fail-if-regression P] OLD NEW\n\nCompares the req/s and the ratios to standalone of two results directories\n(written by topobench compare), cell by cell, as benchstat compares two files.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	limit := -1.0
	if *regression != "" {
		var err error
		if limit, err = parseLimit(*regression); err != nil {
			return err
		}
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
	c := analysis.Compare(old, new)
	if err := report.WriteDiff(stdout, c); err != nil || limit < 0 {
		return err
	}
	var lines []string
	for _, r := range c.Regressions(limit) {
		lines = append(lines, r.String())
	}
	return linesError(lines)
}

func loadSamples(dir string) (*analysis.Samples, error) {
	env, runs, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	return analysis.NewSamples(dir, env, runs)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/topobench/topobench/internal/report"
)

// runReportHTML renders one HTML page from one or more results
// directories:
//
//	topobench report -html OUT.html DIR1 [DIR2 ...]
//
// One directory gives that sweep's report.html; several give a
// comparison, the first the baseline: each other sweep's ratios to
// standalone against the baseline's with their significance (as
// topobench diff computes them), the charts overlaid, and a plain
// statement when the load generator's CPU per request says the machines
// differ. The page is one file with everything inline.
func runReportHTML(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	out := fs.String("html", "", "write one HTML page of the results directories to this file (the first directory is the baseline)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench report -html OUT.html DIR1 [DIR2 ...]\n\nRenders one self-contained HTML page: one results directory's report, or\nseveral compared with the first.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	if *out == "" {
		return usageError("report: -html needs an output file")
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return usageError("report: -html %s: no results directory given", *out)
	}
	var sweeps []report.Sweep
	for _, dir := range fs.Args() {
		sw, err := report.LoadSweep(dir)
		if err != nil {
			return fmt.Errorf("report: %s: %w", dir, err)
		}
		sweeps = append(sweeps, sw)
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".report-*.html")
	if err != nil {
		return fmt.Errorf("report: -html %s: %w", *out, err)
	}
	defer os.Remove(tmp.Name())
	if len(sweeps) == 1 {
		sw := sweeps[0]
		err = report.WriteHTML(tmp, sw.Dir, sw.Summary, sw.Runs)
	} else {
		err = report.WriteCompareHTML(tmp, report.CompareSweeps(sweeps))
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		return fmt.Errorf("report: -html %s: %w", *out, err)
	}
	fmt.Fprintln(stdout, *out)
	return nil
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/topobench/topobench/internal/report"
)

// runReport re-renders the report of a results directory from its records:
//
//	topobench report DIR
//
// It rewrites summary.md, summary.csv, summary.json, bench.txt and the
// charts (reqps.svg/.png, p99.svg/.png) in DIR from env.json and runs/.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "-html" || args[0] == "--html" || strings.HasPrefix(args[0], "-html=")) {
		return runReportHTML(ctx, args, stdout, stderr) // reporthtml.go
	}
	fs := newFlagSet("report", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench report DIR\n       topobench report -html OUT.html DIR1 [DIR2 ...]   (one HTML page; several sweeps compared with the first)\n\nRe-renders summary.md, summary.csv, summary.json, bench.txt and the charts\nof a results directory (one written by topobench compare) from its records.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	switch fs.NArg() {
	case 0:
		fs.Usage()
		return usageError("report: no results directory given")
	case 1:
	default:
		return usageError("report: unexpected argument %q (one results directory only)", fs.Arg(1))
	}
	dir := fs.Arg(0)
	if err := report.Rewrite(dir); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintln(stdout, filepath.Join(dir, report.MarkdownFile))
	return nil
}

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
//	topobench report [-format md,csv,json,bench,charts] DIR
//
// By default it rewrites every format: summary.md, summary.csv,
// summary.json, bench.txt and the charts, in DIR from env.json and runs/.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	format := fs.String("format", report.DefaultFormats, "comma-separated formats to write: "+formatNames()+", or all")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench report [-format LIST] DIR\n\nRe-renders the report of a results directory (one written by topobench\ncompare) from its records: summary.md, summary.csv, summary.json, bench.txt\nand the charts, or the formats -format names.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	render, err := renderer(*format)
	if err != nil {
		return usageError("report: %v", err)
	}
	switch fs.NArg() {
	case 0:
		fs.Usage()
		return usageError("report: no results directory given")
	case 1:
	default:
		return usageError("report: unexpected argument %q (one results directory only)", fs.Arg(1))
	}
	path, err := render(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintln(stdout, path)
	return nil
}

// renderer translates -format into the function that renders a results
// directory and names the file to read first: summary.md when written,
// else the directory.
func renderer(formats string) (func(dir string) (string, error), error) {
	rs, err := report.Select(formats)
	if err != nil {
		return nil, fmt.Errorf("-format: %w", err)
	}
	return func(dir string) (string, error) {
		if err := report.Rewrite(dir, rs...); err != nil {
			return "", err
		}
		for _, r := range rs {
			if r.Format() == "md" {
				return filepath.Join(dir, report.MarkdownFile), nil
			}
		}
		return dir, nil
	}, nil
}

// formatNames lists the formats -format knows.
func formatNames() string {
	var names []string
	for _, r := range report.Renderers() {
		names = append(names, r.Format())
	}
	return strings.Join(names, ", ")
}

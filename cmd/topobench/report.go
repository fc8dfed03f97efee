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

// runReport re-renders the report of a results directory from its records,
// or writes one HTML page of several:
//
//	topobench report [-format md,csv,json,bench,charts,html] DIR
//	topobench report -html OUT.html DIR1 [DIR2 ...]
//
// By default it rewrites every format in DIR from env.json and runs/. With
// -html, one directory gives that sweep's page and several a comparison
// with the first, as topobench diff computes it. -fail-if checks the
// sweep's figures against bounds after the report is written, as compare
// -fail-if does, without measuring again.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stderr)
	format := fs.String("format", report.DefaultFormats, "comma-separated formats to write: "+formatNames()+", or all")
	failIf := addFailIf(fs)
	html := fs.String("html", "", "write one self-contained HTML page of the results directories to this file instead (the first directory is the baseline)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench report [-format LIST] [-fail-if BOUND ...] DIR\n       topobench report -html OUT.html DIR1 [DIR2 ...]\n\nRe-renders the report of a results directory (one written by topobench\ncompare) from its records: summary.md, summary.csv, summary.json,\nbench.txt, the charts and report.html, or the formats -format names.\nWith -html, writes one page: a sweep's report, or several sweeps compared\nwith the first. -fail-if exits 1 when a figure crosses a bound.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	bounds, err := parseBounds(*failIf)
	if err != nil {
		return err
	}
	htmlSet := false
	fs.Visit(func(f *flag.Flag) { htmlSet = htmlSet || f.Name == "html" })
	if htmlSet {
		switch {
		case *html == "":
			return usageError("report: -html needs an output file")
		case fs.NArg() == 0:
			fs.Usage()
			return usageError("report: -html %s: no results directory given", *html)
		}
		if len(bounds) > 0 {
			return usageError("report: -fail-if checks one results directory, not an -html page")
		}
		if err := report.WriteHTMLFile(*html, fs.Args()...); err != nil {
			return fmt.Errorf("report: -html %s: %w", *html, err)
		}
		fmt.Fprintln(stdout, *html)
		return nil
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
		return usageError("report: unexpected argument %q (one results directory only; -html takes several)", fs.Arg(1))
	}
	path, err := render(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintln(stdout, path)
	return checkBounds(fs.Arg(0), bounds, stderr)
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

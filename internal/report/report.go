// Package report renders a sweep's analysis (internal/analysis) into
// what a person and a tool read, one Renderer per format, chosen by name
// (Select, -format): md writes summary.md (the choice of a path behind
// nginx and its costs table on top, the tables, the 2013 reference side
// by side, what each path costs with handler work, warnings, failed
// runs); csv and json summary.csv and summary.json (the same figures for
// tools); bench bench.txt (one line per run in Go benchmark format, so two
// sweeps compare with benchstat); charts the SVG and PNG charts (req/s and
// p99 per topology, CPU per request per process group, latency by
// percentile, p99 against concurrency, ratio against handler work); html
// report.html, one self-contained page of all of it with interactive
// charts (html.go). Write analyses the records once and runs each
// renderer; a new view is one more Renderer. WriteDiff prints the
// comparison of two sweeps as benchstat does, WriteHTMLFile one page of
// several.
//
// No statistic is computed here: the numbers come from the analysis, and
// the latency spectra read the merged histograms (internal/hdr) point by
// point.
package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// Files Write produces in the results directory.
const (
	MarkdownFile = "summary.md"
	CSVFile      = "summary.csv"
	JSONFile     = "summary.json"
	BenchFile    = "bench.txt"
	ReqPSChart   = "reqps"
	P99Chart     = "p99"
	CPUChart     = "cpu"
)

// Input is what a renderer draws from: the analysis of a sweep, the
// records it was computed from (for per-run series and histograms) and the
// results directory they are in, where the renderer writes.
type Input struct {
	Dir     string
	Summary analysis.Summary
	Runs    []results.Run
}

// A Renderer writes one view of a sweep into its results directory, as
// vegeta's reporters and benchstat's -format do: a new view is one more
// Renderer, with nothing else to edit.
type Renderer interface {
	// Format is the name -format selects the renderer by.
	Format() string
	// Render writes the renderer's files into in.Dir.
	Render(in Input) error
}

// fileRenderer renders one file from the input.
type fileRenderer struct {
	format, file string
	render       func(in Input, w io.Writer) error
}

func (f fileRenderer) Format() string { return f.format }

func (f fileRenderer) Render(in Input) error {
	var b bytes.Buffer
	if err := f.render(in, &b); err != nil {
		return fmt.Errorf("rendering %s: %w", f.file, err)
	}
	return writeFile(filepath.Join(in.Dir, f.file), b.Bytes())
}

// chartRenderer draws the bar charts and the built-in engine's charts, as
// SVG and PNG.
type chartRenderer struct{}

func (chartRenderer) Format() string { return "charts" }

func (chartRenderer) Render(in Input) error {
	s := summary{in.Summary}
	if err := s.WriteCharts(in.Dir); err != nil {
		return err
	}
	return s.writeScenarioCharts(in.Dir)
}

// Renderers lists every renderer, in the order Write runs them.
func Renderers() []Renderer {
	return []Renderer{
		fileRenderer{"md", MarkdownFile, func(in Input, w io.Writer) error { return summary{in.Summary}.WriteMarkdown(w) }},
		fileRenderer{"csv", CSVFile, func(in Input, w io.Writer) error { return summary{in.Summary}.WriteCSV(w) }},
		fileRenderer{"json", JSONFile, func(in Input, w io.Writer) error { return summary{in.Summary}.WriteJSON(w) }},
		fileRenderer{"bench", BenchFile, func(in Input, w io.Writer) error { return WriteBench(w, in.Summary.Env, in.Runs) }},
		chartRenderer{},
		fileRenderer{"html", HTMLFile, func(in Input, w io.Writer) error { return WriteHTML(w, in.Dir, in.Summary, in.Runs) }},
	}
}

// DefaultFormats is what a sweep writes unless told otherwise: every
// format.
const DefaultFormats = "all"

// Select parses a -format value, a comma-separated list of formats (md,
// csv, json, bench, charts) or "all", into renderers in Renderers' order.
func Select(formats string) ([]Renderer, error) {
	all := Renderers()
	var known []string
	for _, r := range all {
		known = append(known, r.Format())
	}
	want := map[string]bool{}
	for _, f := range strings.Split(formats, ",") {
		f = strings.TrimSpace(f)
		if f == DefaultFormats {
			for _, k := range known {
				want[k] = true
			}
			continue
		}
		if !slices.Contains(known, f) {
			return nil, fmt.Errorf("unknown format %q (known: %s, or all)", f, strings.Join(known, ", "))
		}
		want[f] = true
	}
	var out []Renderer
	for _, r := range all {
		if want[r.Format()] {
			out = append(out, r)
		}
	}
	return out, nil
}

// Write analyses the runs and renders them into dir with each renderer
// (every one when none is given).
func Write(dir string, env results.Env, runs []results.Run, rs ...Renderer) error {
	if len(rs) == 0 {
		rs = Renderers()
	}
	in := Input{Dir: dir, Summary: analysis.Summarize(env, runs), Runs: runs}
	for _, r := range rs {
		if err := r.Render(in); err != nil {
			return err
		}
	}
	return nil
}

// Rewrite loads a results directory and renders its report again.
func Rewrite(dir string, rs ...Renderer) error {
	env, runs, err := results.Load(dir)
	if err != nil {
		return err
	}
	return Write(dir, env, runs, rs...)
}

func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// summary is the analysis as the renderers of this package see it: its
// figures, with the formatting views of each file as methods.
type summary struct{ analysis.Summary }

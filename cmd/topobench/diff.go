package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"golang.org/x/perf/benchunit"
)

// diffBaseline is the topology every ratio is taken against.
const diffBaseline = "standalone"

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
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench diff OLD NEW\n\nCompares the req/s and the ratios to standalone of two results directories\n(written by topobench compare), cell by cell, as benchstat compares two files.")
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
	old, err := loadSweep(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("diff: OLD: %w", err)
	}
	new, err := loadSweep(fs.Arg(1))
	if err != nil {
		return fmt.Errorf("diff: NEW: %w", err)
	}
	return writeDiff(stdout, old, new)
}

// sweepSamples is a results directory reduced to req/s per cell and
// repetition.
type sweepSamples struct {
	name  string
	env   results.Env
	cells []diffCell // in results.Load's order
	reqs  map[diffCell]map[int]float64
	// loadCPU is the load generator's CPU µs per request answered, where
	// it was measured: the same program doing the same work in both
	// sweeps, so a change of it is a change of the machine.
	loadCPU map[diffCell]map[int]float64
	failed  int
}

// diffCell is a cell without its repetition.
type diffCell struct{ results.Cell }

// String is the row label: the topology and GOMAXPROCS, and the other
// dimensions where they are not the 2013 run's.
func (c diffCell) String() string {
	s := fmt.Sprintf("%s/gomaxprocs=%d", c.Topology, c.GOMAXPROCS)
	if t := c.TargetName(); t != results.TargetGo {
		s += "/target=" + t
	}
	if c.Connections != 0 && c.Connections != 5000 {
		s += fmt.Sprintf("/connections=%d", c.Connections)
	}
	if l := c.LoadName(); l != results.LoadWrk {
		s += "/load=" + string(l)
	}
	if c.Name != "" {
		s += "/scenario=" + c.Name
	} else if c.Rate > 0 || c.Wait > 0 {
		s += fmt.Sprintf("/rate=%g/wait=%s", c.Rate, c.Wait)
	}
	return s
}

func loadSweep(dir string) (*sweepSamples, error) {
	env, runs, err := results.Load(dir)
	if err != nil {
		return nil, err
	}
	s := &sweepSamples{name: dir, env: env, reqs: map[diffCell]map[int]float64{}, loadCPU: map[diffCell]map[int]float64{}}
	for _, r := range runs {
		cell := r.Cell
		cell.Rep = 0
		if cell.Connections == 0 && len(env.Plan.Connections) == 1 {
			cell.Connections = env.Plan.Connections[0] // a record from before connections was a dimension
		}
		c := diffCell{cell}
		if r.Failed() {
			s.failed++
			continue
		}
		if s.reqs[c] == nil {
			s.reqs[c] = map[int]float64{}
			s.cells = append(s.cells, c)
		}
		f := r.Figures
		s.reqs[c][r.Rep] = f.ReqPerSec
		if r.CPU != nil && r.CPU.Load.Total() > 0 && f.Requests > 0 {
			if s.loadCPU[c] == nil {
				s.loadCPU[c] = map[int]float64{}
			}
			s.loadCPU[c][r.Rep] = results.PerRequest(r.CPU.Load, f.Requests)
		}
	}
	if len(s.cells) == 0 {
		return nil, fmt.Errorf("%s holds no successful runs", dir)
	}
	return s, nil
}

// values returns the req/s of a cell in repetition order.
func (s *sweepSamples) values(c diffCell) []float64 {
	return sortedValues(s.reqs[c])
}

// ratios returns the cell's req/s over standalone's, repetition by
// repetition, for the repetitions where both succeeded.
func (s *sweepSamples) ratios(c diffCell) []float64 {
	b := c
	b.Topology = diffBaseline
	base := s.reqs[b]
	out := map[int]float64{}
	for rep, v := range s.reqs[c] {
		if b, ok := base[rep]; ok && b > 0 {
			out[rep] = v / b
		}
	}
	return sortedValues(out)
}

func sortedValues(m map[int]float64) []float64 {
	reps := make([]int, 0, len(m))
	for r := range m {
		reps = append(reps, r)
	}
	sort.Ints(reps)
	out := make([]float64, len(reps))
	for i, r := range reps {
		out[i] = m[r]
	}
	return out
}

// rows returns the cells of both sweeps: old's order, then cells only new
// has.
func rows(old, new *sweepSamples, keep func(diffCell) bool) []diffCell {
	var out []diffCell
	seen := map[diffCell]bool{}
	for _, s := range []*sweepSamples{old, new} {
		for _, c := range s.cells {
			if !seen[c] && keep(c) {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	// Group by target and GOMAXPROCS as results.Load does, keeping the
	// plan order within a group.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TargetName() != b.TargetName() {
			return a.TargetName() < b.TargetName()
		}
		return a.GOMAXPROCS < b.GOMAXPROCS
	})
	return out
}

func writeDiff(w io.Writer, old, new *sweepSamples) error {
	notes := &footnotes{}
	fmt.Fprintf(w, "old: %s\nnew: %s\n\n", describeSweep(old), describeSweep(new))

	reqRows := rows(old, new, func(diffCell) bool { return true })
	t := newDiffTable(old.name, new.name, "req/s", notes)
	var geoOld, geoNew []float64
	for _, c := range reqRows {
		o, n := old.values(c), new.values(c)
		t.add(c.String(), o, n, func(vals []float64) func(float64) string {
			sc := benchunit.CommonScale(vals, benchunit.Decimal)
			return sc.Format
		})
		// A geomean needs positive figures (a cell that served nothing
		// has none).
		if len(o) > 0 && len(n) > 0 && stats.Summarize(o).Center > 0 && stats.Summarize(n).Center > 0 {
			geoOld = append(geoOld, stats.Summarize(o).Center)
			geoNew = append(geoNew, stats.Summarize(n).Center)
		}
	}
	if len(geoOld) > 0 {
		go1, gn := geomean(geoOld), geomean(geoNew)
		sc := benchunit.CommonScale([]float64{go1, gn}, benchunit.Decimal)
		t.summary("geomean", sc.Format(go1), sc.Format(gn), fmt.Sprintf("%+.2f%%", (gn/go1-1)*100))
	}
	t.write(w)

	ratioRows := rows(old, new, func(c diffCell) bool {
		return c.Topology != diffBaseline && (len(old.ratios(c)) > 0 || len(new.ratios(c)) > 0)
	})
	if len(ratioRows) > 0 {
		fmt.Fprintln(w)
		t := newDiffTable(old.name, new.name, "vs "+diffBaseline, notes)
		for _, c := range ratioRows {
			t.add(c.String(), old.ratios(c), new.ratios(c), func([]float64) func(float64) string {
				return func(v float64) string { return fmt.Sprintf("%.3f", v) }
			})
		}
		t.write(w)
	} else {
		fmt.Fprintf(w, "\nno ratios to %s: neither sweep measured %s beside another topology at the same GOMAXPROCS\n", diffBaseline, diffBaseline)
	}
	writeLoadCPU(w, old, new, notes)
	notes.write(w)
	if old.failed+new.failed > 0 {
		fmt.Fprintf(w, "left out: %d failed runs of OLD, %d of NEW\n", old.failed, new.failed)
	}
	return nil
}

// writeLoadCPU compares the load generator's CPU per request, cell by
// cell, where both sweeps measured it. The load generator does the same
// work for a request in both, so a shift common to every cell says the
// machine itself ran faster or slower (a busy host, a shared core),
// which steal time does not always show: then compare ratios, not rates.
func writeLoadCPU(w io.Writer, old, new *sweepSamples, notes *footnotes) {
	cpuRows := rows(old, new, func(c diffCell) bool { return len(old.loadCPU[c]) > 0 && len(new.loadCPU[c]) > 0 })
	if len(cpuRows) == 0 {
		return
	}
	fmt.Fprintln(w)
	t := newDiffTable(old.name, new.name, "load CPU µs/req", notes)
	var o, n []float64
	// Per group too (the cells that differ only in topology, run as one
	// block of minutes): a host that slowed for part of a sweep shows
	// there, not in the whole. A group is its cells' row without the
	// topology, so it is named as the rows are.
	var groups []diffCell
	bo, bn := map[diffCell][]float64{}, map[diffCell][]float64{}
	for _, c := range cpuRows {
		ov, nv := sortedValues(old.loadCPU[c]), sortedValues(new.loadCPU[c])
		t.add(c.String(), ov, nv, func([]float64) func(float64) string {
			return func(v float64) string { return fmt.Sprintf("%.1f", v) }
		})
		oc, nc := stats.Summarize(ov).Center, stats.Summarize(nv).Center
		o, n = append(o, oc), append(n, nc)
		gr := c
		gr.Topology = ""
		if !slices.Contains(groups, gr) {
			groups = append(groups, gr)
		}
		bo[gr], bn[gr] = append(bo[gr], oc), append(bn[gr], nc)
	}
	g := geomean(n)/geomean(o) - 1
	t.summary("geomean", fmt.Sprintf("%.1f", geomean(o)), fmt.Sprintf("%.1f", geomean(n)), fmt.Sprintf("%+.2f%%", g*100))
	t.write(w)
	shifted := func(label string, g float64) {
		fmt.Fprintf(w, "%sthe load generator spent %+.0f%% CPU per request in NEW over the same cells: the machine itself likely ran at another speed (a busy host or a shared core, which steal time does not always show); the ratios to %s are the comparable figures\n", label, g*100, diffBaseline)
	}
	if math.Abs(g) >= machineShift {
		shifted("", g)
		return
	}
	if len(groups) < 2 {
		return
	}
	for _, gr := range groups {
		if bg := geomean(bn[gr])/geomean(bo[gr]) - 1; math.Abs(bg) >= machineShift {
			shifted(strings.TrimPrefix(gr.String(), "/")+": ", bg)
		}
	}
}

// machineShift is the change of the load generator's CPU per request
// (geomean over cells, or over a group's cells) past which diff says the
// machine changed speed.
const machineShift = 0.05

func describeSweep(s *sweepSamples) string {
	p := s.env.Plan
	var b strings.Builder
	b.WriteString(s.name)
	if !s.env.Start.IsZero() {
		fmt.Fprintf(&b, ", started %s", s.env.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if p.Reps > 0 {
		fmt.Fprintf(&b, ", %d reps of %s", p.Reps, p.Duration)
	}
	if s.env.Interrupted {
		b.WriteString(", interrupted")
	}
	return b.String()
}

func geomean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// footnotes numbers warnings as benchstat does (¹ ² ³ ...), once each
// across tables.
type footnotes struct {
	texts []string
}

func (f *footnotes) mark(msgs []string) string {
	var marks []string
	for _, m := range msgs {
		i := -1
		for j, t := range f.texts {
			if t == m {
				i = j
			}
		}
		if i < 0 {
			f.texts = append(f.texts, m)
			i = len(f.texts) - 1
		}
		marks = append(marks, superscript(i+1))
	}
	return strings.Join(marks, " ")
}

func (f *footnotes) write(w io.Writer) {
	for i, t := range f.texts {
		fmt.Fprintf(w, "%s %s\n", superscript(i+1), t)
	}
}

func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	var b strings.Builder
	for _, c := range fmt.Sprint(n) {
		b.WriteString(string([]rune(digits)[c-'0']))
	}
	return b.String()
}

// diffTable lays out benchstat's two-column comparison:
//
//	                  │    OLD     │                NEW                │
//	                  │   req/s    │   req/s     vs base               │
//	name                21.68k ± 6%  35.65k ± 6%  +64.45% (p=0.002 n=6)
type diffTable struct {
	oldName, newName, unit string
	notes                  *footnotes
	rows                   [][]string // name, old center, old ±, old note, new center, new ±, new note, delta, test, test note
}

func newDiffTable(oldName, newName, unit string, notes *footnotes) *diffTable {
	return &diffTable{oldName: oldName, newName: newName, unit: unit, notes: notes}
}

// add appends a row; format picks the number format from the row's two
// medians, so a row's figures share a scale as in benchstat.
func (t *diffTable) add(name string, old, new []float64, format func([]float64) func(float64) string) {
	row := make([]string, 10)
	row[0] = name
	var centers []float64
	var so, sn stats.Summary
	if len(old) > 0 {
		so = stats.Summarize(old)
		centers = append(centers, so.Center)
	}
	if len(new) > 0 {
		sn = stats.Summarize(new)
		centers = append(centers, sn.Center)
	}
	f := format(centers)
	if len(old) > 0 {
		row[1], row[2], row[3] = f(so.Center), so.Range(), t.notes.mark(so.Warnings)
	}
	if len(new) > 0 {
		row[4], row[5], row[6] = f(sn.Center), sn.Range(), t.notes.mark(sn.Warnings)
	}
	switch {
	case len(old) > 0 && len(new) > 0:
		c := stats.Compare(old, new)
		row[7], row[8], row[9] = c.DeltaString(), "("+c.Test()+")", t.notes.mark(c.Warnings)
	case len(old) > 0:
		row[8] = "only in OLD"
	default:
		row[8] = "only in NEW"
	}
	t.rows = append(t.rows, row)
}

// summary appends a row without intervals (geomean).
func (t *diffTable) summary(name, old, new, delta string) {
	t.rows = append(t.rows, []string{name, old, "", "", new, "", "", delta, "", ""})
}

func (t *diffTable) write(w io.Writer) {
	width := make([]int, 10)
	for _, r := range t.rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	// A cell "21.68k ± 6% ¹": center, " ± " range, then the note.
	cell := func(r []string, i int) string {
		if r[i] == "" {
			return pad("", width[i]+3+width[i+1]+noteWidth(width[i+2]), false)
		}
		s := pad(r[i], width[i], true)
		if r[i+1] != "" {
			s += " ± " + pad(r[i+1], width[i+1], true)
		} else {
			s += "   " + pad("", width[i+1], false)
		}
		return s + pad(note(r[i+2]), noteWidth(width[i+2]), false)
	}
	// Lay the cells out first, then widen the columns to their headers.
	type line struct{ name, old, new, delta string }
	var lines []line
	for _, r := range t.rows {
		delta := pad(r[7], width[7], true) + " " + pad(r[8], width[8], false) + pad(note(r[9]), noteWidth(width[9]), false)
		lines = append(lines, line{r[0], cell(r, 1), cell(r, 4), delta})
	}
	nameW := width[0]
	oldW := max(runeLen(lines[0].old), runeLen(t.oldName), runeLen(t.unit))
	newW := max(runeLen(lines[0].new), runeLen(t.unit))
	deltaW := max(runeLen(lines[0].delta), runeLen("vs base"))
	if extra := runeLen(t.newName) - (newW + 2 + deltaW); extra > 0 {
		deltaW += extra
	}
	fmt.Fprintf(w, "%s │ %s │ %s │\n", pad("", nameW, false), center(t.oldName, oldW), center(t.newName, newW+2+deltaW))
	fmt.Fprintf(w, "%s │ %s │ %s  %s │\n", pad("", nameW, false), center(t.unit, oldW), center(t.unit, newW), pad("vs base", deltaW, false))
	for _, l := range lines {
		out := pad(l.name, nameW, false) + "   " + pad(l.old, oldW, true) + "   " + pad(l.new, newW, true) + "  " + l.delta
		fmt.Fprintln(w, strings.TrimRight(out, " "))
	}
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func note(s string) string {
	if s == "" {
		return ""
	}
	return " " + s
}

func noteWidth(w int) int {
	if w == 0 {
		return 0
	}
	return w + 1
}

func pad(s string, w int, right bool) string {
	n := w - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

func center(s string, w int) string {
	n := w - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	return strings.Repeat(" ", n/2) + s + strings.Repeat(" ", n-n/2)
}

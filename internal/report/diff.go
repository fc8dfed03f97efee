package report

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchunit"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/stats"
)

// WriteDiff renders a comparison of two sweeps as benchstat prints one:
// a table of req/s per cell, one of the ratios to standalone, and one of
// the load generator's CPU per request, each row with both medians and
// their intervals, the change and its test; warnings as numbered
// footnotes; then what a shift of the load generator's CPU says.
func WriteDiff(w io.Writer, c analysis.Comparison) error {
	notes := &footnotes{}
	fmt.Fprintf(w, "old: %s\nnew: %s\n\n", describeSweep(c.Old), describeSweep(c.New))

	t := newDiffTable(c.Old.Name, c.New.Name, "req/s", notes)
	t.addTable(c.ReqPerSec, func(vals []float64) func(float64) string {
		return benchunit.CommonScale(vals, benchunit.Decimal).Format
	})
	if g := c.ReqPerSec; g.GeomeanOld > 0 {
		sc := benchunit.CommonScale([]float64{g.GeomeanOld, g.GeomeanNew}, benchunit.Decimal)
		t.summary("geomean", sc.Format(g.GeomeanOld), sc.Format(g.GeomeanNew), fmt.Sprintf("%+.2f%%", (g.GeomeanNew/g.GeomeanOld-1)*100))
	}
	t.write(w)

	if len(c.Ratios.Rows) > 0 {
		fmt.Fprintln(w)
		t := newDiffTable(c.Old.Name, c.New.Name, "vs "+analysis.Standalone, notes)
		t.addTable(c.Ratios, fixed("%.3f"))
		t.write(w)
	} else {
		fmt.Fprintf(w, "\nno ratios to %s: neither sweep measured %s beside another topology at the same GOMAXPROCS\n", analysis.Standalone, analysis.Standalone)
	}
	if cpu := c.LoadCPU; len(cpu.Rows) > 0 {
		fmt.Fprintln(w)
		t := newDiffTable(c.Old.Name, c.New.Name, "load CPU µs/req", notes)
		t.addTable(cpu, fixed("%.1f"))
		t.summary("geomean", fmt.Sprintf("%.1f", cpu.GeomeanOld), fmt.Sprintf("%.1f", cpu.GeomeanNew), fmt.Sprintf("%+.2f%%", (cpu.GeomeanNew/cpu.GeomeanOld-1)*100))
		t.write(w)
		for _, s := range c.Shifts {
			label := ""
			if s.Group != nil {
				// A group is named as its rows are, without the topology.
				label = strings.TrimPrefix(analysis.Key{Group: *s.Group}.Path(), "/") + ": "
			}
			fmt.Fprintf(w, "%sthe load generator spent %+.0f%% CPU per request in NEW over the same cells: the machine itself likely ran at another speed (a busy host or a shared core, which steal time does not always show); the ratios to %s are the comparable figures\n", label, s.Change*100, analysis.Standalone)
		}
	}
	notes.write(w)
	if c.Old.Failed+c.New.Failed > 0 {
		fmt.Fprintf(w, "left out: %d failed runs of OLD, %d of NEW\n", c.Old.Failed, c.New.Failed)
	}
	return nil
}

func fixed(format string) func([]float64) func(float64) string {
	return func([]float64) func(float64) string {
		return func(v float64) string { return fmt.Sprintf(format, v) }
	}
}

func describeSweep(s *analysis.Samples) string {
	p := s.Env.Plan
	var b strings.Builder
	b.WriteString(s.Name)
	if !s.Env.Start.IsZero() {
		fmt.Fprintf(&b, ", started %s", s.Env.Start.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if p.Reps > 0 {
		fmt.Fprintf(&b, ", %d reps of %s", p.Reps, p.Duration)
	}
	if s.Env.Interrupted {
		b.WriteString(", interrupted")
	}
	return b.String()
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

// addTable appends a row per cell; format picks the number format from a
// row's two medians, so a row's figures share a scale as in benchstat.
func (t *diffTable) addTable(tab analysis.Table, format func([]float64) func(float64) string) {
	for _, r := range tab.Rows {
		t.add(r, format)
	}
}

func (t *diffTable) add(r analysis.Row, format func([]float64) func(float64) string) {
	row := make([]string, 10)
	row[0] = r.Key.Path()
	var centers []float64
	for _, s := range []*stats.Summary{r.Old, r.New} {
		if s != nil {
			centers = append(centers, s.Center)
		}
	}
	f := format(centers)
	if so := r.Old; so != nil {
		row[1], row[2], row[3] = f(so.Center), so.Range(), t.notes.mark(so.Warnings)
	}
	if sn := r.New; sn != nil {
		row[4], row[5], row[6] = f(sn.Center), sn.Range(), t.notes.mark(sn.Warnings)
	}
	switch {
	case r.Change != nil:
		row[7], row[8], row[9] = r.Change.DeltaString(), "("+r.Change.Test()+")", t.notes.mark(r.Change.Warnings)
	case r.Old != nil:
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
	fmt.Fprintf(w, "%s │ %s │ %s │\n", pad("", nameW, false), centered(t.oldName, oldW), centered(t.newName, newW+2+deltaW))
	fmt.Fprintf(w, "%s │ %s │ %s  %s │\n", pad("", nameW, false), centered(t.unit, oldW), centered(t.unit, newW), pad("vs base", deltaW, false))
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

func centered(s string, w int) string {
	n := w - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	return strings.Repeat(" ", n/2) + s + strings.Repeat(" ", n-n/2)
}

package analysis

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Bounds a sweep's figures must keep, for CI (compare and report
// -fail-if): "TOPOLOGY[@DIM=VALUE,...] FIGURE OP VALUE", such as
// "nginx-http ratio < 0.35" or "nginx-http@gomaxprocs=1 p99 > 2ms". A
// bound applies to every group that has the topology, or to those the
// selector names. It is crossed when the figure's whole confidence
// interval lies past the value: a figure whose interval holds the value
// has not been shown to cross it, and failing a build on noise teaches
// people to ignore the check. A figure with no interval (too few runs, or
// a latency percentile, which has none) is judged by its point value.

// ErrBound is the error of a bound that does not parse (errors.Is).
var ErrBound = errors.New("bad bound")

// Op is a bound's comparison: the figure fails the bound when it is Op
// the value.
type Op string

// The operators a bound takes.
const (
	Below   Op = "<"
	AtMost  Op = "<="
	Above   Op = ">"
	AtLeast Op = ">="
)

// past reports whether v lies past the bound's value b.
func (op Op) past(v, b float64) bool {
	switch op {
	case Below:
		return v < b
	case AtMost:
		return v <= b
	case Above:
		return v > b
	}
	return v >= b
}

// Bound is one parsed bound.
type Bound struct {
	// Text is the bound as given, to name it in every line about it.
	Text     string
	Topology string
	// Select are the DIM=VALUE pairs a group must have, by a dimension's
	// name or label (results.Dim); none selects every group.
	Select []Selector
	Figure string
	Op     Op
	// Value is in the figure's unit: a ratio, req/s, µs, or ns for a
	// latency.
	Value float64
}

// Selector is one DIM=VALUE of a bound's @.
type Selector struct{ Dim, Value string }

// unit is how a figure's values are written and read.
type unit int

const (
	plain    unit = iota // a ratio
	rate                 // req/s
	micros               // µs of CPU per request
	duration             // a latency, Go's duration syntax
)

// figure is one name a bound can take: one more is one line of figures.
// of is the figure's value in a cell, its interval unknown when it has
// none; ok false with why when the cell lacks it.
type figure struct {
	name string
	unit unit
	of   func(s Summary, c Cell) (iv Interval, why string, ok bool)
}

var figures = []figure{
	{"ratio", plain, ratioOf},
	{"req/s", rate, func(_ Summary, c Cell) (Interval, string, bool) {
		return c.ReqPerSec.Interval(c.Reps), "no successful run", c.Reps > 0
	}},
	{"nginx-us", micros, cpuOf(func(p *CPUPerRequest) *Interval { return p.Nginx }, "nginx's")},
	{"backend-us", micros, cpuOf(func(p *CPUPerRequest) *Interval { return p.Server }, "the server's")},
	{"servers-us", micros, cpuOf(func(p *CPUPerRequest) *Interval { return p.Servers }, "the servers'")},
	{"p50", duration, latencyOf(func(l Latency) time.Duration { return l.P50 })},
	{"p99", duration, latencyOf(func(l Latency) time.Duration { return l.P99 })},
	{"added-p99", duration, addedP99},
}

// FigureNames lists the figures a bound can name.
func FigureNames() []string {
	var ns []string
	for _, f := range figures {
		ns = append(ns, f.name)
	}
	return ns
}

func figureNamed(name string) (figure, bool) {
	for _, f := range figures {
		if f.name == name {
			return f, true
		}
	}
	return figure{}, false
}

func ratioOf(_ Summary, c Cell) (Interval, string, bool) {
	if c.RatioToStandalone == nil {
		return Interval{}, "no ratio to standalone (a successful run of both is needed)", false
	}
	return c.RatioToStandalone.Interval, "", true
}

func cpuOf(part func(*CPUPerRequest) *Interval, whose string) func(Summary, Cell) (Interval, string, bool) {
	return func(_ Summary, c Cell) (Interval, string, bool) {
		if c.CPU == nil || part(c.CPU) == nil {
			return Interval{}, "no run measured " + whose + " CPU time", false
		}
		return *part(c.CPU), "", true
	}
}

func latencyOf(pick func(Latency) time.Duration) func(Summary, Cell) (Interval, string, bool) {
	return func(_ Summary, c Cell) (Interval, string, bool) {
		if c.Latency.Runs == 0 {
			return Interval{}, "no run with latency samples", false
		}
		return Interval{Center: float64(pick(c.Latency)), N: c.Latency.Runs}, "", true
	}
}

// addedP99 is what the path adds to standalone's p99 in the same group,
// the difference of the two medians, with no interval.
func addedP99(s Summary, c Cell) (Interval, string, bool) {
	if topology.IsBaseline(c.Topology) {
		return Interval{}, "standalone adds nothing to itself", false
	}
	st, ok := s.Cell(Key{c.Group, topology.BaselineOf(c.Topology)})
	if !ok || st.Latency.Runs == 0 || c.Latency.Runs == 0 {
		return Interval{}, "no latency of both the cell and standalone", false
	}
	return Interval{Center: float64(c.Latency.P99 - st.Latency.P99), N: min(c.Latency.Runs, st.Latency.Runs)}, "", true
}

// BoundError is a bound that does not parse, naming it; errors.Is
// ErrBound.
type BoundError struct{ Text, Msg string }

func (e *BoundError) Error() string        { return fmt.Sprintf("%q: %s", e.Text, e.Msg) }
func (e *BoundError) Is(target error) bool { return target == ErrBound }

// ParseBound reads one bound: TOPOLOGY[@DIM=VALUE,...] FIGURE OP VALUE,
// the @ also allowed as a last word of its own.
func ParseBound(text string) (Bound, error) {
	bad := func(format string, args ...any) (Bound, error) {
		return Bound{}, &BoundError{Text: text, Msg: fmt.Sprintf(format, args...)}
	}
	i := strings.IndexAny(text, "<>")
	if i < 0 {
		return bad("no comparison: want TOPOLOGY FIGURE OP VALUE, OP one of < <= > >=")
	}
	b := Bound{Text: text, Op: Op(text[i : i+1])}
	if strings.HasPrefix(text[i+1:], "=") {
		b.Op += "="
	}
	left, right := strings.Fields(text[:i]), strings.Fields(text[i+len(b.Op):])
	var sel []string
	if n := len(right); n > 0 && strings.HasPrefix(right[n-1], "@") {
		sel, right = append(sel, right[n-1][1:]), right[:n-1]
	}
	if len(left) != 2 {
		return bad("want TOPOLOGY FIGURE before %s, got %d words", b.Op, len(left))
	}
	if len(right) != 1 {
		return bad("want one VALUE after %s, got %d words", b.Op, len(right))
	}
	path, at, hasAt := strings.Cut(left[0], "@")
	if hasAt {
		sel = append(sel, at)
	}
	if _, err := topology.Lookup(path); err != nil {
		return bad("%v", err)
	}
	b.Topology = path
	for _, s := range sel {
		ss, err := parseSelectors(s)
		if err != nil {
			return bad("%v", err)
		}
		b.Select = append(b.Select, ss...)
	}
	f, ok := figureNamed(left[1])
	if !ok {
		return bad("unknown figure %q (known: %s)", left[1], strings.Join(FigureNames(), ", "))
	}
	b.Figure = f.name
	v, err := f.unit.parse(right[0])
	if err != nil {
		return bad("%s: %v", f.name, err)
	}
	b.Value = v
	return b, nil
}

// parseSelectors reads DIM=VALUE[,DIM=VALUE], each DIM a dimension's
// name or label (gomaxprocs or GOMAXPROCS, upstream_keepalive).
func parseSelectors(s string) ([]Selector, error) {
	var out []Selector
	for _, kv := range strings.Split(s, ",") {
		dim, v, ok := strings.Cut(kv, "=")
		if !ok || dim == "" || v == "" {
			return nil, fmt.Errorf("@%s: want DIM=VALUE, as in @gomaxprocs=1", kv)
		}
		known := false
		var names []string
		for _, d := range (results.Cell{}).Dims() {
			known = known || strings.EqualFold(dim, d.Name) || strings.EqualFold(dim, d.Label)
			names = append(names, d.Name)
		}
		if !known {
			return nil, fmt.Errorf("@%s: unknown dimension %q (known: %s)", kv, dim, strings.Join(names, ", "))
		}
		out = append(out, Selector{Dim: dim, Value: v})
	}
	return out, nil
}

// parse reads a bound's value in the unit: a number, µs with or without
// "us" or "µs", a latency as Go writes a duration (2ms, 500us).
func (u unit) parse(s string) (float64, error) {
	if u == duration {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 2ms or 500us", s)
		}
		return float64(d), nil
	}
	num := s
	if u == micros {
		num = strings.TrimSuffix(strings.TrimSuffix(num, "us"), "µs")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}

// format writes a value of the unit as the reports write it.
func (u unit) format(v float64) string {
	switch u {
	case rate:
		return numfmt.Count(v) + " req/s"
	case micros:
		return numfmt.Micros(v) + " µs"
	case duration:
		if v < 0 {
			return "-" + numfmt.Dur(time.Duration(-v))
		}
		return numfmt.Dur(time.Duration(v))
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// State is how a cell stands against a bound.
type State int

// The states of a Verdict.
const (
	// Held: the figure is not past the value.
	Held State = iota
	// Unsure: the point value is past, its interval holds the value;
	// not crossed.
	Unsure
	// Crossed: the whole interval is past, or with no interval the point.
	Crossed
	// Skipped: the sweep has no such cell, or the cell not the figure.
	Skipped
)

// Verdict is one bound in one cell, or a bound no cell could be judged
// by (Cell empty).
type Verdict struct {
	Bound Bound
	// Cell names the cell: "GOMAXPROCS=1 nginx-http".
	Cell  string
	Value Interval
	State State
	// Why says why the bound was skipped.
	Why string
}

// Check judges every bound in every cell it selects, in bound then
// table order; a bound that selects no cell is one Skipped verdict.
func Check(s Summary, bounds []Bound) []Verdict {
	var out []Verdict
	for _, b := range bounds {
		f, _ := figureNamed(b.Figure)
		n := len(out)
		for _, c := range s.Cells {
			if c.Topology != b.Topology || s.CrossCheck(c) || !b.selects(c.Group) {
				continue
			}
			v := Verdict{Bound: b, Cell: c.Name()}
			iv, why, ok := f.of(s, c)
			switch {
			case !ok:
				v.State, v.Why = Skipped, why
			case iv.Known() && b.Op.past(*iv.Lo, b.Value) && b.Op.past(*iv.Hi, b.Value):
				v.State = Crossed
			case b.Op.past(iv.Center, b.Value):
				v.State = Unsure
				if !iv.Known() {
					v.State = Crossed
				}
			}
			v.Value = iv
			out = append(out, v)
		}
		if len(out) == n {
			why := "this sweep has no " + b.Topology + " cell"
			if len(b.Select) > 0 {
				why += " with " + selectorText(b.Select)
			}
			out = append(out, Verdict{Bound: b, State: Skipped, Why: why})
		}
	}
	return out
}

// selects reports whether g has every DIM=VALUE of the bound's @.
func (b Bound) selects(g Group) bool {
	for _, sel := range b.Select {
		found := false
		for _, d := range g.Dims() {
			if strings.EqualFold(sel.Dim, d.Name) || strings.EqualFold(sel.Dim, d.Label) {
				v := d.Value
				if v == "" {
					v = d.Usual
				}
				found = sameValue(v, sel.Value)
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// sameValue compares a dimension's value with a selector's, as text or
// as the same duration or number written another way (50us, 50µs).
func sameValue(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	if x, err := time.ParseDuration(a); err == nil {
		y, err := time.ParseDuration(b)
		return err == nil && x == y
	}
	x, errX := strconv.ParseFloat(a, 64)
	y, errY := strconv.ParseFloat(b, 64)
	return errX == nil && errY == nil && x == y
}

// String is the verdict's one line: the bound, the state, the cell's
// figure with its interval, and how it stands against the value.
func (v Verdict) String() string {
	b := v.Bound
	head := fmt.Sprintf("fail-if %q: ", b.Text)
	if v.Cell == "" {
		return head + "skipped: " + v.Why
	}
	if v.State == Skipped {
		return head + fmt.Sprintf("skipped: %s has no %s: %s", v.Cell, b.Figure, v.Why)
	}
	f, _ := figureNamed(b.Figure)
	value := f.unit.format(b.Value)
	fig := fmt.Sprintf("%s %s %s", v.Cell, b.Figure, f.unit.format(v.Value.Center))
	if v.Value.Known() {
		fig += fmt.Sprintf(" (interval %s to %s)", f.unit.format(*v.Value.Lo), f.unit.format(*v.Value.Hi))
	} else {
		fig += fmt.Sprintf(" (no interval, %s)", numfmt.Plural(v.Value.N, "run"))
	}
	switch v.State {
	case Crossed:
		return head + fmt.Sprintf("crossed: %s %s %s", fig, b.Op, value)
	case Unsure:
		return head + fmt.Sprintf("held: %s, whose interval holds %s", fig, value)
	}
	return head + "held: " + fig
}

func selectorText(ss []Selector) string {
	var parts []string
	for _, s := range ss {
		parts = append(parts, s.Dim+"="+s.Value)
	}
	return strings.Join(parts, ",")
}

// Regression is a ratio to standalone that fell significantly, by more
// than Limit, from one sweep to the next (diff -fail-if-regression).
type Regression struct {
	Row   Row
	Limit float64
}

// Regressions are the ratio rows of c whose change is significant (the
// U test at alpha 0.05, as diff marks it) and whose median fell by more
// than limit (0.05 for 5%).
func (c Comparison) Regressions(limit float64) []Regression {
	var out []Regression
	for _, r := range c.Ratios.Rows {
		if ch := r.Change; ch != nil && ch.Significant() && ch.Delta() < -limit {
			out = append(out, Regression{Row: r, Limit: limit})
		}
	}
	return out
}

// String is the regression's one line.
func (r Regression) String() string {
	ch := r.Row.Change
	return fmt.Sprintf("regressed: %s ratio to standalone %.3f to %.3f, %s, more than -%s%%", r.Row.Key.Path(), ch.Old.Center, ch.New.Center, ch, strconv.FormatFloat(100*r.Limit, 'g', -1, 64))
}

package report

import (
	"fmt"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// handlerView is the part of summary.md that says what nginx costs a
// user's handler in the pair designs (analysis.HandlerCosts): a sentence
// per own-service path, and the checks of the model against the groups
// measured with handler work.
type handlerView struct {
	HandlerSentences []string
	HandlerChecks    [][]string
}

// handlerHead is the checks table's header.
var handlerHead = []string{"topology", "group", "work", "predicted", "from the costs at work", "measured", "interval", "inside"}

func (s summary) handlerView() handlerView {
	var v handlerView
	for _, h := range s.HandlerCosts() {
		v.HandlerSentences = append(v.HandlerSentences, handlerSentence(h))
		for _, c := range h.Checks {
			v.HandlerChecks = append(v.HandlerChecks, handlerCheckRow(h, c))
		}
	}
	return v
}

// handlerSentence states the share of capacity nginx costs a handler at
// each of analysis.HandlerWorks, and the costs it rests on.
func handlerSentence(h analysis.HandlerCost) string {
	var shares []string
	for i, p := range h.Points {
		at := "at " + fmtWork(p.Work)
		switch {
		case p.Work == 0:
			at = "with no handler work"
		case i == 1 || h.Points[i-1].Work == 0:
			at = "at a handler of " + fmtWork(p.Work)
		}
		if i == 0 {
			at = "of the capacity " + at
		}
		shares = append(shares, numfmt.Pct(p.Share)+" "+at)
	}
	costs := fmt.Sprintf("s %s µs, n + b %s µs a request", numfmt.Micros(h.S), numfmt.Micros(h.P))
	if h.N >= 0 && h.P-h.N > 0 {
		costs = fmt.Sprintf("s %s µs, n %s + b %s µs a request", numfmt.Micros(h.S), numfmt.Micros(h.N), numfmt.Micros(h.P-h.N))
	}
	return fmt.Sprintf("**%s** (%s; %s at no work): nginx costs %s.", h.Topology, h.Group, costs, strings.Join(shares, ", "))
}

func handlerCheckRow(h analysis.HandlerCost, c analysis.HandlerCheck) []string {
	interval := "–"
	if c.Measured.Known() {
		interval = numfmt.Figure(*c.Measured.Lo) + "–" + numfmt.Figure(*c.Measured.Hi)
	}
	inside := "no"
	switch {
	case !c.Measured.Known():
		inside = "no interval"
	case c.Inside:
		inside = "yes"
	}
	at := "–"
	if c.AtCosts != nil {
		at = numfmt.Figure(c.AtCosts.Center)
	}
	return []string{h.Topology, h.Group.String(), fmtWork(c.Work), numfmt.Figure(c.Predicted), at, numfmt.Figure(c.Measured.Center), interval, inside}
}

// handlerSection is report.html's section of the same.
func (b *chartBuilder) handlerSection() (htmlSection, bool) {
	sec := htmlSection{ID: "handler", Title: "What nginx costs a handler that does work", Intro: []string{handlerIntro}}
	any := false
	for si, sw := range b.sweeps {
		v := (summary{sw.Summary}).handlerView()
		for _, line := range v.HandlerSentences {
			any = true
			sec.Intro = append(sec.Intro, b.prefix(si)+unmd([]string{line})[0])
		}
		if len(v.HandlerChecks) > 0 {
			tab := htmlTable{Caption: b.prefix(si) + "The model against the groups measured with handler work", Head: handlerHead,
				Num: []bool{false, false, true, true, true, true, true, false}}
			for _, r := range v.HandlerChecks {
				tab.Rows = append(tab.Rows, unmd(r))
			}
			sec.Tables = append(sec.Tables, tab)
		}
	}
	return sec, any
}

// handlerIntro states the model, for both renderings.
const handlerIntro = "A handler that spends w µs of CPU a request adds w to both sides of a pair. With the servers' CPUs saturated, a side serves CPUs ÷ (µs a request), so a path whose nginx spends n and whose backend spends b µs a request reads (s + w) ÷ (n + b + w) of standalone's s + w; in the duet each side has half the CPUs, which cancel in the ratio. nginx's share of the capacity is one less that ratio, predicted here from the group without handler work."

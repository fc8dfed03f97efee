package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// loadsView is the section that sets two load generators' figures side
// by side, cell by cell (analysis.LoadRatio); nil without two of them in
// a rounds sweep.
func (s summary) loadsView() *tableSection {
	if len(s.Loads) == 0 {
		return nil
	}
	base := s.Loads[0].Base
	var others []string
	for _, l := range s.Loads {
		if o := string(l.Key.Load); !slices.Contains(others, o) {
			others = append(others, o)
		}
	}
	v := &tableSection{
		Title: fmt.Sprintf("Load generators side by side (%s over %s)", strings.Join(others, ", "), base),
		Intro: fmt.Sprintf("Each cell's run under %s over its run under %s in the same round, so that a slow minute of the machine hits both alike: the geometric mean of the rounds' ratios with its %s interval (Student's t on their logs, allowing for the correlation of neighbouring rounds; each interval's method is in summary.json, under load_ratios). Near 1 the two generators give the same answer: the ratios of one table are then the other's. Servers' CPU is the servers' CPU µs per request, load CPU the load generator's own (its whole process, user and system), load user CPU its user time alone.", strings.Join(others, ", "), base, levelText(s.RatioLevel())),
		Head:  []string{"group", "topology", "rounds", "req/s", "servers' CPU", "load CPU", "load user CPU"},
	}
	for _, l := range s.Loads {
		g := l.Key.Group
		g.Load = "" // the title names the loads
		v.Rows = append(v.Rows, []string{g.String(), l.Key.Topology, fmt.Sprint(l.Rate.N),
			loadRatioText(l.Rate), loadRatioText(l.Servers), loadRatioText(l.Load), loadRatioText(l.LoadUser)})
	}
	return v
}

// loadRatioText is a ratio with its interval to three places, as the
// question is whether two generators agree within a few percent: "1.003
// [0.959, 1.048]"; "–" when not measured, the center alone without an
// interval.
func loadRatioText(r *analysis.Ratio) string {
	switch {
	case r == nil:
		return "–"
	case !r.Known():
		return numfmt.Figure(r.Center)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f]", r.Center, *r.Lo, *r.Hi)
}

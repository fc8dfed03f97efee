package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// WriteWindowSpreads prints, for each path, how much its per-window rates
// strayed at each window length of the paired sweeps given, and the pairs
// and measured time its ratio needs for precision there; then the window
// length that needs the least time for the slowest path to reach it.
func WriteWindowSpreads(w io.Writer, spreads []analysis.PathSpread, precision float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "path\twindow\tpairs\tstandalone CV\tpath CV\tratio spread\tlag-1\tpairs for ±%s\tmeasured time for ±%s\t±at most pairs\tsweep\t\n", numfmt.Pct(precision), numfmt.Pct(precision))
	worst := map[time.Duration]time.Duration{} // a window's most time needed by any path
	never := map[time.Duration]bool{}
	for _, s := range spreads {
		need, t := "never", "–"
		if s.PairsNeeded > 0 {
			need, t = fmt.Sprint(s.PairsNeeded), roundSec(s.Needed).String()
			worst[s.Window] = max(worst[s.Window], s.Needed)
		} else {
			never[s.Window] = true
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Key.Group, s.Key.Topology, s.Window, s.Pairs,
			pct(s.StandaloneCV), pct(s.PathCV), pct(s.RatioSD), signed(s.Lag1), need, t, pct(s.AtMax), s.Dir)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var best time.Duration
	for win, need := range worst {
		if !never[win] && (best == 0 || need < worst[best] || (need == worst[best] && win < best)) {
			best = win
		}
	}
	if best == 0 {
		_, err := fmt.Fprintf(w, "\nno window length brought every path's ratio within ±%s\n", numfmt.Pct(precision))
		return err
	}
	_, err := fmt.Fprintf(w, "\nfastest window for every path within ±%s: %s (the slowest path needs %s measured)\n", numfmt.Pct(precision), best, roundSec(worst[best]))
	return err
}

func pct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.1f%%", 100*f)
	if whole, ok := strings.CutSuffix(s, ".0%"); ok {
		return whole + "%"
	}
	return s
}

func signed(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%+.2f", f)
}

func roundSec(d time.Duration) time.Duration { return d.Round(time.Second) }

package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// WriteWindowSpreads prints, for each path, how much its per-window rates
// strayed at each window length of the paired sweeps given, and the pairs
// and measured time its ratio needs for precision there; then the window
// length that needs the least time for the slowest path to reach it, and
// the -window that gives each topology the length its slowest path
// needs least time at.
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
	if _, err := fmt.Fprintf(w, "\nfastest window for every path within ±%s: %s (the slowest path needs %s measured)\n", numfmt.Pct(precision), best, roundSec(worst[best])); err != nil {
		return err
	}
	if flag := ownWindows(spreads); strings.Contains(flag, "=") {
		_, err := fmt.Fprintf(w, "fastest window for each topology: -window %s\n", flag)
		return err
	}
	return nil
}

// ownWindows is the -window that gives each topology the window length
// at which its slowest path (of its GOMAXPROCS) needs the least measured
// time, among the lengths that bring all of them within the precision:
// the length most topologies take, and TOPOLOGY=D for the others. Empty
// when no topology has such a length.
func ownWindows(spreads []analysis.PathSpread) string {
	type tw struct {
		top string
		win time.Duration
	}
	worst := map[tw]time.Duration{}
	never := map[tw]bool{}
	var tops []string
	for _, s := range spreads {
		k := tw{s.Key.Topology, s.Window}
		if !slices.Contains(tops, k.top) {
			tops = append(tops, k.top)
		}
		if s.PairsNeeded > 0 {
			worst[k] = max(worst[k], s.Needed)
		} else {
			never[k] = true
		}
	}
	best := map[string]time.Duration{}
	for k, need := range worst {
		if never[k] {
			continue
		}
		b, ok := best[k.top]
		if cur := (tw{k.top, b}); !ok || need < worst[cur] || (need == worst[cur] && k.win < b) {
			best[k.top] = k.win
		}
	}
	count := map[time.Duration]int{}
	for _, b := range best {
		count[b]++
	}
	var all time.Duration
	for win, n := range count {
		if all == 0 || n > count[all] || (n == count[all] && win < all) {
			all = win
		}
	}
	if all == 0 {
		return ""
	}
	flag := all.String()
	for _, top := range tops {
		if b, ok := best[top]; ok && b != all {
			flag += "," + top + "=" + b.String()
		}
	}
	return flag
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

package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// RatioChange is one cell's ratio to standalone in a sweep against the
// baseline's, as topobench diff computes it: the ratios taken round by
// round (each run over the standalone run of its own round), their
// medians, and benchstat's U test on the two sets of ratios.
type RatioChange struct {
	Key Key `json:"key"`
	// Base and New are the medians of the per-round ratios; BaseN and
	// NewN how many rounds had both the cell and standalone.
	Base  float64 `json:"base"`
	New   float64 `json:"new"`
	BaseN int     `json:"base_n"`
	NewN  int     `json:"new_n"`
	// Change is New/Base - 1.
	Change float64 `json:"change"`
	// P is the U test's two-sided p-value; Significant says P <= alpha.
	P           float64 `json:"p"`
	Significant bool    `json:"significant"`
}

// MachineShift is the change of the load generator's CPU per request
// from the baseline past which the page says the machine differs: the
// same program doing the same work (topobench diff's threshold).
const MachineShift = 0.05

// CompareRatios computes other's RatioChanges against base, cell by cell
// in base's order then other's, for the cells both measured beside
// standalone.
func CompareRatios(base, other Sweep) []RatioChange {
	var keys []Key
	for _, sw := range []Sweep{base, other} {
		for _, c := range sw.Summary.Cells {
			if c.Topology != Standalone && !slices.Contains(keys, c.Key) {
				keys = append(keys, c.Key)
			}
		}
	}
	var out []RatioChange
	for _, k := range keys {
		o, n := roundRatios(base, k), roundRatios(other, k)
		if len(o) == 0 || len(n) == 0 {
			continue
		}
		c := stats.Compare(o, n)
		out = append(out, RatioChange{Key: k, Base: c.Old.Center, New: c.New.Center, BaseN: len(o), NewN: len(n),
			Change: c.Delta(), P: c.P, Significant: c.Significant()})
	}
	return out
}

// roundRatios are a cell's req/s over standalone's, round by round, for
// the rounds where both succeeded, in round order.
func roundRatios(sw Sweep, k Key) []float64 {
	p := sw.Summary.Env.Plan
	rate := func(k Key) map[int]float64 {
		m := map[int]float64{}
		for _, r := range runsOf(p, sw.Runs, k) {
			if !r.Failed() {
				f, _ := r.Figures()
				m[r.Rep] = f.ReqPerSec
			}
		}
		return m
	}
	cell, st := rate(k), rate(Key{k.Group, Standalone})
	var reps []int
	for rep := range cell {
		if st[rep] > 0 {
			reps = append(reps, rep)
		}
	}
	slices.Sort(reps)
	var out []float64
	for _, rep := range reps {
		out = append(out, cell[rep]/st[rep])
	}
	return out
}

// changeTable renders other's Changes against the baseline.
func changeTable(base, other Sweep, bl, ol string) htmlTable {
	t := htmlTable{Caption: fmt.Sprintf("Ratios to standalone, %s against %s (round by round, as topobench diff)", ol, bl),
		Head: []string{"cell", bl + " ratio", "n", ol + " ratio", "n", "change", "significance"},
		Num:  []bool{false, true, true, true, true, true, false}}
	for _, c := range other.Changes {
		change, sig := fmt.Sprintf("%+.1f%%", 100*c.Change), fmt.Sprintf("p=%.3f", c.P)
		if c.Significant {
			sig += ", significant at 95%"
		} else {
			change = "~ (" + change + ")"
			sig += ", not significant"
		}
		t.Rows = append(t.Rows, []string{c.Key.String(), fmt.Sprintf("%.3f", c.Base), fmt.Sprint(c.BaseN),
			fmt.Sprintf("%.3f", c.New), fmt.Sprint(c.NewN), change, sig})
		t.Marked = append(t.Marked, c.Significant)
	}
	return t
}

// machineStatements say in plain words whether the two sweeps ran on
// the same machine at the same speed: what env.json says of the
// hardware and software, and the load generator's CPU per request
// (geomean over the cells both measured, and per group), which does not
// depend on the topology.
func machineStatements(base, other Sweep, bl, ol string) []string {
	be, oe := base.Summary.Env, other.Summary.Env
	var out, diffs []string
	for _, d := range []struct{ what, a, b string }{
		{"CPU", be.CPUModel, oe.CPUModel},
		{"CPUs", fmt.Sprint(be.CPUs), fmt.Sprint(oe.CPUs)},
		{"kernel", be.Kernel, oe.Kernel},
		{"Go", be.GoVersion, oe.GoVersion},
		{"nginx", be.NginxVersion, oe.NginxVersion},
		{"wrk", be.WrkVersion, oe.WrkVersion},
		{"isolation", base.Summary.Isolation, other.Summary.Isolation},
	} {
		if d.a != d.b {
			diffs = append(diffs, fmt.Sprintf("%s %q in %s, %q in %s", d.what, d.a, bl, d.b, ol))
		}
	}
	if len(diffs) > 0 {
		out = append(out, fmt.Sprintf("%s and %s ran on different setups: %s. Compare their ratios, not their rates.", bl, ol, strings.Join(diffs, "; ")))
	}
	type pair struct{ o, n []float64 }
	all := pair{}
	var groups []Group
	byGroup := map[Group]*pair{}
	for _, c := range base.Summary.Cells {
		oc, ok := other.Summary.Cell(c.Key)
		if c.CPU == nil || !ok || oc.CPU == nil || c.CPU.Load.Center <= 0 || oc.CPU.Load.Center <= 0 {
			continue
		}
		all.o, all.n = append(all.o, c.CPU.Load.Center), append(all.n, oc.CPU.Load.Center)
		if byGroup[c.Group] == nil {
			byGroup[c.Group] = &pair{}
			groups = append(groups, c.Group)
		}
		g := byGroup[c.Group]
		g.o, g.n = append(g.o, c.CPU.Load.Center), append(g.n, oc.CPU.Load.Center)
	}
	if len(all.o) == 0 {
		return append(out, fmt.Sprintf("The load generator's CPU per request was not measured in both %s and %s, so whether the machine ran at the same speed is unknown.", bl, ol))
	}
	shift := geomeanOf(all.n)/geomeanOf(all.o) - 1
	if math.Abs(shift) >= MachineShift {
		return append(out, fmt.Sprintf("The machines differ: the load generator spent %+.0f%% CPU per request in %s over the same %s as in %s (geomean), and it does the same work in both, so the machine itself ran at another speed (a busy host or a shared core, which steal time does not always show). The ratios to standalone are the comparable figures, not the rates.",
			100*shift, ol, plural(len(all.o), "cell"), bl))
	}
	var moved []string
	if len(groups) > 1 {
		for _, g := range groups {
			p := byGroup[g]
			if gs := geomeanOf(p.n)/geomeanOf(p.o) - 1; math.Abs(gs) >= MachineShift {
				moved = append(moved, fmt.Sprintf("%s %+.0f%%", groupLabel(g), 100*gs))
			}
		}
	}
	if len(moved) > 0 {
		return append(out, fmt.Sprintf("The machine changed speed for part of the sweeps: overall the load generator's CPU per request moved %+.1f%% from %s to %s, but %s. Compare the ratios of those groups, not their rates.",
			100*shift, bl, ol, strings.Join(moved, ", ")))
	}
	return append(out, fmt.Sprintf("The load generator's CPU per request agrees within ±%.0f%% (%+.1f%% geomean over %s): %s and %s ran at the same speed.",
		100*MachineShift, 100*shift, plural(len(all.o), "cell"), bl, ol))
}

func geomeanOf(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// CompareSweeps fills each non-baseline sweep's Changes with
// CompareRatios against the first: a convenience for callers that have
// no analysis of their own.
func CompareSweeps(sweeps []Sweep) []Sweep {
	out := slices.Clone(sweeps)
	for i := 1; i < len(out); i++ {
		out[i].Changes = CompareRatios(out[0], out[i])
	}
	return out
}

// LoadSweep reads a results directory into a Sweep, summarized.
func LoadSweep(dir string) (Sweep, error) {
	env, runs, err := results.Load(dir)
	if err != nil {
		return Sweep{}, err
	}
	return Sweep{Name: sweepName(dir), Dir: dir, Summary: Summarize(env, runs), Runs: runs}, nil
}

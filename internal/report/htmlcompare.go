package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
)

// RatioChange is one cell's ratio to standalone in a sweep against the
// baseline's, as topobench diff computes it: the ratios taken round by
// round (each run over the standalone run of its own round), their
// medians, and benchstat's U test on the two sets of ratios.
type RatioChange struct {
	Key analysis.Key `json:"key"`
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

// ratioChanges are the rows of a comparison's ratio table that both
// sweeps measured, as topobench diff computes and prints them.
func ratioChanges(c analysis.Comparison) []RatioChange {
	var out []RatioChange
	for _, r := range c.Ratios.Rows {
		if r.Change == nil {
			continue
		}
		out = append(out, RatioChange{Key: r.Key, Base: r.Old.Center, New: r.New.Center, BaseN: r.Old.N, NewN: r.New.N,
			Change: r.Change.Delta(), P: r.Change.P, Significant: r.Change.Significant()})
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
	c := other.compared
	if c == nil || len(c.LoadCPU.Rows) == 0 {
		return append(out, fmt.Sprintf("The load generator's CPU per request was not measured in both %s and %s, so whether the machine ran at the same speed is unknown.", bl, ol))
	}
	cells := numfmt.Plural(len(c.LoadCPU.Rows), "cell")
	shift := c.LoadCPU.GeomeanNew/c.LoadCPU.GeomeanOld - 1
	var moved []string
	for _, sh := range c.Shifts {
		if sh.Group == nil {
			return append(out, fmt.Sprintf("The machines differ: the load generator spent %+.0f%% CPU per request in %s over the same %s as in %s (geomean), and it does the same work in both, so the machine itself ran at another speed (a busy host or a shared core, which steal time does not always show). The ratios to standalone are the comparable figures, not the rates.",
				100*sh.Change, ol, cells, bl))
		}
		moved = append(moved, fmt.Sprintf("%s %+.0f%%", groupLabel(*sh.Group), 100*sh.Change))
	}
	if len(moved) > 0 {
		return append(out, fmt.Sprintf("The machine changed speed for part of the sweeps: overall the load generator's CPU per request moved %+.1f%% from %s to %s, but %s. Compare the ratios of those groups, not their rates.",
			100*shift, bl, ol, strings.Join(moved, ", ")))
	}
	return append(out, fmt.Sprintf("The load generator's CPU per request agrees within ±%.0f%% (%+.1f%% geomean over %s): %s and %s ran at the same speed.",
		100*analysis.MachineShift, 100*shift, cells, bl, ol))
}

// CompareSweeps compares each sweep after the first with the first, as
// topobench diff does (analysis.Compare), and keeps the comparison with
// it for the page: its ratio changes and what the load generator's CPU
// says of the machines.
func CompareSweeps(sweeps []Sweep) ([]Sweep, error) {
	out := slices.Clone(sweeps)
	samples := func(sw Sweep) (*analysis.Samples, error) {
		return analysis.NewSamples(sw.Name, sw.Summary.Env, sw.Runs)
	}
	if len(out) == 0 {
		return out, nil
	}
	base, err := samples(out[0])
	if err != nil {
		return nil, err
	}
	for i := 1; i < len(out); i++ {
		other, err := samples(out[i])
		if err != nil {
			return nil, err
		}
		c := analysis.Compare(base, other)
		out[i].compared = &c
		out[i].Changes = ratioChanges(c)
	}
	return out, nil
}

// LoadSweep reads a results directory into a Sweep, summarized.
func LoadSweep(dir string) (Sweep, error) {
	env, runs, err := results.Load(dir)
	if err != nil {
		return Sweep{}, err
	}
	return Sweep{Name: sweepName(dir), Dir: dir, Summary: analysis.Summarize(env, runs), Runs: runs}, nil
}

// WriteHTMLFile writes one page of the results directories to path, whole
// or not at all: one directory's report, or several compared with the
// first (CompareSweeps).
func WriteHTMLFile(path string, dirs ...string) error {
	var sweeps []Sweep
	for _, dir := range dirs {
		sw, err := LoadSweep(dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		sweeps = append(sweeps, sw)
	}
	var b bytes.Buffer
	if len(sweeps) == 1 {
		sw := sweeps[0]
		if err := WriteHTML(&b, sw.Dir, sw.Summary, sw.Runs); err != nil {
			return err
		}
	} else {
		compared, err := CompareSweeps(sweeps)
		if err != nil {
			return err
		}
		if err := WriteCompareHTML(&b, compared); err != nil {
			return err
		}
	}
	return writeFile(path, b.Bytes())
}

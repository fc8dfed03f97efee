package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// Comparing two sweeps the way benchstat compares two benchmark files: for
// every cell measured in both, the median req/s of each with its 95%
// interval, the change of the median, and whether the change is
// significant (the Mann-Whitney U test at alpha 0.05). The ratios to
// standalone are compared round by round (repetition r of a cell over
// repetition r of standalone, which ran in the same round), so a change
// of a ratio is tested on the ratios themselves. The figures are
// benchstat's: the same samples written as benchmark files give the same
// medians, intervals, deltas and p-values.

// MachineShift is the change of the load generator's CPU per request
// (geomean over cells, or over a group's cells) past which a comparison
// says the machine itself changed speed.
const MachineShift = 0.05

// Samples is a sweep reduced to what a comparison tests, per cell and
// repetition.
type Samples struct {
	// Name is what the sweep is called in a comparison (its directory).
	Name string
	Env  results.Env
	// Keys are the cells with a successful run, in results.Load's order.
	Keys []Key
	reqs map[Key]map[int]float64
	// loadCPU is the load generator's CPU µs per request answered, where
	// it was measured: the same program doing the same work in both
	// sweeps, so a change of it is a change of the machine.
	loadCPU map[Key]map[int]float64
	// pairs are a paired sweep's ratios pair by pair (PairRatios), in
	// time order; nil for a sweep of rounds.
	pairs map[Key][]float64
	// Failed counts the runs left out.
	Failed int
}

// NewSamples reduces the records of a sweep; it fails when none
// succeeded.
func NewSamples(name string, env results.Env, runs []results.Run) (*Samples, error) {
	s := &Samples{Name: name, Env: env, reqs: map[Key]map[int]float64{}, loadCPU: map[Key]map[int]float64{}}
	for _, r := range runs {
		if r.Failed() {
			s.Failed++
			continue
		}
		k := KeyOf(env.Plan, r)
		if s.reqs[k] == nil {
			s.reqs[k] = map[int]float64{}
			s.Keys = append(s.Keys, k)
		}
		s.reqs[k][r.Rep] = r.Figures.ReqPerSec
		if l, _, _, ok := cpuPerRequest(r); ok && r.CPU.Load.Total() > 0 {
			if s.loadCPU[k] == nil {
				s.loadCPU[k] = map[int]float64{}
			}
			s.loadCPU[k][r.Rep] = l
		}
	}
	if len(s.Keys) == 0 {
		return nil, fmt.Errorf("%s holds no successful runs", name)
	}
	if env.Plan.Paired != nil {
		s.pairs = map[Key][]float64{}
		for k, ps := range PairRatios(env.Plan, runs) {
			s.pairs[k] = ratios(ps)
		}
	}
	return s, nil
}

// AcrossLoads is s with its cells named whatever their load generator,
// so that a sweep can be compared with one of another generator (make
// compare's engine against make compare-2013's wrk): only the cells of
// its first load are kept (a paired sweep's cross-check is left out), and
// the load generator's CPU per request, which differs between two
// programs, is not compared.
func (s *Samples) AcrossLoads() *Samples {
	first := s.Env.Plan.LoadList()[0]
	out := &Samples{Name: s.Name, Env: s.Env, reqs: map[Key]map[int]float64{}, loadCPU: map[Key]map[int]float64{}, Failed: s.Failed}
	rekey := func(k Key) Key {
		k.Load = ""
		return k
	}
	for _, k := range s.Keys {
		if k.Load != first {
			continue
		}
		nk := rekey(k)
		out.Keys = append(out.Keys, nk)
		out.reqs[nk] = s.reqs[k]
	}
	if s.pairs != nil {
		out.pairs = map[Key][]float64{}
		for k, ps := range s.pairs {
			if k.Load == first {
				out.pairs[rekey(k)] = ps
			}
		}
	}
	return out
}

// rates are a cell's req/s in repetition order.
func (s *Samples) rates(k Key) []float64 { return byRep(s.reqs[k]) }

// ratios are the cell's req/s over standalone's, repetition by
// repetition, for the repetitions where both succeeded; pair by pair in a
// paired sweep.
func (s *Samples) ratios(k Key) []float64 {
	if ps, ok := s.pairs[k]; ok {
		// A paired sweep's: each window over standalone's beside it.
		return ps
	}
	base := s.reqs[Key{Group: k.Group, Topology: topology.BaselineOf(k.Topology)}]
	out := map[int]float64{}
	for rep, v := range s.reqs[k] {
		if b, ok := base[rep]; ok && b > 0 {
			out[rep] = v / b
		}
	}
	return byRep(out)
}

func byRep(m map[int]float64) []float64 {
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

// Row is one cell in a comparison: each side's median with its interval
// (nil where that sweep has no sample) and, when both have one, the test
// of the change.
type Row struct {
	Key      Key
	Old, New *stats.Summary
	Change   *stats.Comparison
}

// Table is one figure compared cell by cell, with the geometric mean of
// the medians over the cells both sweeps have (zero when none).
type Table struct {
	Rows                   []Row
	GeomeanOld, GeomeanNew float64
}

// Shift says the load generator's CPU per request moved by Change (0.08
// for +8%) over every cell, or over one group's cells (Group set).
type Shift struct {
	Group  *Group
	Change float64
}

// Comparison is two sweeps side by side.
type Comparison struct {
	Old, New *Samples
	// ReqPerSec compares the cells' rates; Ratios their ratios to
	// standalone (cells without standalone left out); LoadCPU the load
	// generator's CPU µs per request where both measured it.
	ReqPerSec, Ratios, LoadCPU Table
	// Shifts say where the machine itself ran at another speed.
	Shifts []Shift
}

// Compare compares new with old.
func Compare(old, new *Samples) Comparison {
	c := Comparison{Old: old, New: new}
	c.ReqPerSec = table(rowKeys(old, new, func(Key) bool { return true }), old.rates, new.rates)
	c.Ratios = table(rowKeys(old, new, func(k Key) bool {
		return !topology.IsBaseline(k.Topology) && (len(old.ratios(k)) > 0 || len(new.ratios(k)) > 0)
	}), old.ratios, new.ratios)
	c.Ratios.GeomeanOld, c.Ratios.GeomeanNew = 0, 0 // ratios are not averaged
	cpu := rowKeys(old, new, func(k Key) bool { return len(old.loadCPU[k]) > 0 && len(new.loadCPU[k]) > 0 })
	c.LoadCPU = table(cpu, func(k Key) []float64 { return byRep(old.loadCPU[k]) }, func(k Key) []float64 { return byRep(new.loadCPU[k]) })
	c.Shifts = shifts(c.LoadCPU)
	return c
}

func table(keys []Key, oldOf, newOf func(Key) []float64) Table {
	var t Table
	var geoOld, geoNew []float64
	for _, k := range keys {
		row := Row{Key: k}
		o, n := oldOf(k), newOf(k)
		if len(o) > 0 {
			row.Old = new(stats.Summarize(o))
		}
		if len(n) > 0 {
			row.New = new(stats.Summarize(n))
		}
		if row.Old != nil && row.New != nil {
			row.Change = new(stats.Compare(o, n))
			// A geomean needs positive figures (a cell that served
			// nothing has none).
			if row.Old.Center > 0 && row.New.Center > 0 {
				geoOld, geoNew = append(geoOld, row.Old.Center), append(geoNew, row.New.Center)
			}
		}
		t.Rows = append(t.Rows, row)
	}
	if len(geoOld) > 0 {
		t.GeomeanOld, t.GeomeanNew = geomean(geoOld), geomean(geoNew)
	}
	return t
}

// shifts finds where the load generator's CPU per request moved: over
// every cell, else over each group's (the cells that differ only in
// topology, run as one block of minutes): a host that slowed for part of
// a sweep shows there, not in the whole.
func shifts(cpu Table) []Shift {
	if len(cpu.Rows) == 0 {
		return nil
	}
	if g := cpu.GeomeanNew/cpu.GeomeanOld - 1; math.Abs(g) >= MachineShift {
		return []Shift{{Change: g}}
	}
	var groups []Group
	o, n := map[Group][]float64{}, map[Group][]float64{}
	for _, r := range cpu.Rows {
		if !slices.Contains(groups, r.Key.Group) {
			groups = append(groups, r.Key.Group)
		}
		o[r.Key.Group], n[r.Key.Group] = append(o[r.Key.Group], r.Old.Center), append(n[r.Key.Group], r.New.Center)
	}
	if len(groups) < 2 {
		return nil
	}
	var out []Shift
	for _, g := range groups {
		if c := geomean(n[g])/geomean(o[g]) - 1; math.Abs(c) >= MachineShift {
			out = append(out, Shift{Group: &g, Change: c})
		}
	}
	return out
}

// rowKeys are the cells of both sweeps that keep wants: old's order, then
// cells only new has, grouped by target and GOMAXPROCS as results.Load
// orders them, the plan's order kept within a group.
func rowKeys(old, new *Samples, keep func(Key) bool) []Key {
	var out []Key
	seen := map[Key]bool{}
	for _, s := range []*Samples{old, new} {
		for _, k := range s.Keys {
			if !seen[k] && keep(k) {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.GOMAXPROCS < b.GOMAXPROCS
	})
	return out
}

func geomean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

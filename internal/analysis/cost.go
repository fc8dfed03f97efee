package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// What a path costs a service that does real work. A sweep over the
// handler's work per request (-work, cmd/hello's ?work=) measures each
// topology's ratio to standalone Go at each handler cost; the CPU figures
// say why: with the servers' CPUs saturated, req/s ≈ CPUs ÷ (nginx µs +
// server µs per request), so standalone serves at CPUs ÷ (s + w) and a
// path through nginx at CPUs ÷ (n + v + w), where s, n and v are the
// costs measured with no work (standalone's server, the path's nginx and
// server) and w the handler's work. The model ratio (s + w) ÷ (n + v + w)
// reaches 1 - OverheadBound at w = ((1 - b)(n + v) - s) ÷ b; the
// measured points show where the model and the machine part.
//
// The same model at any one handler cost gives every cell a second
// estimate of its ratio to standalone, from CPU time instead of the rate
// (Cell.CostRatio): standalone's servers' µs per request over the cell's.
// Both sides' cost is taken run by run (servingCost), so the ratio has an
// interval of its own.

// OverheadBound is the share of throughput below which a path's cost is
// said not to matter: "costs ≤ 10% of throughput".
const OverheadBound = 0.10

// Cost is one topology's overhead at one handler cost.
type Cost struct {
	Work time.Duration `json:"work_ns"`
	// Ratio is the measured req/s over standalone's at the same work; nil
	// when either was not measured.
	Ratio *Ratio `json:"ratio,omitempty"`
	// Model is the ratio the no-work CPU figures predict at this work;
	// NaN when they were not measured.
	Model float64 `json:"model"`
	// AddedUS is the CPU per request the path adds over standalone's
	// server at the same work (nginx's, and the server's difference), in
	// µs, from the medians of servingCost; NaN when not measured.
	AddedUS, NginxUS, ServerUS float64
	// P50Added and P99Added are the latency the path adds over
	// standalone at the same open-loop rate (medians of the runs' p50 and
	// p99); nil when no open-loop cell of both was measured.
	P50Added, P99Added *time.Duration
	// Rate is that open-loop rate.
	Rate float64 `json:"rate,omitempty"`
}

// Overhead is one topology's costs over the handler costs measured, in a
// group of cells that differ only in topology and work (and, for the
// latency, the open-loop rate).
type Overhead struct {
	// Group is the closed-loop group at no work.
	Group    Group  `json:"group"`
	Topology string `json:"topology"`
	Costs    []Cost `json:"costs"`
	// MeasuredAt is the smallest handler cost measured whose ratio is at
	// least 1 - OverheadBound (ok false when none is); ModelAt is where
	// the model reaches it (0 when the path costs nothing over
	// standalone even with no work, NaN-free: ok false when unmodelled).
	MeasuredAt, ModelAt         time.Duration
	MeasuredFound, ModelDefined bool
	// s and p are the model's no-work costs: standalone's server's and
	// the path's (nginx + server), medians of servingCost over the runs.
	s, p float64
}

// ModelRatio is the model's ratio at handler cost w; NaN when unmodelled.
func (o Overhead) ModelRatio(w time.Duration) float64 {
	if !o.ModelDefined {
		return math.NaN()
	}
	us := float64(w) / float64(time.Microsecond)
	return (o.s + us) / (o.p + us)
}

// Overheads lists every topology's overhead in the groups whose cells
// vary the handler's work, in table order; nil when no sweep varied it.
func (s Summary) Overheads() []Overhead {
	// A closed-loop group with its work cleared names the family.
	family := func(g Group) Group {
		g.Schedule.Work = 0
		return g
	}
	works := map[Group][]time.Duration{}
	var families []Group
	for _, c := range s.Cells {
		if c.Schedule.OpenLoop() || c.Schedule.Probe {
			continue
		}
		f := family(c.Group)
		if !slices.Contains(families, f) {
			families = append(families, f)
		}
		if !slices.Contains(works[f], c.Schedule.Work) {
			works[f] = append(works[f], c.Schedule.Work)
		}
	}
	var out []Overhead
	for _, f := range families {
		ws := works[f]
		if len(ws) < 2 && (len(ws) == 0 || ws[0] == 0) {
			continue // no handler work in this family
		}
		slices.Sort(ws)
		for _, top := range s.Topologies() {
			if topology.IsBaseline(top) {
				continue
			}
			if o, ok := s.overhead(f, top, ws); ok {
				out = append(out, o)
			}
		}
	}
	return out
}

func (s Summary) overhead(f Group, top string, works []time.Duration) (Overhead, bool) {
	o := Overhead{Group: f, Topology: top}
	at := func(w time.Duration, topology string) (Cell, bool) {
		g := f
		g.Schedule.Work = w
		c, ok := s.Cell(Key{Group: g, Topology: topology})
		return c, ok && c.Reps > 0 && !c.Ceiling
	}
	if c, ok := at(0, top); ok && c.CPU != nil {
		if st, ok := at(0, topology.BaselineOf(top)); ok && st.CPU != nil {
			o.s, o.p = st.CPU.Servers.Median(), c.CPU.Servers.Median()
			o.ModelDefined = !math.IsNaN(o.s + o.p)
		}
	}
	if o.ModelDefined {
		bound := 1 - OverheadBound
		need := (bound*o.p - o.s) / OverheadBound
		o.ModelAt = time.Duration(math.Max(0, need) * float64(time.Microsecond))
	}
	found := false
	for _, w := range works {
		c, ok := at(w, top)
		if !ok {
			continue
		}
		found = true
		cost := Cost{Work: w, Ratio: c.RatioToStandalone, Model: o.ModelRatio(w), AddedUS: math.NaN(), NginxUS: math.NaN(), ServerUS: math.NaN()}
		if st, ok := at(w, topology.BaselineOf(top)); ok && c.CPU != nil && st.CPU != nil {
			cost.NginxUS, cost.ServerUS = c.CPU.Nginx.Median(), c.CPU.Server.Median()
			cost.AddedUS = c.CPU.Servers.Median() - st.CPU.Servers.Median()
		}
		cost.Rate, cost.P50Added, cost.P99Added = s.latencyAdded(f, top, w)
		if !o.MeasuredFound && cost.Ratio != nil && cost.Ratio.Center >= 1-OverheadBound {
			o.MeasuredAt, o.MeasuredFound = w, true
		}
		o.Costs = append(o.Costs, cost)
	}
	return o, found
}

// latencyAdded is the p50 and p99 a topology adds over standalone at the
// same open-loop rate and work, on the same target and GOMAXPROCS (the
// open-loop cells have a generator and connections of their own): at the
// lowest rate (or fraction of capacity) both were measured at.
func (s Summary) latencyAdded(f Group, top string, w time.Duration) (rate float64, p50, p99 *time.Duration) {
	var open []LatencyCell
	for _, c := range s.Engine {
		if c.Schedule.OpenLoop() && c.Schedule.Work == w && c.Target == f.Target && c.GOMAXPROCS == f.GOMAXPROCS && c.Runs > 0 {
			open = append(open, c)
		}
	}
	slices.SortStableFunc(open, func(a, b LatencyCell) int {
		return cmp.Or(cmp.Compare(a.Schedule.Rate, b.Schedule.Rate), cmp.Compare(a.Schedule.Fraction, b.Schedule.Fraction))
	})
	for _, c := range open {
		if c.Topology != top {
			continue
		}
		if st, ok := s.latencyCell(Key{Group: c.Group, Topology: topology.BaselineOf(c.Topology)}); ok && st.Runs > 0 {
			d50, d99 := c.P50-st.P50, c.P99-st.P99
			return c.TargetRate, &d50, &d99
		}
	}
	return 0, nil, nil
}

// latencyCell finds a cell of the built-in engine.
func (s Summary) latencyCell(k Key) (LatencyCell, bool) {
	for _, c := range s.Engine {
		if c.Key == k {
			return c, true
		}
	}
	return LatencyCell{}, false
}

// servingParts says which of the servers' process groups a request on
// topology top passes through: nginx when the path goes through it, the
// server unless nginx answers by itself (the ceilings). For a topology
// this build does not know, a group counts when any of its runs measured
// it.
func servingParts(top string, runs []results.Run) (nginx, server bool) {
	if t, err := topology.Lookup(top); err == nil {
		return t.ViaNginx(), !t.Reference
	}
	for _, r := range runs {
		if r.CPU != nil {
			nginx = nginx || r.CPU.Nginx != nil
			server = server || r.CPU.Server != nil
		}
	}
	return nginx, server
}

// servingCost is one run's CPU per request on the servers' side, in µs:
// nginx's and the server's summed over the parts the topology has (the
// n + v, or s, of the model above). Where the servers' control group
// counted them (results.CPU.Servers), its time is the cost: over the
// measured window exactly, per answer in it, or over the generator's run,
// per answer the servers gave in it; else /proc's per process. ok is
// false when one of those parts was not measured, the run answered
// nothing, or the sum is not positive.
func servingCost(r results.Run, nginx, server bool) (us float64, ok bool) {
	if !nginx && !server {
		return 0, false
	}
	if r.CPU != nil && r.CPU.Servers != nil && r.Figures != nil {
		n := r.Figures.Requests
		if r.CPU.Servers.Span != results.SpanWindow {
			n = r.ServedRequests()
		}
		us = r.CPU.Servers.PerRequest(n)
		return us, us > 0
	}
	_, n, v, measured := cpuPerRequest(r)
	if !measured {
		return 0, false
	}
	if nginx {
		us += n
	}
	if server {
		us += v
	}
	return us, !math.IsNaN(us) && us > 0
}

// costDisagrees says why c's ratio to standalone and the ratio its CPU
// cost predicts disagree, when both intervals are known and do not
// overlap: then the servers' CPU did not set the pace on one side. A
// rate below the prediction means this cell's servers were not CPU-bound
// (something else limited it); above it, standalone's were. Ceilings and
// cells most of whose runs were load-bound are left out: their limit is
// the load generator, which their own warnings already say.
func costDisagrees(c Cell) (msg, note string, ok bool) {
	r, k := c.RatioToStandalone, c.CostRatio
	if topology.IsBaseline(c.Topology) || c.Ceiling || c.LoadBound() ||
		r == nil || k == nil || !r.Known() || !k.Known() {
		return "", "", false
	}
	iv := func(x *Ratio) string { return fmt.Sprintf("%.2f (%.2f–%.2f)", x.Center, *x.Lo, *x.Hi) }
	switch {
	case *r.Hi < *k.Lo:
		return fmt.Sprintf("%s: serves %s of standalone, less than its CPU cost per request predicts, %s, and the 95%% intervals do not overlap: its servers' CPU did not set its pace, something else limited it (the load generator, the network, a queue or a lock, other work on the machine taking its CPU); the rate's ratio is the measure, the cost's what the path would serve CPU-bound",
			c.Name(), iv(r), iv(k)), "not CPU-bound", true
	case *r.Lo > *k.Hi:
		return fmt.Sprintf("%s: serves %s of standalone, more than its CPU cost per request predicts, %s, and the 95%% intervals do not overlap: standalone's server was not CPU-bound, something else limited it (the load generator, the network, other work on the machine taking its CPU), so the rate's ratio understates what nginx costs",
			c.Name(), iv(r), iv(k)), "standalone not CPU-bound", true
	}
	return "", "", false
}

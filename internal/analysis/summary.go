// Package analysis computes every figure a report shows of a sweep, once,
// between the records (internal/results) and everything that reads them:
// the renderers (internal/report), `topobench diff`, and the sweep itself
// when it decides to add rounds (-reps auto).
//
// Summarize turns a sweep's env.json and runs into a Summary: one Cell per
// Key (a Group — every dimension but the topology — and a topology), with
// the median req/s over repetitions and benchstat's 95% confidence
// interval (stats.Summarize), the ratio to standalone in the same group
// with the interval stats.RatioOf gives (significant exactly when
// benchstat's U test is) and beside it the same ratio as the servers' CPU
// time per request predicts it (CostRatio, cost.go), the rank and whether
// it is settled, CPU per request per process group, latency medians,
// errors summed, the 2013 reference beside it, and the warnings a reader
// should see first (noisy, unsettled, retried, load-bound, not converged
// runs among them, and cells whose rate and CPU cost disagree).
// Unconverged is the rule -reps auto adds rounds by. Engine holds the
// built-in engine's cells (target and achieved rate, percentiles to
// p99.99, the histograms beside them), Overheads what each path costs as
// the handler's work grows (cost.go), and Compare two sweeps cell by cell
// and ratio by ratio, as benchstat compares two files (compare.go). Loads
// set two load generators side by side, cell by cell and round by round,
// in a rounds sweep that ran both (loads.go). Choose says, group by group,
// which path behind nginx a user's own Go service should take, with its
// costs and what the FastCGI paths would change (choice.go). Check judges
// the bounds a CI job sets on the figures (ParseBound, -fail-if), crossed
// only when a figure's whole interval is past one, and Regressions the
// ratios that fell significantly between two sweeps (bounds.go).
//
// Nothing here formats a table or draws a chart; the warnings' text is
// the only prose, written with internal/numfmt as the renderers write
// their figures.
package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// Thresholds for warnings.
const (
	// NearCeiling: a cell within this fraction of the nginx-return ceiling
	// at the same GOMAXPROCS may be limited by wrk or loopback.
	NearCeiling = 0.10
	// WideSpread: (max-min)/median of req/s above this is flagged.
	WideSpread = 0.20
)

// Ceiling is the reference topology whose rate bounds what the load
// generator and loopback can deliver.
const Ceiling = "nginx-return"

// Standalone is the topology every plaintext path is compared with;
// topology.BaselineOf names each path's.
const Standalone = "standalone"

// BaseCell is group g's cell of the plan's baseline (results.Plan.Baseline).
func (s Summary) BaseCell(g Group) (Cell, bool) { return s.Cell(Key{g, s.Env.Plan.Baseline()}) }

// LoadBound reports whether most of the cell's runs were load-bound:
// then its rate is the load generator's, not the path's.
func (c Cell) LoadBound() bool { return c.Reps > 0 && 2*c.LoadBoundRuns > c.Reps }

// Stat is the median and range of one figure over repetitions, with the
// median's 95% confidence interval as benchstat computes it (CILo and
// CIHi nil when the repetitions are too few for one).
type Stat struct {
	Median float64  `json:"median"`
	Min    float64  `json:"min"`
	Max    float64  `json:"max"`
	CILo   *float64 `json:"ci_lo"`
	CIHi   *float64 `json:"ci_hi"`
}

// Interval is the median with its confidence interval.
func (st Stat) Interval(n int) Interval {
	return Interval{Center: st.Median, Lo: st.CILo, Hi: st.CIHi, N: n}
}

// Latency holds medians over repetitions of each run's percentiles. Runs
// counts the runs that had latency samples; zero means unknown.
type Latency struct {
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	Max  time.Duration `json:"max_ns"`
	Runs int           `json:"runs"`
}

// Cell is one topology in one group (at one GOMAXPROCS value), over its
// repetitions.
type Cell struct {
	Key
	// Ceiling marks reference rows with no Go behind them.
	Ceiling bool `json:"ceiling,omitempty"`
	// Reps is the number of runs with a result; Failed the number that
	// failed.
	Reps   int `json:"reps"`
	Failed int `json:"failed"`
	// ReqPerSec is over the successful runs; Spread is (max-min)/median.
	ReqPerSec Stat    `json:"req_per_sec"`
	Spread    float64 `json:"spread"`
	Latency   Latency `json:"latency"`
	// Requests and Errors are summed over the successful runs.
	Requests int64          `json:"requests"`
	Errors   results.Errors `json:"errors"`
	// RatioToStandalone is the cell's req/s over standalone's in the same
	// group (see Ratio); nil when either has no successful run.
	RatioToStandalone *Ratio `json:"ratio_to_standalone"`
	// CostRatio is the same ratio as the CPU figures predict it: with the
	// servers' CPUs saturated, req/s ≈ CPUs ÷ (nginx + server µs per
	// request) (cost.go), so standalone's CPU.Servers over this cell's:
	// RatioOf over the runs' capacities (1e6 ÷ their cost), whose
	// pairwise ratios are standalone's cost over the cell's. It is a second
	// estimate beside RatioToStandalone, not a replacement: the two agree
	// when the servers' CPU set the pace, and a cell where their
	// intervals do not overlap is warned of ("not cpu-bound"). Nil when
	// either cell has no run that measured all of its servers' CPU.
	CostRatio *Ratio `json:"cost_ratio_to_standalone"`
	// AA is standalone's A/A ratio in a paired sweep: its windows on a
	// second pool of its own, alternated with the first like any
	// topology's, over the first's. Its interval must contain 1: the
	// sweep's own check that its intervals are honest. Nil elsewhere.
	AA *Ratio `json:"aa_ratio,omitempty"`
	// AACost is the same A/A by the servers' CPU cost per request.
	AACost *Ratio `json:"aa_cost_ratio,omitempty"`
	// Pairs are a paired sweep's pairs of this cell in time order, each
	// with its rate and capacity ratios and its windows' utilization.
	Pairs []PairRatio `json:"pairs,omitempty"`
	// Utilization is the median of the runs' servers' utilization (their
	// group's CPU time over the window × their CPUs); 0 when not counted.
	Utilization float64 `json:"servers_utilization,omitempty"`
	// Rank orders the group's cells by median req/s, fastest first
	// (ceilings are not ranked); Next is the cell ranked just above and
	// VsNext this cell's req/s over Next's: the order of the two is
	// settled when VsNext.Differs.
	Rank   int    `json:"rank,omitempty"`
	Next   string `json:"next,omitempty"`
	VsNext *Ratio `json:"vs_next,omitempty"`
	// CPU is the CPU time per request answered of each process group;
	// nil when no run measured it.
	CPU *CPUPerRequest `json:"cpu_per_request,omitempty"`
	// NoisyRuns, UnsettledRuns and RetriedRuns count the runs the machine
	// was flagged busy in, that started before the servers were idle, and
	// that were run a second time.
	NoisyRuns     int `json:"noisy_runs,omitempty"`
	UnsettledRuns int `json:"unsettled_runs,omitempty"`
	RetriedRuns   int `json:"retried_runs,omitempty"`
	// LoadBoundRuns counts the runs whose load generator used most of
	// its CPUs (results.Run.LoadBound); a cell where most did is not
	// ranked.
	LoadBoundRuns int `json:"load_bound_runs,omitempty"`
	// Notes are short tags of the warnings that apply ("errors",
	// "spread", "near ceiling", "failed", "not converged", "noisy",
	// "unsettled", "retried", "load-bound", "not CPU-bound", "standalone
	// not CPU-bound").
	Notes []string `json:"notes,omitempty"`

	// rates are the req/s of the successful runs; capacities the
	// requests per second of server CPU (1e6 ÷ servingCost) of those that
	// measured it, which RatioOf divides as it divides rates: the ratio
	// of two cells' capacities is the inverse of their costs' ratio.
	rates, capacities []float64
	// speeds are the servers' speeds of the successful runs, in the
	// order of rates, when every one had a speed; nil otherwise.
	speeds []float64
}

// Name identifies the cell in warnings: "GOMAXPROCS=8 nginx-http".
func (c Cell) Name() string { return c.Key.String() }

// Warning is something a reader should know before trusting a figure.
type Warning struct {
	// Kind is one of "gomaxprocs", "errors", "ceiling", "spread",
	// "failed", "missing", "interrupted", "setup" (env.json's warnings),
	// "noise", "unsettled", "retried", "load-bound", "not converged",
	// "not cpu-bound" (the rate and the CPU cost disagree), "listen
	// overflows", "speed" (the rates followed the speed the probes measured),
	// "loads differ" (two load generators' rates, round by round).
	Kind string `json:"kind"`
	// Cell names the cell, empty for sweep-wide warnings.
	Cell string `json:"cell,omitempty"`
	Msg  string `json:"msg"`
}

// Failure is one failed run.
type Failure struct {
	Run   string `json:"run"`
	Error string `json:"error"`
}

// Summary is everything the report shows.
type Summary struct {
	Env results.Env `json:"env"`
	// Isolation says how the load generator was kept apart from the
	// servers: network and CPUs.
	Isolation string `json:"isolation"`
	// CPUSplit is the CPUs of the load generator and of the servers
	// (CPUSplit), the part of Isolation a report's header names.
	CPUSplit string `json:"cpu_split,omitempty"`
	// ServerCPUs is how many CPUs the servers had: their pinned set's,
	// else the machine's. GOMAXPROCS beyond it oversubscribes them.
	ServerCPUs int       `json:"server_cpus,omitempty"`
	Cells      []Cell    `json:"cells"`
	Reference  []RefCell `json:"reference_2013"`
	Warnings   []Warning `json:"warnings"`
	Failures   []Failure `json:"failures"`

	// Engine are the built-in engine's cells (scenarios.go).
	Engine []LatencyCell `json:"engine_cells,omitempty"`
	// Time is where the sweep's wall time went; nil when its records do
	// not say (an older sweep, or one still running).
	Time *TimeSpent `json:"time,omitempty"`
	// Cluster are the runs of a sweep on a cluster, each node's figures
	// beside the merge (cluster.go).
	Cluster []ClusterRun `json:"cluster_runs,omitempty"`
	// Net are the cells whose runs read the servers' TCP counters, and
	// KeepaliveCosts what a pool smaller than the load cost, in a plan
	// that sweeps the upstream keepalive (netconn.go).
	Net            []NetCell       `json:"net_cells,omitempty"`
	KeepaliveCosts []KeepaliveCost `json:"keepalive_costs,omitempty"`
	// Speed is how the rates followed the servers' speed in a sweep
	// with -speed-probe (speed.go); nil without speeds, and for the
	// paired designs, whose pairs take the speed out.
	Speed *SpeedFit `json:"speed_fit,omitempty"`
	// Loads are the cells of a rounds sweep run under two load
	// generators or more, each under another than the plan's first over
	// the first, round by round (loads.go); nil otherwise.
	Loads []LoadRatio `json:"load_ratios,omitempty"`
	// Choices say, group by group, which path a user's own Go service
	// should take behind nginx and what it costs (choice.go); none
	// without standalone and a net/http path through nginx.
	Choices []Choice `json:"choices,omitempty"`
	// PairedRho is a paired sweep's correlation allowance, estimated once
	// from all its ratios (PairedRho); nil for other designs.
	PairedRho *stats.Rho `json:"paired_rho,omitempty"`
	// Latency are a paired sweep's latency phases, a block each
	// (added.go); their runs are in no cell.
	Latency []AddedLatency `json:"added_latency,omitempty"`
}

// Groups lists the groups of the cells, in table order. The paired
// design's cross-check is no group: its one run a cell is another load
// generator's view of a ratio the pairs measure (CrossChecks).
func (s Summary) Groups() []Group {
	var gs []Group
	for _, c := range s.Cells {
		if !s.CrossCheck(c) && !slices.Contains(gs, c.Group) {
			gs = append(gs, c.Group)
		}
	}
	slices.SortFunc(gs, CompareGroups)
	return gs
}

// CrossCheck reports whether c is a cell of the paired design's
// cross-check (results.Plan.Checked).
func (s Summary) CrossCheck(c Cell) bool {
	return s.Env.Plan.Checked(results.Cell{Topology: c.Topology, GOMAXPROCS: c.GOMAXPROCS, Load: c.Load})
}

// CrossChecks lists the cross-check's cells, in table order; none
// without one.
func (s Summary) CrossChecks() []Cell {
	var cs []Cell
	for _, c := range s.Cells {
		if s.CrossCheck(c) {
			cs = append(cs, c)
		}
	}
	return cs
}

// Topologies lists the topologies in the cells, in report order.
func (s Summary) Topologies() []string {
	var ts []string
	for _, c := range s.Cells {
		if !slices.Contains(ts, c.Topology) {
			ts = append(ts, c.Topology)
		}
	}
	return ts
}

// Cell finds a cell.
func (s Summary) Cell(k Key) (Cell, bool) {
	for _, c := range s.Cells {
		if c.Key == k {
			return c, true
		}
	}
	return Cell{}, false
}

// RatioLevel is the confidence of the ratios to standalone: 95%, or the
// per-look level of a sweep that stopped by looking at them (-reps auto,
// -budget), which keeps them valid whichever look it stopped at.
func (s Summary) RatioLevel() float64 {
	if a := s.Env.Plan.RepsAuto; a != nil {
		return a.Level()
	}
	return stats.Confidence
}

// StoppingRule says how the ratio intervals stay honest under the sweep's
// stopping rule; empty for a fixed number of runs.
func (s Summary) StoppingRule() string {
	a := s.Env.Plan.RepsAuto
	if a == nil {
		return ""
	}
	if a.Confidence == 0 {
		return "recorded before the sequential rule: the sweep stopped adding rounds by looking at 95% intervals, which are then too narrow"
	}
	if d, ok := PairedDesignOf(s.Env.Plan); ok {
		return fmt.Sprintf("%s; correlation between neighbouring pairs %s", d, s.PairedRho)
	}
	d := stats.Sequential{Min: s.Env.Plan.Reps, Max: a.Max, Alpha: stats.Alpha}
	return fmt.Sprintf("the sweep looked at the ratios after every round from %d runs on and stopped adding runs to a cell once its ratio was within ±%s; so that stopping by looking keeps them honest, each interval is at %s", s.Env.Plan.Reps, numfmt.Pct(a.Within), d)
}

// Rows lists the cells of one group, in row order.
func (s Summary) Rows(g Group) []Cell {
	var cs []Cell
	for _, c := range s.Cells {
		if c.Group == g {
			cs = append(cs, c)
		}
	}
	return cs
}

// failures are the runs that failed, each with why.
func failures(runs []results.Run) []Failure {
	out := []Failure{}
	for _, r := range runs {
		if r.Failed() {
			msg := r.Error
			if msg == "" {
				msg = "no load generator result recorded"
			}
			out = append(out, Failure{Run: r.Name(), Error: msg})
		}
	}
	return out
}

// Summarize computes the table, the reference comparison and the warnings.
func Summarize(env results.Env, runs []results.Run) Summary {
	s := Summary{Env: env, Isolation: isolation(env.Plan, runs), CPUSplit: CPUSplit(env.Plan, runs), ServerCPUs: serverCPUs(env, runs), Warnings: []Warning{}, Failures: []Failure{}}
	order := topologyOrder(env.Plan.Topologies, runs)
	all, lat := runs, []results.Run(nil)
	if env.Plan.Paired != nil && env.Plan.Paired.Latency != nil {
		runs = slices.DeleteFunc(slices.Clone(runs), func(r results.Run) bool { return env.Plan.LatencyRun(r.Cell) })
		lat = slices.DeleteFunc(slices.Clone(all), func(r results.Run) bool { return !env.Plan.LatencyRun(r.Cell) })
		s.Latency = AddedLatencies(env.Plan, lat, env.Plan.Topologies)
	}

	keys, byCell := groupRuns(env.Plan, runs, order, func(results.Run) bool { return true })

	for _, k := range keys {
		s.Cells = append(s.Cells, summarizeCell(k, byCell[k]))
	}
	s.Failures = failures(all)
	level := s.RatioLevel()
	var pairs, costs map[Key][]PairRatio
	var costRho stats.Rho
	if env.Plan.Paired != nil {
		pairs = PairRatios(env.Plan, runs)
		rho := PairedRho(pairs)
		s.PairedRho = &rho
		// The capacity ratios' correlation is their own.
		costs = map[Key][]PairRatio{}
		for k, ps := range pairs {
			if cp := costPairs(ps); len(cp) > 0 {
				costs[k] = cp
			}
		}
		costRho = PairedRho(costs)
	}
	if pairs == nil {
		s.Speed = s.fitSpeed()
	}
	for i := range s.Cells {
		c := &s.Cells[i]
		// A path over TLS is to standalone-tls, Go's own TLS.
		if st, ok := s.Cell(Key{c.Group, topology.BaselineOf(c.Topology)}); ok && st.Reps > 0 && c.Reps > 0 {
			c.RatioToStandalone = ratioAt(c.rates, st.rates, level)
			c.CostRatio = ratioAt(c.capacities, st.capacities, level)
			if pairs != nil && c.Load == env.Plan.LoadList()[0] {
				// Pair by pair: a slow minute hits both windows alike.
				rate := pairedRatio(env.Plan, pairs[c.Key], level, s.PairedRho.Allowed)
				cost := pairedRatio(env.Plan, costs[c.Key], level, costRho.Allowed)
				if topology.IsBaseline(c.Topology) {
					c.AA, c.AACost = rate, cost
				} else {
					c.RatioToStandalone, c.CostRatio = rate, cost
				}
				c.Pairs = pairs[c.Key]
				if c.CPU != nil {
					c.CPU.Nginx, c.CPU.Server = PairedCPU(byCell[c.Key])
				}
			}
		}
	}
	if t, ok := Spent(env, all); ok {
		s.Time = &t
	}
	s.rank()
	s.Choices = Choose(s)
	s.Reference = referenceCells(s)
	s.Loads = loadRatios(env.Plan, keys, byCell, level)
	s.Engine = latencyCells(env.Plan, runs, order)
	s.Net = netCells(env, runs, order)
	s.KeepaliveCosts = s.keepaliveCosts()
	s.warn()
	s.warnRuns(runs)
	s.warnSpeed(runs)
	s.warnLoads()
	s.clusterRuns(runs)
	s.warnConvergence()
	return s
}

func summarizeCell(k Key, runs []results.Run) Cell {
	c := Cell{Key: k}
	var load, nginx, server, serving, utils []float64
	hasNginx, hasServer := servingParts(k.Topology, runs)
	if t, err := topology.Lookup(k.Topology); err == nil {
		c.Ceiling = t.Reference
	}
	var rates, speeds []float64
	var p50s, p99s, maxes []time.Duration
	for _, r := range runs {
		if r.Failed() {
			c.Failed++
			continue
		}
		res := r.Figures
		c.Reps++
		if r.LoadBound() {
			c.LoadBoundRuns++
		}
		rates = append(rates, res.ReqPerSec)
		if sp := r.Noise.SpeedOf(); sp != nil && sp.Servers > 0 {
			speeds = append(speeds, sp.Servers)
		}
		if l, n, sv, ok := cpuPerRequest(r); ok {
			load = append(load, l)
			// A group not measured in a run is left out of its median.
			if !math.IsNaN(n) {
				nginx = append(nginx, n)
			}
			if !math.IsNaN(sv) {
				server = append(server, sv)
			}
		}
		if u := utilization(r); u > 0 {
			utils = append(utils, u)
		}
		if us, ok := servingCost(r, hasNginx, hasServer); ok {
			serving = append(serving, us)
			c.capacities = append(c.capacities, 1e6/us)
		}
		c.Requests += res.Requests
		c.Errors = c.Errors.Add(res.Errors)
		// A run where every request timed out has no latency samples;
		// its zeros would pull the medians down.
		if res.Latency {
			p50s = append(p50s, res.P50)
			p99s = append(p99s, res.P99)
			maxes = append(maxes, res.Max)
		}
	}
	c.rates = rates
	if len(speeds) == len(rates) {
		c.speeds = speeds
	}
	if len(utils) > 0 {
		c.Utilization = stats.Summarize(utils).Center
	}
	if len(rates) > 0 {
		iv := intervalOf(rates)
		c.ReqPerSec = Stat{Median: iv.Center, Min: slices.Min(rates), Max: slices.Max(rates), CILo: iv.Lo, CIHi: iv.Hi}
		if c.ReqPerSec.Median > 0 {
			c.Spread = (c.ReqPerSec.Max - c.ReqPerSec.Min) / c.ReqPerSec.Median
		}
	}
	if len(load) > 0 {
		c.CPU = &CPUPerRequest{Load: intervalOf(load), Nginx: measuredInterval(nginx), Server: measuredInterval(server), Servers: measuredInterval(serving)}
	}
	if len(p50s) > 0 {
		c.Latency = Latency{P50: medianDur(p50s), P99: medianDur(p99s), Max: medianDur(maxes), Runs: len(p50s)}
	}
	return c
}

// ViaUpstream reports whether a topology of tops goes through nginx to a
// server, keeping an upstream pool.
func ViaUpstream(tops []string) bool {
	for _, name := range tops {
		if t, err := topology.Lookup(name); err == nil && t.ViaNginx() && t.Backend != topology.NoBackend {
			return true
		}
	}
	return false
}

func (s *Summary) warn() {
	add := func(kind string, c *Cell, note, format string, args ...any) {
		w := Warning{Kind: kind, Msg: fmt.Sprintf(format, args...)}
		if c != nil {
			w.Cell = c.Name()
			if note != "" && !slices.Contains(c.Notes, note) {
				c.Notes = append(c.Notes, note)
			}
		}
		s.Warnings = append(s.Warnings, w)
	}
	env := s.Env
	if env.Interrupted || env.End.IsZero() {
		add("interrupted", nil, "", "the sweep did not finish its plan; the tables hold the runs that completed")
	}
	for _, w := range env.Warnings {
		add("setup", nil, "", "%s", w)
	}
	if n := s.ServerCPUs; n > 0 {
		var seen []int
		for _, grp := range s.Groups() {
			g := grp.GOMAXPROCS
			if g > n && !slices.Contains(seen, g) {
				seen = append(seen, g)
				if n < env.CPUs {
					add("gomaxprocs", nil, "", "GOMAXPROCS=%d exceeds the %s the servers run on (of the machine's %d): Go runs more threads than it has cores, competing with nginx for them; read those rows as an oversubscribed setup, not as a faster one", g, numfmt.Plural(n, "CPU"), env.CPUs)
				} else {
					add("gomaxprocs", nil, "", "GOMAXPROCS=%d exceeds the %s of this machine: Go runs more threads than there are cores, competing with wrk and nginx for them; read those rows as an oversubscribed setup, not as a faster one", g, numfmt.Plural(env.CPUs, "CPU"))
				}
			}
		}
	}
	// A pool smaller than the clients: nginx opens upstream connections
	// at the rate it serves, and the ratios measure that churn too.
	for _, k := range env.Plan.KeepaliveList() {
		most := env.Plan.MostConnections()
		if size := k.Size(most); k != results.KeepaliveAuto && size < most && ViaUpstream(env.Plan.Topologies) {
			add("upstream pool", nil, "", "nginx keeps at most %d idle upstream connections for up to %d clients (upstream keepalive %s, 2013's): it opens new upstream connections at the rate the Connections table counts, so the ratios through nginx measure that churn as well as proxying; -upstream-keepalive auto sizes the pool to the clients (make compare)", size, most, k)
		}
	}
	// Cells the plan asked for that have no run at all (the plan's cells:
	// another target than Go has no FastCGI path to miss).
	planned := map[Key]bool{}
	for _, c := range env.Plan.Cells() {
		planned[KeyOf(env.Plan, results.Run{Cell: c})] = true
	}
	for _, g := range planGroups(env.Plan) {
		for _, t := range env.Plan.Topologies {
			if k := (Key{g, t}); planned[k] && !s.hasCell(k) {
				add("missing", nil, "", "%s: no run recorded", k)
			}
		}
	}
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Failed > 0 {
			add("failed", c, "failed", "%s: %d of %d runs failed (see Failed runs)", c.Name(), c.Failed, c.Failed+c.Reps)
		}
		if c.Errors.Socket() > 0 || c.Errors.Status > 0 {
			e := c.Errors
			add("errors", c, "errors", "%s: %s over %d runs (%s of %s requests); a rate with errors is not comparable to one without, and wrk leaves timed-out requests out of its latency figures",
				c.Name(), e.String(), c.Reps, numfmt.Count(float64(e.Total())), numfmt.Count(float64(c.Requests)))
		}
		if c.Reps >= 2 && c.Spread > WideSpread {
			add("spread", c, "spread", "%s: repetitions range %s–%s req/s, %.0f%% of the median; the median is uncertain",
				c.Name(), numfmt.Count(c.ReqPerSec.Min), numfmt.Count(c.ReqPerSec.Max), 100*c.Spread)
		}
		if w, note, ok := costDisagrees(*c); ok {
			add("not cpu-bound", c, note, "%s", w)
		}
		if !c.Ceiling && c.Reps > 0 {
			if ceil, ok := s.Cell(Key{c.Group, Ceiling}); ok && ceil.Reps > 0 && c.ReqPerSec.Median >= (1-NearCeiling)*ceil.ReqPerSec.Median {
				add("ceiling", c, "near ceiling", "%s: %s req/s is within %.0f%% of the %s ceiling (%s req/s); the load generator or loopback, not the topology, may be the limit",
					c.Name(), numfmt.Count(c.ReqPerSec.Median), 100*NearCeiling, Ceiling, numfmt.Count(ceil.ReqPerSec.Median))
			}
		}
	}
}

func (s *Summary) hasCell(k Key) bool {
	_, ok := s.Cell(k)
	return ok
}

// topologyOrder ranks topologies: the plan's order, then the known
// topologies' report order, then by name.
func topologyOrder(plan []string, runs []results.Run) map[string]int {
	var names []string
	names = append(names, plan...)
	for _, n := range topology.Names() {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	var extra []string
	for _, r := range runs {
		if t := r.Topology; !slices.Contains(names, t) && !slices.Contains(extra, t) {
			extra = append(extra, t)
		}
	}
	sort.Strings(extra)
	names = append(names, extra...)
	order := map[string]int{}
	for i, n := range names {
		order[n] = i
	}
	return order
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianDur(ds []time.Duration) time.Duration {
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = float64(d)
	}
	return time.Duration(median(fs))
}

// groupRuns gathers the runs keep accepts by cell, the cells in table
// order: group, then topology in the given order.
func groupRuns(p results.Plan, runs []results.Run, order map[string]int, keep func(results.Run) bool) ([]Key, map[Key][]results.Run) {
	byKey := map[Key][]results.Run{}
	var keys []Key
	for _, r := range runs {
		if !keep(r) {
			continue
		}
		k := KeyOf(p, r)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	slices.SortFunc(keys, func(a, b Key) int {
		return cmp.Or(CompareGroups(a.Group, b.Group), cmp.Compare(order[a.Topology], order[b.Topology]))
	})
	return keys, byKey
}

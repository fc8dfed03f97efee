package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/topology"
)

// The latency phase of a paired sweep (results.Latency): each path alone,
// open loop at one rate, standalone's runs between the paths'. A run is
// flagged, and its latency not its path's, when its generator fell behind
// (late or dropped requests) or it answered below MinAchieved of the rate.

// MinAchieved is the share of the target rate a latency run must reach,
// MaxLate the share of its requests that may find no free connection.
const (
	MinAchieved = 0.97
	MaxLate     = 0.01
)

// AddedLatency is one block's latency phase.
type AddedLatency struct {
	Target     string `json:"target,omitempty"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// Rate is the runs' median target rate; Fraction, under auto, the
	// fraction of the slowest path's req/s in the pairs it is.
	Rate        float64 `json:"rate"`
	Fraction    float64 `json:"fraction,omitempty"`
	Connections int     `json:"connections"`
	// Paths are standalone's first, then each path's, in plan order.
	Paths []PathLatency `json:"paths"`
}

// PathLatency is a path's percentiles over its unflagged runs (medians,
// in seconds) and, but for standalone, what it adds to the standalone run
// before each of its own (a t interval on the differences).
type PathLatency struct {
	Topology string `json:"topology"`
	// Runs are the path's runs, Flagged those left out.
	Runs    int           `json:"runs"`
	Flagged int           `json:"flagged"`
	P50     stats.Summary `json:"p50"`
	P99     stats.Summary `json:"p99"`
	P999    stats.Summary `json:"p999"`
	// Added are the differences from standalone, at p50, p99, p99.9; nil
	// for standalone.
	Added *[3]stats.MeanDiff `json:"added,omitempty"`
}

// Flagged says why a latency run's latency is not its path's; "" for
// none.
func Flagged(r results.Run) string {
	f := r.Figures
	switch {
	case r.Failed() || f == nil || !f.Latency:
		return "failed"
	case f.Dropped > 0 || float64(f.Late) > MaxLate*float64(max(f.Sent, f.Requests)):
		return "generator late"
	case f.TargetRate > 0 && f.ReqPerSec < MinAchieved*f.TargetRate:
		return "rate missed"
	}
	return ""
}

// AddedLatencies are the plan's latency phases, block by block, from
// runs (those of the phase, results.Plan.LatencyRun); order is the
// topologies' report order.
func AddedLatencies(p results.Plan, runs []results.Run, order []string) []AddedLatency {
	var out []AddedLatency
	for _, r := range runs {
		if !slices.ContainsFunc(out, func(a AddedLatency) bool { return a.Target == r.TargetName() && a.GOMAXPROCS == r.GOMAXPROCS }) {
			out = append(out, AddedLatency{Target: r.TargetName(), GOMAXPROCS: r.GOMAXPROCS, Connections: r.Connections, Fraction: r.Fraction})
		}
	}
	for i := range out {
		a := &out[i]
		mine := slices.DeleteFunc(slices.Clone(runs), func(r results.Run) bool { return r.TargetName() != a.Target || r.GOMAXPROCS != a.GOMAXPROCS })
		slices.SortStableFunc(mine, func(x, y results.Run) int { return x.Start.Compare(y.Start) })
		var rates []float64
		for _, r := range mine {
			if r.Figures != nil && r.Figures.TargetRate > 0 {
				rates = append(rates, r.Figures.TargetRate)
			}
		}
		a.Rate = stats.Summarize(rates).Center
		for _, top := range order {
			if pl, ok := pathLatency(top, mine); ok {
				a.Paths = append(a.Paths, pl)
			}
		}
	}
	return out
}

// pathLatency is top's figures among a block's runs in time order.
func pathLatency(top string, runs []results.Run) (PathLatency, bool) {
	pl := PathLatency{Topology: top}
	var p50, p99, p999 []float64
	var diffs [3][]float64
	for i, r := range runs {
		if r.Topology != top {
			continue
		}
		pl.Runs++
		if Flagged(r) != "" {
			pl.Flagged++
			continue
		}
		f := r.Figures
		p50, p99, p999 = append(p50, f.P50.Seconds()), append(p99, f.P99.Seconds()), append(p999, f.P999.Seconds())
		if topology.IsBaseline(top) {
			continue
		}
		// The standalone run before this one, if it counts.
		for j := i - 1; j >= 0; j-- {
			if s := runs[j]; s.Topology == topology.BaselineOf(top) {
				if Flagged(s) == "" {
					for k, q := range [3][2]time.Duration{{f.P50, s.Figures.P50}, {f.P99, s.Figures.P99}, {f.P999, s.Figures.P999}} {
						diffs[k] = append(diffs[k], (q[0] - q[1]).Seconds())
					}
				}
				break
			}
		}
	}
	if pl.Runs == 0 {
		return pl, false
	}
	pl.P50, pl.P99, pl.P999 = stats.Summarize(p50), stats.Summarize(p99), stats.Summarize(p999)
	if !topology.IsBaseline(top) {
		pl.Added = &[3]stats.MeanDiff{}
		for k := range diffs {
			pl.Added[k] = stats.MeanDiffOf(diffs[k], stats.Confidence)
		}
	}
	return pl, true
}

// est is a figure of PathLatency as summary.json writes it, in seconds:
// its bounds left out where infinite.
type est struct {
	Center float64  `json:"center_s"`
	Lo     *float64 `json:"lo_s,omitempty"`
	Hi     *float64 `json:"hi_s,omitempty"`
	N      int      `json:"n"`
}

func finite(x float64) *float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return &x
}

func estOf(center, lo, hi float64, n int) est {
	if math.IsNaN(center) {
		center = 0
	}
	return est{Center: center, Lo: finite(lo), Hi: finite(hi), N: n}
}

// MarshalJSON writes the figures with their finite bounds only (JSON has
// no infinity).
func (p PathLatency) MarshalJSON() ([]byte, error) {
	out := struct {
		Topology string `json:"topology"`
		Runs     int    `json:"runs"`
		Flagged  int    `json:"flagged"`
		P50      est    `json:"p50"`
		P99      est    `json:"p99"`
		P999     est    `json:"p999"`
		Added    []est  `json:"added,omitempty"`
	}{Topology: p.Topology, Runs: p.Runs, Flagged: p.Flagged,
		P50: estOf(p.P50.Center, p.P50.Lo, p.P50.Hi, p.P50.N), P99: estOf(p.P99.Center, p.P99.Lo, p.P99.Hi, p.P99.N), P999: estOf(p.P999.Center, p.P999.Lo, p.P999.Hi, p.P999.N)}
	if p.Added != nil {
		for _, m := range p.Added {
			out.Added = append(out.Added, estOf(m.Mean, m.Lo, m.Hi, m.N))
		}
	}
	return json.Marshal(out)
}

// AddedFor is the latency phase of g's block, nil without one: the phase
// runs on a block's servers, so it belongs to the groups of its target,
// GOMAXPROCS and connections.
func (s Summary) AddedFor(g Group) *AddedLatency {
	for i, a := range s.Latency {
		if a.Target == g.Target && a.GOMAXPROCS == g.GOMAXPROCS && (g.Connections == 0 || a.Connections == g.Connections) {
			return &s.Latency[i]
		}
	}
	return nil
}

// Path is top's latency in the phase, nil where it did not run.
func (a AddedLatency) Path(top string) *PathLatency {
	for i, p := range a.Paths {
		if p.Topology == top {
			return &a.Paths[i]
		}
	}
	return nil
}

// Added p50, p99 and p99.9: PathLatency.Added's indexes.
const (
	AddedP50 = iota
	AddedP99
	AddedP999
)

// DiffText is a mean difference in seconds as the reports write it,
// "+120 µs ± 25 µs", the interval left out where unknown; "–" for none.
func DiffText(m stats.MeanDiff) string {
	if m.N == 0 || math.IsNaN(m.Mean) {
		return "–"
	}
	sign := "+"
	if m.Mean < 0 {
		sign = "-"
	}
	out := sign + numfmt.Dur(secondsOf(math.Abs(m.Mean)))
	if m.Known() {
		out += " ± " + numfmt.Dur(secondsOf(m.Hi-m.Mean))
	}
	return out
}

func secondsOf(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// RateText names the phase's load: "4,000 req/s (5,000 connections)".
func (a AddedLatency) RateText() string {
	return fmt.Sprintf("%s req/s (%s connections)", numfmt.Count(a.Rate), numfmt.Count(float64(a.Connections)))
}

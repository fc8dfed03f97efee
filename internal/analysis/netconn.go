package analysis

import (
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// NetCell is what the servers' network namespace counted over a cell's
// measured runs (results.Net), beside the cell's rate: connects its listen
// queues turned away, and the upstream connections nginx opened.
type NetCell struct {
	Key
	// ReqPerSec is the median rate of the runs counted.
	ReqPerSec float64 `json:"reqps_median"`
	// Runs counts the successful runs whose counters were read;
	// OverflowRuns those that met a full listen queue.
	Runs         int `json:"runs"`
	OverflowRuns int `json:"overflow_runs"`
	// ListenOverflows and SyncookiesSent are summed over the runs.
	ListenOverflows int64 `json:"listen_overflows"`
	SyncookiesSent  int64 `json:"syncookies_sent"`
	// UpstreamPer1k is the upstream connections nginx opened per 1,000
	// requests, over the runs that counted them; nil when none did.
	UpstreamPer1k *Interval `json:"upstream_per_1k,omitempty"`
	// Keepalive is the upstream pool nginx kept per worker.
	Keepalive int `json:"upstream_keepalive,omitempty"`
}

// KeepaliveCost compares a topology through nginx with an upstream pool
// smaller than the load against the same topology with a pool that holds
// it, in groups that differ in nothing else.
type KeepaliveCost struct {
	Topology string `json:"topology"`
	// Small and Large are the two groups, SmallPool and LargePool their
	// pools per worker.
	Small     Group `json:"small"`
	Large     Group `json:"large"`
	SmallPool int   `json:"small_pool"`
	LargePool int   `json:"large_pool"`
	// SmallRate and LargeRate are the median req/s; Ratio is the small
	// pool's rate over the large one's, nil when either has no run.
	SmallRate float64 `json:"small_reqps"`
	LargeRate float64 `json:"large_reqps"`
	Ratio     *Ratio  `json:"ratio"`
	// SmallVsStandalone and LargeVsStandalone are each cell's ratio to
	// standalone in its own start of the servers: nginx restarts for each
	// pool, so the two pools run one after the other, and these ratios
	// cancel what the machine did between them. Nil when not measured.
	SmallVsStandalone *Ratio `json:"small_ratio_to_standalone,omitempty"`
	LargeVsStandalone *Ratio `json:"large_ratio_to_standalone,omitempty"`
	// SmallPer1k and LargePer1k are the upstream connections opened per
	// 1,000 requests; nil where not counted.
	SmallPer1k *Interval `json:"small_upstream_per_1k,omitempty"`
	LargePer1k *Interval `json:"large_upstream_per_1k,omitempty"`
}

// Costs reports whether the smaller pool cost throughput: its rate is
// below the larger pool's at the ratio's confidence.
func (k KeepaliveCost) Costs() bool {
	return k.Ratio != nil && k.Ratio.Differs && k.Ratio.Center < 1
}

// netCells summarizes the counters of every cell whose runs read them.
func netCells(env results.Env, runs []results.Run, order map[string]int) []NetCell {
	keys, byKey := groupRuns(env.Plan, runs, order, func(r results.Run) bool { return !r.Failed() && r.Net != nil })
	var out []NetCell
	for _, k := range keys {
		c := NetCell{Key: k}
		var rates, per1k []float64
		for _, r := range byKey[k] {
			c.Runs++
			rates = append(rates, r.Figures.ReqPerSec)
			c.ListenOverflows += r.Net.ListenOverflows
			c.SyncookiesSent += r.Net.SyncookiesSent
			if r.Net.Overflowed() {
				c.OverflowRuns++
			}
			if v, ok := r.UpstreamPer1k(); ok {
				per1k = append(per1k, v)
			}
			if c.Keepalive == 0 && viaNginxUpstream(k.Topology) {
				c.Keepalive = env.Plan.KeepaliveOf(r.Cell).Size(poolLoad(env.Plan))
			}
		}
		c.ReqPerSec = median(rates)
		c.UpstreamPer1k = measuredInterval(per1k)
		out = append(out, c)
	}
	return out
}

// poolLoad is the load nginx's upstream pools were sized for: the plan's
// most connections (an auto pool holds them).
func poolLoad(p results.Plan) int {
	if len(p.Connections) == 0 {
		return 5000
	}
	return slices.Max(p.Connections)
}

// keepaliveCosts pairs, in a plan that sweeps the upstream keepalive,
// each cell through nginx with a pool smaller than the load with the
// same cell with a pool that holds it.
func (s Summary) keepaliveCosts() []KeepaliveCost {
	p := s.Env.Plan
	if len(p.UpstreamKeepalive) < 2 {
		return nil
	}
	var out []KeepaliveCost
	for _, small := range s.Cells {
		if !viaNginxUpstream(small.Topology) {
			continue
		}
		smallPool := p.KeepaliveOf(results.Cell{Keepalive: small.Keepalive}).Size(small.Connections)
		if small.Connections == 0 || smallPool >= small.Connections {
			continue
		}
		for _, large := range s.Cells {
			g := large.Group
			g.Keepalive = small.Keepalive
			largePool := p.KeepaliveOf(results.Cell{Keepalive: large.Keepalive}).Size(large.Connections)
			if large.Topology != small.Topology || g != small.Group || largePool < large.Connections {
				continue
			}
			kc := KeepaliveCost{Topology: small.Topology, Small: small.Group, Large: large.Group, SmallPool: smallPool, LargePool: largePool,
				SmallRate: small.ReqPerSec.Median, LargeRate: large.ReqPerSec.Median,
				SmallVsStandalone: small.RatioToStandalone, LargeVsStandalone: large.RatioToStandalone}
			if small.Reps > 0 && large.Reps > 0 {
				kc.Ratio = ratioAt(small.rates, large.rates, s.RatioLevel())
			}
			for _, n := range s.Net {
				switch n.Key {
				case small.Key:
					kc.SmallPer1k = n.UpstreamPer1k
				case large.Key:
					kc.LargePer1k = n.UpstreamPer1k
				}
			}
			out = append(out, kc)
		}
	}
	return out
}

// viaNginxUpstream reports whether the topology goes through nginx to a
// server behind it: the paths an upstream pool serves.
func viaNginxUpstream(name string) bool {
	t, err := topology.Lookup(name)
	return err == nil && t.ViaNginx() && t.Backend != topology.NoBackend
}

package stopping

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/results"
)

func TestConverge(t *testing.T) {
	p := autoPlan()
	b := p.Blocks()[0]
	require.Equal(t, 1, b.GOMAXPROCS)
	tight := func(rep int) float64 { return 0.5 + 0.001*float64(rep%3) } // within ±1%
	wide := func(rep int) float64 { return 0.4 + 0.05*float64(rep%3) }   // ±25%
	tests := []struct {
		name    string
		plan    func(*results.Plan)
		runs    []results.Run
		next    []string // keys of the next round; empty when done
		pending []string // topologies not within the bound
	}{
		{name: "tight after the first rounds: done", runs: recorded(b, 6, tight)},
		{name: "wide: one more round of every cell", runs: recorded(b, 6, wide),
			next: []string{"g1-standalone-c100-r7", "g1-nginx-http-c100-r7"}, pending: []string{"nginx-http"}},
		{name: "wide at the maximum: stop, say which", runs: recorded(b, 8, wide), pending: []string{"nginx-http"}},
		{name: "the other block's runs do not count", runs: append(recorded(b, 6, tight), recorded(p.Blocks()[1], 8, wide)...)},
		{name: "a round cut short is completed first", runs: recorded(b, 7, tight)[:13],
			next: []string{"g1-nginx-http-c100-r7"}},
		{name: "three rounds cannot give a ratio interval", plan: func(p *results.Plan) { p.Reps = 3 }, runs: recorded(b, 3, tight),
			next: []string{"g1-nginx-http-c100-r4", "g1-standalone-c100-r4"}, pending: []string{"nginx-http"}},
		{name: "four rounds can", plan: func(p *results.Plan) { p.Reps = 4 }, runs: recorded(b, 4, tight)},
		{name: "a cell that always fails does not hold the block", runs: recorded(b, 6, func(int) float64 { return 0 }),
			pending: []string{"nginx-http"}},
		{name: "one failed round: the others still pair", runs: recorded(b, 7, func(rep int) float64 {
			if rep == 3 {
				return 0
			}
			return tight(rep)
		})},
		{name: "without standalone the medians converge", plan: func(p *results.Plan) { p.Topologies = []string{"nginx-http"} },
			runs: func() []results.Run {
				var rs []results.Run
				for _, r := range recorded(b, 6, wide) {
					if r.Topology == "nginx-http" {
						rs = append(rs, r)
					}
				}
				return rs
			}(),
			next: []string{"g1-nginx-http-c100-r7"}, pending: []string{"nginx-http"}},
		{name: "a fixed count never adds rounds", plan: func(p *results.Plan) { p.RepsAuto = nil }, runs: recorded(b, 6, wide)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := autoPlan()
			if tt.plan != nil {
				tt.plan(&p)
			}
			v := Converge(p, b, tt.runs)
			assert.Equal(t, tt.next, keys(v.Next.Cells), v.String())
			var pending []string
			for _, c := range v.Pending {
				pending = append(pending, c.Key.Topology)
			}
			assert.Equal(t, tt.pending, pending)
		})
	}
}

func TestConvergeVerdict(t *testing.T) {
	p := autoPlan()
	b := p.Blocks()[0]
	v := Converge(p, b, recorded(b, 6, func(rep int) float64 { return 0.4 + 0.05*float64(rep%3) }))
	assert.Equal(t, 6, v.Rounds)
	// nginx-http at 450 500 400 450 500 400 over a constant 1000: median
	// 0.45; the 36 pairwise ratios are 0.4, 0.45 and 0.5 twelve times
	// each, and the 6th smallest and largest bound the interval: [0.4,
	// 0.5], ±11%.
	require.Len(t, v.Pending, 1)
	assert.InDelta(t, 0.45, v.Pending[0].Center, 1e-12)
	assert.InDelta(t, 0.05/0.45, v.Pending[0].HalfWidth, 1e-12)
	assert.Equal(t, "1 not within the bound: nginx-http ±11%", v.String())
}

// recorded makes the runs of the given rounds of block b: standalone at
// 1000 req/s, nginx-http at 1000*ratio(rep); ratio 0 records a failure.
func recorded(b results.Block, rounds int, ratio func(rep int) float64) []results.Run {
	var runs []results.Run
	for rep := 1; rep <= rounds; rep++ {
		for _, top := range []string{"standalone", "nginx-http"} {
			r := results.Run{Cell: results.Cell{Target: b.Target, Topology: top, GOMAXPROCS: b.GOMAXPROCS, Connections: 100, Rep: rep}}
			rate := 1000.0
			if top == "nginx-http" {
				rate *= ratio(rep)
			}
			if rate > 0 {
				r.Figures = &results.Figures{ReqPerSec: rate, Requests: int64(rate)}
			} else {
				r.Error = "parity check: refused"
			}
			runs = append(runs, r)
		}
	}
	return runs
}

// autoPlan is standalone and nginx-http at GOMAXPROCS 1 and 2 under
// -reps auto: six first rounds, up to eight, ±5%.
func autoPlan() results.Plan {
	p := results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 2}, Connections: []int{100},
		Reps: 6, RepsAuto: &results.RepsAuto{Max: 8, Within: 0.05}, Duration: time.Second, Threads: 1, Timeout: time.Second}
	return p
}

package sweep

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// workRate answers a pool at the rate of a CPU saturated by requests of
// its path's cost plus its group's handler work: standalone 10 µs,
// nginx-http 25 µs.
func workRate(pool string, _ int) float64 {
	top, group, _ := strings.Cut(pool, "@work=")
	top = strings.TrimSuffix(top, "-twin") // the A/A's second pool is standalone's
	us := map[string]float64{"standalone": 10, "nginx-http": 25}[top]
	if group != "" {
		w, err := time.ParseDuration(group)
		if err != nil {
			panic(err)
		}
		us += float64(w.Microseconds())
	}
	return 1e6 / us
}

// workPlan is a paired plan of standalone and nginx-http at handler works
// 0 and 200 µs.
func workPlan(duet bool) Plan {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	p.Topologies = []string{"standalone", "nginx-http"}
	p.Paired.Pairs = 2
	p.Schedules = plan.Product(nil, nil, []time.Duration{0, 200 * time.Microsecond})
	if duet {
		p.Loads = []results.Generator{results.LoadBuiltin}
		p.Paired.Duet = true
	}
	return p
}

// TestPairedWork: under the paired design each handler work is a group of
// its own: its own pools, to URLs that ask for the work, its pairs
// numbered apart, its ratios its own; under either pairing.
func TestPairedWork(t *testing.T) {
	for _, duet := range []bool{false, true} {
		name := map[bool]string{false: "alternate", true: "duet"}[duet]
		t.Run(name, func(t *testing.T) {
			p := workPlan(duet)
			f := newFakeSweep(t, p)
			var log func() string
			if duet {
				needWeights(t, f)
				gen := &duetGen{keptGen: &keptGen{rate: workRate}, bias: 1}
				f.generators[results.LoadBuiltin] = gen
				log = func() string { return strings.Join(gen.log, "\n") + "\n" }
			} else {
				gen := &keptGen{rate: workRate}
				f.generators[results.LoadWrk] = gen
				log = func() string { return strings.Join(gen.log, "\n") + "\n" }
			}
			require.NoError(t, f.measure(context.Background()))

			require.NoError(t, p.Validate(plan.Where{}))
			for _, pool := range []string{"standalone", "standalone@work=200µs", "nginx-http", "nginx-http@work=200µs", "standalone-twin", "standalone-twin@work=200µs"} {
				assert.Equal(t, 1, strings.Count(log(), "open "+pool+"\n"), "%s opened once", pool)
			}
			assert.LessOrEqual(t, mostOpen(log()), 3, "one group's pools at a time: standalone's, its twin, a topology's")
			runs := f.runs(t)
			require.Len(t, runs, 2*2*2*2, "2 works x (A/A and nginx-http) x 2 pairs x 2 windows")
			for _, r := range runs {
				assert.Equal(t, r.Work > 0, strings.Contains(r.URL, "work="), "%s: %s", r.Name(), r.URL)
			}
			pairs := analysis.PairRatios(p.Plan, runs)
			require.Len(t, pairs, 4)
			for k, ps := range pairs {
				require.Len(t, ps, 2, k.String())
				want := 1.0
				if k.Topology == "nginx-http" {
					want = map[time.Duration]float64{0: 10.0 / 25, 200 * time.Microsecond: 210.0 / 225}[k.Schedule.Work]
				}
				for i, pr := range ps {
					assert.Equal(t, i+1, pr.Index, "%s: its own numbering", k)
					assert.InDelta(t, want, pr.Ratio, 1e-9, k.String())
				}
			}
		})
	}
}

// mostOpen is the most pools a generator's log had open at once.
func mostOpen(log string) int {
	open, most := map[string]bool{}, 0
	for _, l := range strings.Split(log, "\n") {
		if name, ok := strings.CutPrefix(l, "open "); ok {
			open[name] = true
		}
		if name, ok := strings.CutPrefix(l, "close "); ok {
			delete(open, name)
		}
		most = max(most, len(open))
	}
	return most
}

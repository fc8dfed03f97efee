package stopping

import (
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
)

// TestNextPairs: the budget's next pairs go to the widest ratio still
// wider than the precision, as many as fit, and it stops when every ratio
// is within it or the time is spent.
func TestNextPairs(t *testing.T) {
	p := pairedPlan()
	p.GOMAXPROCS = []int{1}
	p.Paired.Pairs = 8
	p.RepsAuto = &results.RepsAuto{Max: 20, Within: 0.05, Confidence: 0.95, Budget: 10 * time.Minute}
	// nginx-http's pairs stray ±20%, nginx-fcgi-tcp's ±1%.
	stray := map[string]float64{"nginx-http": 0.2, "nginx-fcgi-tcp": 0.01}
	runs := fakePairs(p, 8, stray)
	c := PairedCosts(p)
	b, top, n, why := NextPairs(p, runs, "go/1", 5*time.Minute, c)
	assert.Empty(t, why)
	assert.Equal(t, "nginx-http", top, "the widest")
	assert.Equal(t, 1, b.GOMAXPROCS)
	assert.Equal(t, stats.StepPairs, n, "a step towards what its pairs' spread needs")

	_, _, n, why = NextPairs(p, runs, "go/1", 4*time.Second, c)
	assert.Zero(t, n)
	assert.Contains(t, why, "not one more pair fits in the 4s left")

	_, top, n, _ = NextPairs(p, fakePairs(p, 8, map[string]float64{"standalone": 0.2, "nginx-http": 0.01, "nginx-fcgi-tcp": 0.01}), "go/1", 5*time.Minute, c)
	assert.Equal(t, "standalone", top, "the A/A is an arm like the others")
	assert.Equal(t, stats.StepPairs, n)

	_, _, n, why = NextPairs(p, fakePairs(p, 8, map[string]float64{"nginx-http": 0.005, "nginx-fcgi-tcp": 0.005}), "go/1", 5*time.Minute, c)
	assert.Zero(t, n)
	assert.Equal(t, "every ratio within ±5%", why)

	_, _, n, why = NextPairs(p, fakePairs(p, 20, stray), "go/1", 5*time.Minute, c)
	assert.Zero(t, n, "nginx-http has the most pairs the design allows")
	assert.Contains(t, why, "have 20 pairs, the most the design allows")
}

// fakePairs are n complete pairs of every topology of p's first block
// and of its A/A, a second apart, each ratio straying by ±stray (the
// A/A's by stray["standalone"]) around standalone's 1,000.
func fakePairs(p results.Plan, n int, stray map[string]float64) []results.Run {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var runs []results.Run
	seq := 0
	for _, top := range p.Topologies {
		for i := 1; i <= n; i++ {
			seq++
			f := 1 + stray[top]*math.Sin(float64(i)*2.1)
			at := seq
			mk := func(t string, rep int, rate float64, second bool) results.Run {
				return results.Run{
					Cell:  results.Cell{Target: "go", Topology: t, GOMAXPROCS: p.GOMAXPROCS[0], Connections: p.Connections[0], Rep: rep},
					Start: t0.Add(time.Duration(2*at) * time.Second), Wall: p.Duration,
					Figures: &results.Figures{Requests: 100, ReqPerSec: rate},
					Pair:    &results.Pair{With: top, Index: i, Seq: at, First: !second, Twin: second && top == "standalone"},
				}
			}
			rep := i
			if top == "standalone" {
				seq++
				rep = seq
			}
			runs = append(runs, mk("standalone", at, 1000, false), mk(top, rep, 500*f, true))
		}
	}
	return runs
}

// TestFitPaired: the first pairs fill at most 60% of the budget; a budget
// too short for 3 pairs each says how much would do.
func TestFitPaired(t *testing.T) {
	p := defaultPlan()
	p.Duration, p.Warmup, p.Reps = 2*time.Second, time.Second, 1
	p.Paired = &results.Paired{Seed: 1}
	got, err := FitPaired(p, BudgetOptions{Budget: 10 * time.Minute, Precision: 0.05})
	require.NoError(t, err)
	// 20 s before, 2 starts, 19 pools at 3 s, 4.5 s a pair: pilots of 5
	// pairs for 16 ratios and the A/A take 7.8 minutes, of 6 would take
	// 9, past 80% of the budget.
	assert.Equal(t, 5, got.Paired.Pairs, "16 ratios and the A/A: pilots of 5 pairs in 10 minutes")
	assert.Equal(t, MaxPairs, got.RepsAuto.Max)
	// make compare-paired's plan: the engine, and wrk's cross-check kept aside.
	mc := p
	mc.Loads = []results.Generator{results.LoadBuiltin}
	mc.Paired = &results.Paired{Pairs: 10, Seed: 1, Check: &results.Check{Load: results.LoadWrk, Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: 1, Duration: 15 * time.Second}}
	fit, err := FitPaired(mc, BudgetOptions{Budget: 11 * time.Minute, Precision: 0.05})
	require.NoError(t, err, "make compare-paired's 11 minutes")
	assert.Equal(t, 5, fit.Paired.Pairs)
	assert.NotNil(t, fit.Paired.Check)
	long, err := FitPaired(p, BudgetOptions{Budget: 30 * time.Minute, Precision: 0.05})
	require.NoError(t, err)
	assert.Equal(t, 6, long.Paired.Pairs, "the pilot stats plans, where the budget holds it")

	assert.Equal(t, 10*time.Minute, got.RepsAuto.Budget)
	_, err = FitPaired(p, BudgetOptions{Budget: 2 * time.Minute, Precision: 0.05})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-budget: 2m0s is too short")
	assert.ErrorIs(t, err, plan.ErrPlan)
	assertSuggestionFits(t, err, func(b time.Duration) error {
		_, err := FitPaired(p, BudgetOptions{Budget: b, Precision: 0.05})
		return err
	})
}

// TestFitPairedOwnWindows: a topology's own windows are its pilots'
// cost, so a budget that holds a duet's pilots on 3 s windows is refused
// once two topologies take 6 s, with the advice of one that fits.
func TestFitPairedOwnWindows(t *testing.T) {
	p := defaultPlan()
	p.Duration, p.Warmup, p.Reps = 3*time.Second, 3*time.Second, 1
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Paired = &results.Paired{Seed: 1, Duet: true}
	fit := func(p results.Plan) func(time.Duration) error {
		return func(b time.Duration) error {
			_, err := FitPaired(p, BudgetOptions{Budget: b, Precision: 0.05})
			return err
		}
	}
	short := fit(p)
	_, err := FitPaired(p, BudgetOptions{Budget: time.Minute, Precision: 0.05})
	require.Error(t, err)
	assertSuggestionFits(t, err, short)
	need := suggested(t, err)

	own := p
	own.Paired = &results.Paired{Seed: 1, Duet: true, Windows: map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second, "nginx-fcgi-unix": 6 * time.Second}}
	_, err = FitPaired(own, BudgetOptions{Budget: need, Precision: 0.05})
	require.Error(t, err, "the 3 s windows' budget cannot hold 6 s pilots of nginx-fcgi-tcp and nginx-fcgi-unix")
	assertSuggestionFits(t, err, fit(own))
	// Two topologies at two GOMAXPROCS, 5 pilot pairs of 3 s more each,
	// over the 80% the pilots may take: the advice is at least that
	// much longer.
	assert.GreaterOrEqual(t, suggested(t, err)-need, time.Duration(float64(2*2*5*3*time.Second)/0.8)-time.Minute)
}

// suggested is the budget a refusal advises.
func suggested(t *testing.T, err error) time.Duration {
	t.Helper()
	m := regexp.MustCompile(`give -budget (\S+) or more`).FindStringSubmatch(err.Error())
	require.NotNil(t, m, err.Error())
	s := m[1]
	if !strings.HasSuffix(s, "s") {
		s += "0s" // FitBudget writes 9m for 9m0s
	}
	d, perr := time.ParseDuration(s)
	require.NoError(t, perr)
	return d
}

// assertSuggestionFits: the budget a refusal suggests fits, and the
// minute before it does not.
func assertSuggestionFits(t *testing.T, err error, fit func(time.Duration) error) {
	t.Helper()
	need := suggested(t, err)
	assert.NoError(t, fit(need), "the suggested %s", need)
	assert.Error(t, fit(need-time.Minute), "a minute less than the suggested %s", need)
}

// pairedPlan is standalone, nginx-http and nginx-fcgi-tcp at GOMAXPROCS
// 1 and 2, three pairs each of 2 s windows.
func pairedPlan() results.Plan {
	return results.Plan{Targets: []string{results.TargetGo}, Topologies: []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}, GOMAXPROCS: []int{1, 2},
		Connections: []int{100}, Loads: []results.Generator{results.LoadWrk}, Reps: 1, Duration: 2 * time.Second, Warmup: time.Second, Threads: 100, Timeout: 2 * time.Second,
		Paired: &results.Paired{Pairs: 3, Seed: 42}}
}

// TestPairsCost: the paired design's pairs cost two windows each with
// their overheads; a duet's, one window a pair and one overhead for all;
// a topology with windows of its own pays its own.
func TestPairsCost(t *testing.T) {
	c := Costs{Cell: 500 * time.Millisecond}
	for _, tc := range []struct {
		name string
		duet bool
		top  string
		n    int
		want time.Duration
	}{
		{"paired, one pair", false, "nginx-http", 1, 2 * (2*time.Second + 500*time.Millisecond)},
		{"paired, six pairs", false, "nginx-http", 6, 6 * 2 * (2*time.Second + 500*time.Millisecond)},
		{"paired, own windows", false, "nginx-fcgi-tcp", 2, 2 * 2 * (6*time.Second + 500*time.Millisecond)},
		{"duet, one pair", true, "nginx-http", 1, 2*time.Second + 500*time.Millisecond},
		{"duet, six pairs", true, "nginx-http", 6, 6*2*time.Second + 500*time.Millisecond},
		{"duet, own windows", true, "nginx-fcgi-tcp", 6, 6*6*time.Second + 500*time.Millisecond},
		{"duet, the A/A", true, "standalone", 6, 6*2*time.Second + 500*time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := results.Plan{Duration: 2 * time.Second, Paired: &results.Paired{Duet: tc.duet, Windows: map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second}}}
			assert.Equal(t, tc.want, PairsCost(p, c, tc.top, tc.n))
		})
	}
}

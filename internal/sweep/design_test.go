package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
)

// fakeDesign hands out its steps in order and logs what the loop asks of
// it; run calls do for each step.
type fakeDesign struct {
	steps     []step
	do        func(i int, st step) error
	log       []string
	announced int
	ran       []step
	stops     int
}

func (d *fakeDesign) announce() { d.announced++; d.log = append(d.log, "announce") }

func (d *fakeDesign) next() (step, bool) {
	d.log = append(d.log, "next")
	if len(d.ran) >= len(d.steps) {
		return step{}, false
	}
	return d.steps[len(d.ran)], true
}

func (d *fakeDesign) run(ctx context.Context, st step) error {
	d.log = append(d.log, "run")
	d.ran = append(d.ran, st)
	if d.do != nil {
		return d.do(len(d.ran)-1, st)
	}
	return nil
}

func (d *fakeDesign) stop() { d.stops++; d.log = append(d.log, "stop") }

// TestOneLoop: the sweep's loop announces the design, runs its steps in
// the order it gives them until it has none, and stops the design's
// servers on every return: at the end, on an error, when the context
// ends (interrupted) and when the budget is spent.
func TestOneLoop(t *testing.T) {
	steps := []step{
		{Block: Block{GOMAXPROCS: 1, Cells: []Cell{{Topology: "standalone", Rep: 1}}}},
		{Block: Block{GOMAXPROCS: 1, Cells: []Cell{{Topology: "nginx-http", Rep: 1}}}, n: 3},
		{Block: Block{GOMAXPROCS: 2, Cells: []Cell{{Topology: "standalone", Rep: 2}}}, spare: true},
	}
	boom := errors.New("boom")
	for _, tt := range []struct {
		name string
		// cancelAt cancels the context during step i; failAt fails it.
		cancelAt, failAt int
		// spent is how much of a 1-minute budget the clock has spent; 0
		// for a sweep without a budget.
		spent       time.Duration
		wantRan     int
		wantErr     error
		interrupted bool
		outOfTime   bool
		wantLog     []string
	}{
		{name: "every step, in order", cancelAt: -1, failAt: -1, wantRan: 3,
			wantLog: []string{"announce", "next", "run", "next", "run", "next", "run", "next", "stop"}},
		{name: "an error ends the loop", cancelAt: -1, failAt: 1, wantRan: 2, wantErr: boom,
			wantLog: []string{"announce", "next", "run", "next", "run", "stop"}},
		{name: "the context ends", cancelAt: 0, failAt: -1, wantRan: 1, interrupted: true,
			wantLog: []string{"announce", "next", "run", "stop"}},
		{name: "within the budget", cancelAt: -1, failAt: -1, spent: 30 * time.Second, wantRan: 3,
			wantLog: []string{"announce", "next", "run", "next", "run", "next", "run", "next", "stop"}},
		{name: "past the budget and its overrun", cancelAt: -1, failAt: -1, spent: 67 * time.Second, wantRan: 0, outOfTime: true,
			wantLog: []string{"announce", "stop"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var progress bytes.Buffer
			s := &sweep{Options: Options{Progress: &progress}}
			if tt.spent > 0 {
				s.plan.RepsAuto = &results.RepsAuto{Max: 10, Within: 0.05, Confidence: 0.95, Budget: time.Minute}
				now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
				s.clock = budgetClock{began: now, now: func() time.Time { return now.Add(tt.spent) }}
			}
			d := &fakeDesign{steps: steps, do: func(i int, st step) error {
				if i == tt.cancelAt {
					cancel()
				}
				if i == tt.failAt {
					return boom
				}
				return nil
			}}
			err := s.runDesign(ctx, d)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantLog, d.log)
			assert.Equal(t, steps[:tt.wantRan], append([]step{}, d.ran...), "the design's steps, as it gave them")
			assert.Equal(t, 1, d.announced)
			assert.Equal(t, 1, d.stops, "the servers the design keeps are stopped once")
			assert.Equal(t, tt.interrupted, s.out.Interrupted)
			assert.Equal(t, tt.outOfTime, s.out.OutOfTime)
			if tt.outOfTime {
				assert.Contains(t, progress.String(), "budget: 1m7s spent of 1m0s; stopping with what is measured")
			}
		})
	}
}

// TestChooseDesign: the plan names its design and stopping rule in one
// place.
func TestChooseDesign(t *testing.T) {
	auto := &results.RepsAuto{Max: 12, Within: 0.05, Confidence: 0.99}
	budget := &results.RepsAuto{Max: 12, Within: 0.05, Confidence: 0.99, Budget: 10 * time.Minute}
	for _, tt := range []struct {
		name  string
		plan  func(p *Plan)
		check func(t *testing.T, d design)
	}{
		{"-reps N: the planned rounds", func(p *Plan) {}, func(t *testing.T, d design) {
			require.IsType(t, &rounds{}, d)
			assert.Equal(t, moreNone, d.(*rounds).more)
		}},
		{"-reps auto: rounds until they converge", func(p *Plan) { p.RepsAuto = auto }, func(t *testing.T, d design) {
			require.IsType(t, &rounds{}, d)
			assert.Equal(t, moreConverge, d.(*rounds).more)
		}},
		{"-budget: rounds that fit", func(p *Plan) { p.RepsAuto = budget }, func(t *testing.T, d design) {
			require.IsType(t, &rounds{}, d)
			assert.Equal(t, moreBudget, d.(*rounds).more)
		}},
		{"-design paired", func(p *Plan) { p.Paired = &results.Paired{Pairs: 3} }, func(t *testing.T, d design) {
			require.IsType(t, &paired{}, d)
			assert.False(t, d.(*paired).budget)
		}},
		{"-design paired -budget", func(p *Plan) { p.Paired, p.RepsAuto = &results.Paired{Pairs: 6}, budget }, func(t *testing.T, d design) {
			require.IsType(t, &paired{}, d)
			assert.True(t, d.(*paired).budget)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := smallPlan("standalone", "nginx-http")
			tt.plan(&p)
			s := &sweep{plan: p}
			tt.check(t, s.chooseDesign())
			assert.Equal(t, p.RepsAuto != nil || p.Paired != nil, s.ratios, "the progress notes the ratios a design stops by or pairs")
		})
	}
}

// TestRoundsKeepServersForABudget: a budget's rounds run on the servers of
// the round before while they stay in its block, each cell warmed once a
// start; a planned round starts and stops servers of its own.
func TestRoundsKeepServersForABudget(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	p.RepsAuto = &results.RepsAuto{Max: 12, Within: 0.05, Confidence: 0.99, Budget: time.Hour}
	f := newFakeSweep(t, p)
	blocks := f.plan.Blocks()
	one, two := blocks[0], blocks[1]
	r := &rounds{s: f.sweep, more: moreBudget, start: time.Now()}
	ctx := context.Background()
	for _, st := range []step{
		{Block: one},
		{Block: Block{GOMAXPROCS: 1, Target: one.Target, Cells: one.Cells[:2]}, spare: true},
		{Block: Block{GOMAXPROCS: 1, Target: one.Target, Cells: one.Cells[2:]}, spare: true},
		{Block: Block{GOMAXPROCS: 2, Target: two.Target, Cells: two.Cells[:1]}, spare: true},
	} {
		require.NoError(t, r.run(ctx, st))
	}
	require.Len(t, f.started, 3, "the planned round's, then one a block for the budget's")
	assert.Equal(t, 1, f.started[0].stopped, "the planned round stops its servers")
	assert.Equal(t, 1, f.started[1].stopped, "stopped when the budget moved to another block")
	assert.Zero(t, f.started[2].stopped, "kept for the next round")
	r.stop()
	assert.Equal(t, 1, f.started[2].stopped)
	r.stop()
	assert.Equal(t, 1, f.started[2].stopped, "stopped once")
	// Rep 1 and 2 of a topology are one cell to warm: once a start.
	assert.Len(t, f.gen.warmed, 2+2+1)
	assert.Equal(t, 2*len(one.Cells)+1, f.out.Measured)
	assert.Equal(t, 3, strings.Count(f.progress.String(), "left; next GOMAXPROCS="), "each budget's round says what is left")
}

// pairRuns are n complete pairs of top at GOMAXPROCS g, standalone's
// window first, as the paired design records them.
func pairRuns(top string, g, n int) []results.Run {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	var runs []results.Run
	for i := 1; i <= n; i++ {
		mk := func(t string, rep int, rate float64, first bool) results.Run {
			return results.Run{
				Cell:  Cell{Target: "go", Topology: t, GOMAXPROCS: g, Connections: 100, Load: results.LoadWrk, Rep: rep},
				Start: t0.Add(time.Duration(2*i) * time.Second), Wall: 2 * time.Second,
				Figures: &results.Figures{Requests: 100, ReqPerSec: rate},
				Pair:    &results.Pair{With: top, Index: i, Seq: i, First: first},
			}
		}
		runs = append(runs, mk("standalone", i, 1000, true), mk(top, i, 400, false))
	}
	return runs
}

// TestPairedSteps: the paired design's steps are each block's topologies
// with the pairs they still need, the A/A in the first block only, then
// the cross-check's cells not measured yet, then nothing.
func TestPairedSteps(t *testing.T) {
	check := &results.Check{Load: results.LoadWrk, Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: 1, Duration: 15 * time.Second}
	for _, tt := range []struct {
		name  string
		check *results.Check
		runs  []results.Run
		done  []string
		want  []string
	}{
		{name: "every topology's pairs, the A/A first", want: []string{
			"go/1 standalone x3", "go/1 nginx-http x3", "go/1 nginx-fcgi-tcp x3",
			"go/2 nginx-http x3", "go/2 nginx-fcgi-tcp x3"}},
		{name: "the pairs recorded are not run again", runs: append(pairRuns("nginx-http", 1, 2), pairRuns("nginx-fcgi-tcp", 2, 3)...), want: []string{
			"go/1 standalone x3", "go/1 nginx-http x1", "go/1 nginx-fcgi-tcp x3", "go/2 nginx-http x3"}},
		{name: "then the cross-check, a round of its cells", check: check, want: []string{
			"go/1 standalone x3", "go/1 nginx-http x3", "go/1 nginx-fcgi-tcp x3",
			"go/2 nginx-http x3", "go/2 nginx-fcgi-tcp x3", "go/1 standalone nginx-http x0"}},
		{name: "a cross-check measured already is not", check: check, done: []string{"standalone", "nginx-http"}, want: []string{
			"go/1 standalone x3", "go/1 nginx-http x3", "go/1 nginx-fcgi-tcp x3",
			"go/2 nginx-http x3", "go/2 nginx-fcgi-tcp x3"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := pairedPlan()
			p.Paired.Check = tt.check
			var progress bytes.Buffer
			s := &sweep{Options: Options{Progress: &progress}, plan: p, runs: tt.runs, done: map[string]bool{}}
			for _, c := range p.CheckCells() {
				if slices.Contains(tt.done, c.Topology) {
					s.done[c.Key()] = true
				}
			}
			d := &paired{s: s}
			d.announce()
			var got []string
			for {
				st, ok := d.next()
				if !ok {
					break
				}
				var tops []string
				for _, c := range st.Cells {
					tops = append(tops, c.Topology)
				}
				got = append(got, fmt.Sprintf("%s/%d %s x%d", st.Target, st.GOMAXPROCS, strings.Join(tops, " "), st.n))
				assert.False(t, st.spare, "no budget: nothing spare")
			}
			assert.Equal(t, tt.want, got)
			_, ok := d.next()
			assert.False(t, ok, "done stays done")
			assert.Contains(t, progress.String(), "paired: ")
		})
	}
}

// TestRoundsSteps: the rounds design's steps are the plan's blocks, then,
// under -reps auto, a round at a time of each block whose ratios are
// wider than the bound, up to the most rounds, block by block.
func TestRoundsSteps(t *testing.T) {
	tight := func(rep int) float64 { return 0.5 + 0.001*float64(rep%3) }
	wide := func(rep int) float64 { return 0.4 + 0.05*float64(rep%3) }
	for _, tt := range []struct {
		name  string
		reps  string
		ratio func(rep int) float64
		want  []string
	}{
		{"-reps 2: a step a block", "2", wide, []string{"g1 reps [1 2]", "g2 reps [1 2]"}},
		{"-reps auto, tight: the first rounds only", "auto:8", tight, []string{"g1 reps [1 2 3 4 5]", "g2 reps [1 2 3 4 5]"}},
		{"-reps auto, wide: a round at a time up to the most", "auto:8", wide, []string{
			"g1 reps [1 2 3 4 5]", "g2 reps [1 2 3 4 5]", "g1 reps [6]", "g1 reps [7]", "g1 reps [8]", "g2 reps [6]", "g2 reps [7]", "g2 reps [8]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := smallPlan("standalone", "nginx-http")
			var err error
			p.Reps, p.RepsAuto, err = plan.ParseReps(tt.reps)
			require.NoError(t, err)
			var progress bytes.Buffer
			s := &sweep{Options: Options{Progress: &progress}, plan: p, done: map[string]bool{}}
			d := s.chooseDesign()
			d.announce()
			var got []string
			for len(got) < 10 {
				st, ok := d.next()
				if !ok {
					break
				}
				var reps []int
				for _, c := range st.Cells {
					if !slices.Contains(reps, c.Rep) {
						reps = append(reps, c.Rep)
					}
					rate := 1000.0
					if c.Topology == "nginx-http" {
						rate *= tt.ratio(c.Rep)
					}
					s.runs = append(s.runs, results.Run{Cell: c, Figures: &results.Figures{ReqPerSec: rate, Requests: int64(rate)}})
				}
				got = append(got, fmt.Sprintf("g%d reps %v", st.GOMAXPROCS, reps))
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, len(s.runs), s.out.Total, "every cell counted")
		})
	}
}

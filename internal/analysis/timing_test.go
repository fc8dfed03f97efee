package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

func TestSpent(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	env := results.Env{Start: t0, Spent: 60 * time.Second, Plan: results.Plan{Duration: 3 * time.Second}}
	run := func(at time.Duration, warm, settle, startup, wall time.Duration, failed bool) results.Run {
		r := results.Run{Start: t0.Add(at), Warmup: warm, Settle: &results.Settle{Waited: settle}, Wall: wall,
			Figures: &results.Figures{Requests: 1, Startup: startup}}
		if failed {
			r.Error = "boom"
		}
		return r
	}
	tests := []struct {
		name string
		env  results.Env
		runs []results.Run
		want TimeSpent
		ok   bool
	}{
		{"two runs", env, []results.Run{
			run(12*time.Second, 1500*time.Millisecond, 500*time.Millisecond, 300*time.Millisecond, 3500*time.Millisecond, false),
			run(20*time.Second, 0, time.Second, 200*time.Millisecond, 3400*time.Millisecond, true),
		}, TimeSpent{Total: time.Minute, Before: 10 * time.Second, Settle: 1500 * time.Millisecond, Warmup: 1500 * time.Millisecond,
			Startup: 500 * time.Millisecond, Measured: 3 * time.Second, Exit: 3400 * time.Millisecond,
			Other: 60*time.Second - 10*time.Second - 1500*time.Millisecond - 1500*time.Millisecond - 500*time.Millisecond - 3*time.Second - 3400*time.Millisecond, Runs: 2}, true},
		{"end instead of spent", results.Env{Start: t0, End: t0.Add(time.Minute), Plan: env.Plan},
			[]results.Run{run(5*time.Second, 0, 0, 0, 3*time.Second, false)},
			TimeSpent{Total: time.Minute, Before: 5 * time.Second, Measured: 3 * time.Second, Other: 52 * time.Second, Runs: 1}, true},
		{"a paired window: lead and drain apart", results.Env{Start: t0, Spent: 10 * time.Second, Plan: results.Plan{Duration: 2 * time.Second}},
			[]results.Run{{Start: t0.Add(4 * time.Second), Wall: 3500 * time.Millisecond, Lead: time.Second, Drain: 400 * time.Millisecond,
				Connect: time.Second, Figures: &results.Figures{Requests: 1}}},
			TimeSpent{Total: 10 * time.Second, Before: 3 * time.Second, Connect: time.Second, Measured: 2 * time.Second, Lead: time.Second,
				Drain: 400 * time.Millisecond, Exit: 100 * time.Millisecond, Other: 2500 * time.Millisecond, Runs: 1}, true},
		{"a duet's pair: one span, each pool's opening", results.Env{Start: t0, Spent: 10 * time.Second, Plan: results.Plan{Duration: 2 * time.Second, Paired: &results.Paired{Duet: true}}},
			[]results.Run{
				{Cell: results.Cell{Topology: Standalone}, Start: t0.Add(4 * time.Second), Wall: 3 * time.Second, Lead: time.Second, Connect: time.Second,
					Pair: &results.Pair{With: "nginx-http", Index: 1}, Figures: &results.Figures{Requests: 1}},
				{Cell: results.Cell{Topology: "nginx-http"}, Start: t0.Add(4 * time.Second), Wall: 3 * time.Second, Lead: time.Second, Connect: time.Second,
					Pair: &results.Pair{With: "nginx-http", Index: 1}, Figures: &results.Figures{Requests: 1}},
			},
			TimeSpent{Total: 10 * time.Second, Before: 3 * time.Second, Connect: 2 * time.Second, Measured: 2 * time.Second, Lead: time.Second,
				Other: 2 * time.Second, Runs: 2}, true},
		{"a duet's pair on windows of its topology's own", results.Env{Start: t0, Spent: 14 * time.Second, Plan: results.Plan{Duration: 2 * time.Second,
			Paired: &results.Paired{Duet: true, Windows: map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second}}}},
			[]results.Run{
				{Cell: results.Cell{Topology: Standalone}, Start: t0.Add(4 * time.Second), Wall: 7 * time.Second, Lead: time.Second,
					Pair: &results.Pair{With: "nginx-fcgi-tcp", Index: 1}, Figures: &results.Figures{Requests: 1}},
				{Cell: results.Cell{Topology: "nginx-fcgi-tcp"}, Start: t0.Add(4 * time.Second), Wall: 7 * time.Second, Lead: time.Second,
					Pair: &results.Pair{With: "nginx-fcgi-tcp", Index: 1}, Figures: &results.Figures{Requests: 1}},
			},
			TimeSpent{Total: 14 * time.Second, Before: 4 * time.Second, Measured: 6 * time.Second, Lead: time.Second,
				Other: 3 * time.Second, Runs: 2}, true},
		{"still running", results.Env{Start: t0}, []results.Run{run(5*time.Second, 0, 0, 0, 3*time.Second, false)}, TimeSpent{}, false},
		{"records without times", env, []results.Run{{Figures: &results.Figures{Requests: 1}}}, TimeSpent{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Spent(tt.env, tt.runs)
			assert.Equal(t, tt.ok, ok)
			if tt.ok {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/results"
)

// TestKeyNames covers every dimension alone: how a group is labelled
// (headings, legends, warnings), how a row is named in a comparison
// (Path), and its values in summary.csv and bench.txt (Dims).
func TestKeyNames(t *testing.T) {
	base := wrkGroup(8)
	with := func(f func(*Group)) Group {
		g := base
		f(&g)
		return g
	}
	tests := []struct {
		name   string
		group  Group
		label  string // Group.String
		path   string // Key.Path with topology nginx-http
		values []string
	}{
		{"the 2013 load", base, "GOMAXPROCS=8", "nginx-http/gomaxprocs=8", []string{"go", "8", "5000", "wrk", "", "", "", "", "", ""}},
		{"another target", with(func(g *Group) { g.Target = "erlang" }), "target=erlang GOMAXPROCS=8",
			"nginx-http/gomaxprocs=8/target=erlang", []string{"erlang", "8", "5000", "wrk", "", "", "", "", "", ""}},
		{"other connections", with(func(g *Group) { g.Connections = 30 }), "GOMAXPROCS=8 connections=30",
			"nginx-http/gomaxprocs=8/connections=30", []string{"go", "8", "30", "wrk", "", "", "", "", "", ""}},
		{"connections unknown (an old record)", with(func(g *Group) { g.Connections = 0 }), "GOMAXPROCS=8",
			"nginx-http/gomaxprocs=8", []string{"go", "8", "", "wrk", "", "", "", "", "", ""}},
		{"the engine", with(func(g *Group) { g.Load = results.LoadBuiltin }), "GOMAXPROCS=8 load=builtin",
			"nginx-http/gomaxprocs=8/load=builtin", []string{"go", "8", "5000", "builtin", "", "", "", "", "", ""}},
		{"a named schedule", with(func(g *Group) { g.Schedule = results.Schedule{Name: "slow-requests", Rate: 1000, Wait: time.Second} }),
			"GOMAXPROCS=8 scenario=slow-requests rate=1000 wait=1s",
			"nginx-http/gomaxprocs=8/scenario=slow-requests/rate=1000/wait=1s", []string{"go", "8", "5000", "wrk", "", "slow-requests", "1000", "", "1s", ""}},
		{"a fractional rate", with(func(g *Group) { g.Schedule.Rate = 0.25 }), "GOMAXPROCS=8 rate=0.25",
			"nginx-http/gomaxprocs=8/rate=0.25", []string{"go", "8", "5000", "wrk", "", "", "0.25", "", "", ""}},
		{"handler work", with(func(g *Group) { g.Schedule.Work = 50 * time.Microsecond }), "GOMAXPROCS=8 work=50µs",
			"nginx-http/gomaxprocs=8/work=50µs", []string{"go", "8", "5000", "wrk", "", "", "", "", "", "50µs"}},
		{"a wait alone", with(func(g *Group) { g.Schedule.Wait = 100 * time.Millisecond }), "GOMAXPROCS=8 wait=100ms",
			"nginx-http/gomaxprocs=8/wait=100ms", []string{"go", "8", "5000", "wrk", "", "", "", "", "100ms", ""}},
		{"an upstream keepalive swept", with(func(g *Group) { g.Keepalive = results.KeepaliveAuto }), "GOMAXPROCS=8 upstream keepalive=auto",
			"nginx-http/gomaxprocs=8/upstream_keepalive=auto", []string{"go", "8", "5000", "wrk", "auto", "", "", "", "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.label, tt.group.String())
			k := Key{tt.group, "nginx-http"}
			assert.Equal(t, tt.path, k.Path())
			assert.Equal(t, tt.label+" nginx-http", k.String())
			var names, values []string
			for _, d := range tt.group.Dims() {
				names, values = append(names, d.Name), append(values, d.Value)
			}
			assert.Equal(t, []string{"target", "gomaxprocs", "connections", "load", "upstream_keepalive", "scenario", "rate", "fraction", "wait", "work"}, names)
			assert.Equal(t, tt.values, values)
		})
	}
}

// TestKeyOf places runs, old and new, in their cells.
func TestKeyOf(t *testing.T) {
	one := results.Plan{Connections: []int{5000}}
	many := results.Plan{Connections: []int{30, 5000}}
	cell := results.Cell{Topology: "nginx-http", GOMAXPROCS: 1, Rep: 3}
	assert.Equal(t, Key{wrkGroup(1), "nginx-http"}, KeyOf(one, results.Run{Cell: cell}),
		"no target, load or connections recorded: Go, wrk, the plan's one -c")
	g := wrkGroup(1)
	g.Connections = 0
	assert.Equal(t, Key{g, "nginx-http"}, KeyOf(many, results.Run{Cell: cell}), "which of several: unknown")
	c := cell
	c.Connections, c.Target, c.Load = 30, "erlang", results.LoadBuiltin
	assert.Equal(t, Key{Group{Target: "erlang", GOMAXPROCS: 1, Connections: 30, Load: results.LoadBuiltin}, "nginx-http"}, KeyOf(one, results.Run{Cell: c}))
	r1, r2 := cell, cell
	r2.Rep = 7
	assert.Equal(t, KeyOf(one, results.Run{Cell: r1}), KeyOf(one, results.Run{Cell: r2}), "repetitions share a key")
}

// TestCompareGroups: Go's tables first, then the other targets by name;
// within a target by GOMAXPROCS, connections, load (by name: builtin
// before wrk), rate, wait, scenario name.
func TestCompareGroups(t *testing.T) {
	g := func(f func(*Group)) Group {
		x := wrkGroup(1)
		f(&x)
		return x
	}
	ordered := []Group{
		g(func(x *Group) { x.Load = results.LoadBuiltin }),
		g(func(x *Group) { x.Load, x.Schedule.Name = results.LoadBuiltin, "a" }),
		g(func(x *Group) { x.Load, x.Schedule.Rate = results.LoadBuiltin, 10 }),
		g(func(x *Group) { x.Load, x.Schedule.Rate, x.Schedule.Wait = results.LoadBuiltin, 10, time.Second }),
		g(func(*Group) {}),
		g(func(x *Group) { x.Connections = 6000 }),
		g(func(x *Group) { x.GOMAXPROCS = 2 }),
		g(func(x *Group) { x.GOMAXPROCS = 10 }),
		g(func(x *Group) { x.Target = "erlang" }),
		g(func(x *Group) { x.Target = "java-pool" }),
	}
	for i := range ordered {
		for j := range ordered {
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			assert.Equal(t, want, CompareGroups(ordered[i], ordered[j]), "%v vs %v", ordered[i], ordered[j])
		}
	}
	assert.Negative(t, CompareGroups(g(func(x *Group) { x.Target = "" }), g(func(x *Group) { x.Target = "erlang" })), "an empty target is Go")
}

func TestPlanGroups(t *testing.T) {
	p := results.Plan{Targets: []string{"erlang", "go"}, Topologies: []string{"standalone", "nginx-fcgi-tcp"}, GOMAXPROCS: []int{2, 1},
		Connections: []int{100, 30}, Loads: []results.Generator{results.LoadBuiltin}, Schedules: []results.Schedule{{}, {Rate: 5}}, Reps: 2}
	var got []string
	for _, g := range planGroups(p) {
		got = append(got, g.String())
	}
	assert.Equal(t, []string{
		"target=erlang GOMAXPROCS=2 connections=100 load=builtin",
		"target=erlang GOMAXPROCS=2 connections=100 load=builtin rate=5",
		"target=erlang GOMAXPROCS=2 connections=30 load=builtin",
		"target=erlang GOMAXPROCS=2 connections=30 load=builtin rate=5",
		"target=erlang GOMAXPROCS=1 connections=100 load=builtin",
		"target=erlang GOMAXPROCS=1 connections=100 load=builtin rate=5",
		"target=erlang GOMAXPROCS=1 connections=30 load=builtin",
		"target=erlang GOMAXPROCS=1 connections=30 load=builtin rate=5",
		"GOMAXPROCS=2 connections=100 load=builtin",
		"GOMAXPROCS=2 connections=100 load=builtin rate=5",
		"GOMAXPROCS=2 connections=30 load=builtin",
		"GOMAXPROCS=2 connections=30 load=builtin rate=5",
		"GOMAXPROCS=1 connections=100 load=builtin",
		"GOMAXPROCS=1 connections=100 load=builtin rate=5",
		"GOMAXPROCS=1 connections=30 load=builtin",
		"GOMAXPROCS=1 connections=30 load=builtin rate=5",
	}, got, "the plan's order, each group once")
	assert.Empty(t, planGroups(results.Plan{}))
}

func TestMinimumRuns(t *testing.T) {
	// The smallest counts with a finite interval, and one fewer without.
	n := MinRounds()
	xs := func(n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(100 + i)
		}
		return out
	}
	assert.True(t, intervalOf(xs(n)).Known())
	assert.False(t, intervalOf(xs(n-1)).Known())
	m := MinRatioRuns()
	assert.True(t, RatioOf(xs(m), xs(m)).Known())
	assert.False(t, RatioOf(xs(m-1), xs(m-1)).Known())
	assert.Less(t, m, n, "a ratio needs fewer runs than a median's interval")
}

func TestIntervalHalfWidth(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tt := range []struct {
		name string
		iv   Interval
		want float64
	}{
		{"symmetric", Interval{Center: 100, Lo: f(95), Hi: f(105)}, 0.05},
		{"the larger side", Interval{Center: 100, Lo: f(98), Hi: f(110)}, 0.10},
		{"unknown", Interval{Center: 100}, posInf},
		{"zero center", Interval{Center: 0, Lo: f(-1), Hi: f(1)}, posInf},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if math.IsInf(tt.want, 1) {
				assert.True(t, math.IsInf(tt.iv.HalfWidth(), 1))
				return
			}
			assert.InDelta(t, tt.want, tt.iv.HalfWidth(), 1e-12)
		})
	}
	iv := Interval{Center: 1, Lo: f(0.9), Hi: f(1.1)}
	assert.True(t, iv.Excludes(1.2))
	assert.True(t, iv.Excludes(0.8))
	assert.False(t, iv.Excludes(1))
	assert.False(t, iv.Excludes(1.1), "the bounds are inside")
	assert.False(t, Interval{Center: 1}.Excludes(100), "an unknown interval excludes nothing")
	st := Stat{Median: 7, CILo: f(6), CIHi: f(8)}
	assert.Equal(t, Interval{Center: 7, Lo: f(6), Hi: f(8), N: 6}, st.Interval(6))
}

var posInf = math.Inf(1)

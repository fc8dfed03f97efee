package plan

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// TestParseLatencyRate: auto, off and a positive finite rate are
// -latency-rate's values; anything else is refused naming the flag.
func TestParseLatencyRate(t *testing.T) {
	auto := &results.Latency{Fraction: LatencyFraction, Rounds: LatencyRounds, Duration: LatencyDuration}
	at := func(r float64) *results.Latency {
		return &results.Latency{Rate: r, Rounds: LatencyRounds, Duration: LatencyDuration}
	}
	for _, tt := range []struct {
		in   string
		want *results.Latency
	}{
		{"auto", auto},
		{"off", nil},
		{"1500", at(1500)},
		{"0.5", at(0.5)},
		{"2e3", at(2000)},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseLatencyRate(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	for _, in := range []string{"0", "-0", "-1", "NaN", "Inf", "+Inf", "-Inf", "fast", "", "Auto", "1000rps"} {
		t.Run("refused "+in, func(t *testing.T) {
			got, err := ParseLatencyRate(in)
			assert.Nil(t, got)
			requireFieldError(t, err, LatencyRate, "want auto, a rate in req/s or off")
		})
	}
}

// TestLatencyLabel: the label is the flag value that gives the phase
// back, so a resumed sweep and the report name it as the user did.
func TestLatencyLabel(t *testing.T) {
	for _, tt := range []struct{ in, label string }{
		{"auto", "auto"},
		{"off", "off"},
		{"1500", "1500"},
		{"0.25", "0.25"},
		{"2500.5", "2500.5"},
		{"2e3", "2000"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			l, err := ParseLatencyRate(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.label, LatencyLabel(l))
			back, err := ParseLatencyRate(LatencyLabel(l))
			require.NoError(t, err)
			assert.Equal(t, l, back, "the label parses to the same phase")
		})
	}
}

// latencyPlan is a paired plan on the built-in engine with the default
// latency phase.
func latencyPlan() Plan {
	p := pairedPlan()
	p.Loads = []results.Generator{results.LoadBuiltin}
	p.Paired.Latency = &results.Latency{Fraction: LatencyFraction, Rounds: LatencyRounds, Duration: LatencyDuration}
	return p
}

// TestCheckLatency: each rule of the latency phase alone is refused
// through Check, naming -latency-rate.
func TestCheckLatency(t *testing.T) {
	ok := map[string]func(*results.Latency){
		"auto":                  func(*results.Latency) {},
		"a rate":                func(l *results.Latency) { l.Fraction, l.Rate = 0, 800 },
		"the whole capacity":    func(l *results.Latency) { l.Fraction = 1 },
		"one round of a minute": func(l *results.Latency) { l.Rounds, l.Duration = 1, time.Minute },
	}
	for name, change := range ok {
		t.Run(name, func(t *testing.T) {
			p := latencyPlan()
			change(p.Paired.Latency)
			_, err := p.Check(Where{})
			require.NoError(t, err)
		})
	}
	off := latencyPlan()
	off.Loads, off.Paired.Latency = nil, nil
	_, err := off.Check(Where{})
	require.NoError(t, err, "no phase on wrk")

	tests := []struct {
		name   string
		change func(*Plan, *results.Latency)
		want   string
	}{
		{"on wrk", func(p *Plan, _ *results.Latency) { p.Loads = []results.Generator{results.LoadWrk} }, "needs -load builtin, whose engine runs open loop"},
		{"on the default load", func(p *Plan, _ *results.Latency) { p.Loads = nil }, "needs -load builtin"},
		{"a rate and a fraction", func(_ *Plan, l *results.Latency) { l.Rate = 800 }, "give a rate or a fraction of the capacity, one of them"},
		{"neither", func(_ *Plan, l *results.Latency) { l.Fraction = 0 }, "one of them"},
		{"a negative rate alone", func(_ *Plan, l *results.Latency) { l.Fraction, l.Rate = 0, -1 }, "one of them"},
		{"a fraction past 1", func(_ *Plan, l *results.Latency) { l.Fraction = 1.5 }, "a rate of 0 or a fraction of 1.5, want a positive rate or a fraction at most 1"},
		{"a negative fraction", func(_ *Plan, l *results.Latency) { l.Fraction, l.Rate = -0.5, 800 }, "a fraction of -0.5, want a positive rate"},
		{"a negative rate", func(_ *Plan, l *results.Latency) { l.Rate = -1 }, "a rate of -1 or"},
		{"an infinite rate", func(_ *Plan, l *results.Latency) { l.Fraction, l.Rate = 0, math.Inf(1) }, "a rate of +Inf or"},
		{"a rate not a number", func(_ *Plan, l *results.Latency) { l.Rate = math.NaN() }, "a rate of NaN or"},
		{"no rounds", func(_ *Plan, l *results.Latency) { l.Rounds = 0 }, "0 rounds, want at least 1"},
		{"negative rounds", func(_ *Plan, l *results.Latency) { l.Rounds = -2 }, "-2 rounds, want at least 1"},
		{"no duration", func(_ *Plan, l *results.Latency) { l.Duration = 0 }, "runs of 0s, want whole seconds"},
		{"sub-second runs", func(_ *Plan, l *results.Latency) { l.Duration = 500 * time.Millisecond }, "runs of 500ms, want whole seconds"},
		{"part seconds", func(_ *Plan, l *results.Latency) { l.Duration = 1500 * time.Millisecond }, "runs of 1.5s, want whole seconds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := latencyPlan()
			tt.change(&p, p.Paired.Latency)
			_, err := p.Check(Where{})
			requireFieldError(t, err, LatencyRate, tt.want)
		})
	}
}

// TestLatencyPaths: every path with Go behind it beside standalone, in
// the plan's order; the ceilings and standalone itself are left out.
func TestLatencyPaths(t *testing.T) {
	for _, tt := range []struct {
		name string
		tops []string
		want []string
	}{
		{"plan order", []string{"nginx-return", "nginx-fcgi-tcp", "standalone", "nginx-static", "nginx-http"}, []string{"nginx-fcgi-tcp", "nginx-http"}},
		{"standalone alone", []string{"standalone"}, nil},
		{"standalone and the ceilings", []string{"standalone", "nginx-return", "nginx-static"}, nil},
		{"an unknown name", []string{"standalone", "nginx-php", "nginx-http"}, []string{"nginx-http"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := latencyPlan()
			p.Topologies = tt.tops
			assert.Equal(t, tt.want, p.LatencyPaths())
		})
	}
	var all []string
	for _, name := range topology.Names() {
		if tp, _ := topology.Lookup(name); !tp.Reference && name != topology.Standalone {
			all = append(all, name)
		}
	}
	p := latencyPlan()
	p.Topologies = topology.Names()
	assert.Equal(t, all, p.LatencyPaths(), "every topology")
}

// TestLatencyCells: each round runs standalone, then each path, at the
// phase's schedule on the block's first cell, each run numbered by its
// round; only the blocks at the first GOMAXPROCS run it.
func TestLatencyCells(t *testing.T) {
	p := latencyPlan()
	p.Topologies = []string{"standalone", "nginx-return", "nginx-http", "nginx-fcgi-tcp"}
	p.Paired.Latency.Rounds = 2
	first := results.Cell{Target: "go", Topology: "nginx-http", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin, Rep: 7}
	b := results.Block{Target: "go", GOMAXPROCS: 1, Cells: []results.Cell{first, {Topology: "standalone", GOMAXPROCS: 1, Rep: 3}}}
	cells := p.LatencyCells(b)

	type run struct {
		top string
		rep int
	}
	var got []run
	keys := map[string]bool{}
	for _, c := range cells {
		got = append(got, run{c.Topology, c.Rep})
		assert.Equal(t, results.Schedule{Fraction: LatencyFraction}, c.Schedule, "%s: the phase's schedule", c.Key())
		assert.True(t, p.LatencyRun(c), c.Key())
		assert.Equal(t, LatencyDuration, p.Measured(c), c.Key())
		assert.Equal(t, first.Target, c.Target)
		assert.Equal(t, first.GOMAXPROCS, c.GOMAXPROCS)
		assert.Equal(t, first.Connections, c.Connections)
		assert.Equal(t, first.Load, c.Load)
		assert.False(t, keys[c.Key()], "one record a run: %s", c.Key())
		keys[c.Key()] = true
	}
	assert.Equal(t, []run{
		{"standalone", 1}, {"nginx-http", 1}, {"nginx-fcgi-tcp", 1},
		{"standalone", 2}, {"nginx-http", 2}, {"nginx-fcgi-tcp", 2},
	}, got)
	assert.Equal(t, 7, b.Cells[0].Rep, "the block's cells are left as they were")

	rate := latencyPlan()
	rate.Paired.Latency.Fraction, rate.Paired.Latency.Rate = 0, 800
	for _, c := range rate.LatencyCells(b) {
		assert.Equal(t, results.Schedule{Rate: 800}, c.Schedule)
	}

	t.Run("nil", func(t *testing.T) {
		off := latencyPlan()
		off.Paired.Latency = nil
		assert.Nil(t, off.LatencyCells(b), "without a latency phase")
		rounds := latencyPlan()
		rounds.Paired = nil
		assert.Nil(t, rounds.LatencyCells(b), "without the paired design")
		assert.Nil(t, latencyPlan().LatencyCells(results.Block{Target: "go", GOMAXPROCS: 1}), "an empty block")
		later := b
		later.GOMAXPROCS, later.Cells = 2, []results.Cell{{Target: "go", Topology: "nginx-http", GOMAXPROCS: 2}}
		assert.Nil(t, latencyPlan().LatencyCells(later), "a block past the first GOMAXPROCS")
		ceilings := latencyPlan()
		ceilings.Topologies = []string{"standalone", "nginx-return"}
		assert.Nil(t, ceilings.LatencyCells(b), "no path with Go behind it")
	})
}

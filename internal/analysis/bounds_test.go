package analysis

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
)

func TestParseBound(t *testing.T) {
	for _, tt := range []struct {
		text string
		want Bound
	}{
		{"nginx-http ratio < 0.35", Bound{Topology: "nginx-http", Figure: "ratio", Op: Below, Value: 0.35}},
		{"nginx-http ratio<0.35", Bound{Topology: "nginx-http", Figure: "ratio", Op: Below, Value: 0.35}},
		{"  nginx-http  nginx-us >= 40us ", Bound{Topology: "nginx-http", Figure: "nginx-us", Op: AtLeast, Value: 40}},
		{"nginx-http nginx-us > 40", Bound{Topology: "nginx-http", Figure: "nginx-us", Op: Above, Value: 40}},
		{"nginx-fcgi-unix backend-us <= 12.5µs", Bound{Topology: "nginx-fcgi-unix", Figure: "backend-us", Op: AtMost, Value: 12.5}},
		{"standalone req/s < 30000", Bound{Topology: "standalone", Figure: "req/s", Op: Below, Value: 30000}},
		{"nginx-http p99 > 2ms", Bound{Topology: "nginx-http", Figure: "p99", Op: Above, Value: float64(2 * time.Millisecond)}},
		{"nginx-http added-p99 > 500us", Bound{Topology: "nginx-http", Figure: "added-p99", Op: Above, Value: float64(500 * time.Microsecond)}},
		{"nginx-http@GOMAXPROCS=1 p50 > 1s", Bound{Topology: "nginx-http", Select: []Selector{{"GOMAXPROCS", "1"}}, Figure: "p50", Op: Above, Value: float64(time.Second)}},
		{"nginx-http ratio < 0.35 @gomaxprocs=8,connections=1000", Bound{Topology: "nginx-http", Select: []Selector{{"gomaxprocs", "8"}, {"connections", "1000"}}, Figure: "ratio", Op: Below, Value: 0.35}},
	} {
		t.Run(tt.text, func(t *testing.T) {
			got, err := ParseBound(tt.text)
			require.NoError(t, err)
			tt.want.Text = tt.text
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseBoundBad(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"nginx-http ratio 0.35", "no comparison: want TOPOLOGY FIGURE OP VALUE"},
		{"nginx-http ratio = 0.35", "no comparison"},
		{"ratio < 0.35", "want TOPOLOGY FIGURE before <, got 1 words"},
		{"nginx-http ratio extra < 0.35", "got 3 words"},
		{"nginx-http ratio <", "want one VALUE after <, got 0 words"},
		{"nginx-http ratio < 0.35 0.4", "want one VALUE after <, got 2 words"},
		{"nginx-htp ratio < 0.35", `unknown topology "nginx-htp"`},
		{"nginx-http speed < 0.35", `unknown figure "speed" (known: ratio, req/s, nginx-us, backend-us, servers-us, p50, p99, added-p99)`},
		{"nginx-http ratio < abc", `ratio: "abc" is not a number`},
		{"nginx-http ratio < NaN", `ratio: "NaN" is not a number`},
		{"nginx-http nginx-us > 40ms", `nginx-us: "40ms" is not a number`},
		{"nginx-http p99 > 2", `p99: "2" is not a duration such as 2ms`},
		{"nginx-http@procs=1 p99 > 2ms", `@procs=1: unknown dimension "procs"`},
		{"nginx-http@gomaxprocs p99 > 2ms", "@gomaxprocs: want DIM=VALUE"},
		{"nginx-http ratio < 0.35 @", "@: want DIM=VALUE"},
	} {
		t.Run(tt.text, func(t *testing.T) {
			_, err := ParseBound(tt.text)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ErrBound))
			assert.Contains(t, err.Error(), `"`+tt.text+`": `, "the error names the bound")
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestCheck judges bounds on the fixture (three runs a cell: no
// intervals, the point decides) and the isolated one (six runs: the
// interval decides), whose figures summary_test checks.
func TestCheck(t *testing.T) {
	few := Summarize(analysistest.Fixture(t))
	six := Summarize(analysistest.IsolatedFixture(t))
	type v struct {
		cell  string
		state State
	}
	for _, tt := range []struct {
		name  string
		s     Summary
		bound string
		want  []v
		line  string // the first verdict's line
	}{
		{"point decides without an interval", few, "nginx-http ratio < 0.35",
			[]v{{"GOMAXPROCS=1 nginx-http", Held}, {"GOMAXPROCS=8 nginx-http", Crossed}},
			`fail-if "nginx-http ratio < 0.35": held: GOMAXPROCS=1 nginx-http ratio 0.404 (no interval, 3 runs)`},
		{"a group selected", few, "nginx-http@gomaxprocs=8 ratio < 0.35", []v{{"GOMAXPROCS=8 nginx-http", Crossed}},
			`fail-if "nginx-http@gomaxprocs=8 ratio < 0.35": crossed: GOMAXPROCS=8 nginx-http ratio 0.222 (no interval, 3 runs) < 0.350`},
		{"interval wholly past", six, "nginx-http ratio < 0.55", []v{{"GOMAXPROCS=1 nginx-http", Crossed}},
			`fail-if "nginx-http ratio < 0.55": crossed: GOMAXPROCS=1 nginx-http ratio 0.415 (interval 0.338 to 0.528) < 0.550`},
		{"interval wholly past, above", six, "nginx-http ratio > 0.3", []v{{"GOMAXPROCS=1 nginx-http", Crossed}}, ""},
		{"interval holds the value", six, "nginx-http ratio < 0.5", []v{{"GOMAXPROCS=1 nginx-http", Unsure}},
			`fail-if "nginx-http ratio < 0.5": held: GOMAXPROCS=1 nginx-http ratio 0.415 (interval 0.338 to 0.528), whose interval holds 0.500`},
		{"interval short of the value", six, "nginx-http ratio < 0.3", []v{{"GOMAXPROCS=1 nginx-http", Held}}, ""},
		{"nginx's CPU", six, "nginx-http nginx-us > 40", []v{{"GOMAXPROCS=1 nginx-http", Crossed}},
			`fail-if "nginx-http nginx-us > 40": crossed: GOMAXPROCS=1 nginx-http nginx-us 44 µs (interval 41 µs to 46 µs) > 40 µs`},
		{"nginx's CPU, unsure", six, "nginx-http nginx-us >= 43", []v{{"GOMAXPROCS=1 nginx-http", Unsure}}, ""},
		{"the server's CPU", six, "nginx-http backend-us > 50", []v{{"GOMAXPROCS=1 nginx-http", Held}}, ""},
		{"rate", six, "nginx-http req/s < 20000", []v{{"GOMAXPROCS=1 nginx-http", Crossed}}, ""},
		{"no CPU measured", few, "nginx-http nginx-us > 40",
			[]v{{"GOMAXPROCS=1 nginx-http", Skipped}, {"GOMAXPROCS=8 nginx-http", Skipped}},
			`fail-if "nginx-http nginx-us > 40": skipped: GOMAXPROCS=1 nginx-http has no nginx-us: no run measured nginx's CPU time`},
		{"p99", few, "nginx-http p99 > 700ms", []v{{"GOMAXPROCS=1 nginx-http", Held}, {"GOMAXPROCS=8 nginx-http", Crossed}}, ""},
		{"p50", few, "nginx-http@gomaxprocs=1 p50 >= 322.1ms", []v{{"GOMAXPROCS=1 nginx-http", Crossed}}, ""},
		{"added p99", few, "nginx-http added-p99 > 300ms",
			[]v{{"GOMAXPROCS=1 nginx-http", Crossed}, {"GOMAXPROCS=8 nginx-http", Held}},
			`fail-if "nginx-http added-p99 > 300ms": crossed: GOMAXPROCS=1 nginx-http added-p99 339 ms (no interval, 3 runs) > 300 ms`},
		{"standalone adds nothing", few, "standalone@gomaxprocs=1 added-p99 > 1ms", []v{{"GOMAXPROCS=1 standalone", Skipped}}, ""},
		{"no such group", few, "nginx-http@gomaxprocs=3 ratio < 0.35", []v{{"", Skipped}},
			`fail-if "nginx-http@gomaxprocs=3 ratio < 0.35": skipped: this sweep has no nginx-http cell with gomaxprocs=3`},
		{"no such topology in the sweep", six, "nginx-static ratio < 0.35", []v{{"", Skipped}}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := ParseBound(tt.bound)
			require.NoError(t, err)
			vs := Check(tt.s, []Bound{b})
			var got []v
			for _, x := range vs {
				got = append(got, v{x.Cell, x.State})
			}
			assert.Equal(t, tt.want, got)
			if tt.line != "" {
				assert.Equal(t, tt.line, vs[0].String())
			}
		})
	}
}

// TestRegressions: a ratio that fell significantly is a regression past
// a limit below its fall, not past one above it; a ratio that did not
// move is none.
func TestRegressions(t *testing.T) {
	st := []float64{100, 102, 98, 101, 99, 100}
	old := sweepOf(t, "old", nil, map[string][]float64{
		"standalone/1": st, "nginx-http/1": {40, 41, 39, 40, 40.5, 39.5},
		"standalone/8": st, "nginx-http/8": {50, 51, 49, 50, 50.5, 49.5},
	})
	new := sweepOf(t, "new", nil, map[string][]float64{
		"standalone/1": st, "nginx-http/1": {32, 33, 31, 32, 32.5, 31.5}, // -20%
		"standalone/8": st, "nginx-http/8": {50, 50.5, 49.5, 51, 49, 50},
	})
	c := Compare(old, new)
	for _, tt := range []struct {
		limit float64
		want  []string
	}{
		{0.05, []string{"nginx-http/gomaxprocs=1"}},
		{0.19, []string{"nginx-http/gomaxprocs=1"}},
		{0.25, nil},
	} {
		t.Run(fmt.Sprintf("%g%%", 100*tt.limit), func(t *testing.T) {
			var got []string
			for _, r := range c.Regressions(tt.limit) {
				got = append(got, r.Row.Key.Path())
			}
			assert.Equal(t, tt.want, got)
		})
	}
	rs := c.Regressions(0.05)
	require.Len(t, rs, 1)
	assert.Regexp(t, `^regressed: nginx-http/gomaxprocs=1 ratio to standalone 0\.399 to 0\.318, -20\.19% \(p=0\.00\d n=6\), more than -5%$`, rs[0].String())
}

package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestHandlerRatio: the model's ratio (s + w) ÷ (n + b + w), in µs.
func TestHandlerRatio(t *testing.T) {
	tests := []struct {
		name    string
		s, n, b float64
		w       time.Duration
		want    float64
	}{
		{"no work: the inverse ratio of the costs", 10, 15, 10, 0, 10.0 / 25},
		{"50 µs", 10, 15, 10, 50 * time.Microsecond, 60.0 / 75},
		{"1 ms: nearly free", 10, 15, 10, time.Millisecond, 1010.0 / 1025},
		{"a path cheaper than standalone", 20, 5, 10, 200 * time.Microsecond, 220.0 / 215},
		{"nginx's part unknown: the sum in b", 10, 0, 25, 200 * time.Microsecond, 210.0 / 225},
		{"standalone unmeasured", 0, 15, 10, 0, math.NaN()},
		{"the path unmeasured", 10, 0, 0, 0, math.NaN()},
		{"NaN costs", math.NaN(), 15, 10, 0, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := HandlerRatio(tt.s, tt.n, tt.b, tt.w)
			if math.IsNaN(tt.want) {
				assert.True(t, math.IsNaN(got), "got %g", got)
				return
			}
			assert.InDelta(t, tt.want, got, 1e-12)
		})
	}
}

// TestOwnService: the paths a user's HTTP service can stand behind.
func TestOwnService(t *testing.T) {
	for top, want := range map[string]bool{"nginx-http": true, "nginx-http-unix": true, "standalone": false,
		"nginx-fcgi-tcp": false, "nginx-return": false, "nginx-nosuch": false} {
		t.Run(top, func(t *testing.T) { assert.Equal(t, want, OwnService(top)) })
	}
}

func iv(c, lo, hi float64) *Interval { return &Interval{Center: c, Lo: &lo, Hi: &hi, N: 8} }

// handlerSummary is a duet's summary: standalone 10 µs a request,
// nginx-http 15 + 10 µs (the servers' sum measured as 25), nginx-fcgi-tcp
// (no own service), and nginx-http measured again at 200 µs of work.
func handlerSummary(measured200 *Ratio) Summary {
	g := Group{Target: "go", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin}
	pairs := []PairRatio{{Index: 1}}
	cpu := func(n, b, sum float64) *CPUPerRequest {
		c := &CPUPerRequest{Server: iv(b, b-1, b+1), Servers: iv(sum, sum-1, sum+1)}
		if n > 0 {
			c.Nginx = iv(n, n-1, n+1)
		}
		return c
	}
	at200 := groupAt(g, 200*time.Microsecond)
	return Summary{Cells: []Cell{
		{Key: Key{g, Standalone}, CPU: cpu(0, 10, 10)},
		{Key: Key{g, "nginx-http"}, CPU: cpu(15, 10, 25), Pairs: pairs, RatioToStandalone: &Ratio{Interval: *iv(0.4, 0.39, 0.41)}},
		{Key: Key{g, "nginx-fcgi-tcp"}, CPU: cpu(15, 20, 35), Pairs: pairs},
		{Key: Key{at200, Standalone}, CPU: cpu(0, 210, 210)},
		{Key: Key{at200, "nginx-http"}, CPU: cpu(15, 210, 225), Pairs: pairs, RatioToStandalone: measured200},
	}}
}

// TestHandlerCosts: each own-service path's prediction from the group at
// no work, at the answer's handler costs, and its check against the
// group measured at 200 µs, inside its interval or not.
func TestHandlerCosts(t *testing.T) {
	tests := []struct {
		name     string
		measured *Ratio
		checks   int
		inside   bool
	}{
		{"prediction inside", &Ratio{Interval: *iv(0.93, 0.92, 0.94)}, 1, true},
		{"prediction outside", &Ratio{Interval: *iv(0.88, 0.87, 0.89)}, 1, false},
		{"an interval unknown is no agreement", &Ratio{Interval: Interval{Center: 210.0 / 225}}, 1, false},
		{"not measured at 200 µs", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := handlerSummary(tt.measured).HandlerCosts()
			require.Len(t, hs, 1, "nginx-http only: FastCGI is no own service, the work group no base")
			h := hs[0]
			assert.Equal(t, "nginx-http", h.Topology)
			assert.Equal(t, time.Duration(0), h.Group.Schedule.Work)
			assert.InDelta(t, 10, h.S, 1e-12)
			assert.InDelta(t, 25, h.P, 1e-12)
			assert.InDelta(t, 15, h.N, 1e-12)
			require.Len(t, h.Points, len(HandlerWorks))
			for i, want := range []float64{10.0 / 25, 60.0 / 75, 210.0 / 225, 1010.0 / 1025} {
				assert.Equal(t, HandlerWorks[i], h.Points[i].Work)
				assert.InDelta(t, want, h.Points[i].Ratio, 1e-12)
				assert.InDelta(t, 1-want, h.Points[i].Share, 1e-12)
			}
			require.Len(t, h.Checks, tt.checks)
			if tt.checks > 0 {
				c := h.Checks[0]
				assert.Equal(t, 200*time.Microsecond, c.Work)
				assert.InDelta(t, 210.0/225, c.Predicted, 1e-12)
				assert.Equal(t, tt.inside, c.Inside)
			}
		})
	}
}

// TestHandlerCostsNeedPairsAndCPU: no prediction outside the pair designs
// or without the CPU figures.
func TestHandlerCostsNeedPairsAndCPU(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Summary)
	}{
		{"no pairs (rounds)", func(s *Summary) { s.Cells[1].Pairs = nil }},
		{"no CPU for the path", func(s *Summary) { s.Cells[1].CPU = nil }},
		{"no CPU for standalone", func(s *Summary) { s.Cells[0].CPU = &CPUPerRequest{} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := handlerSummary(nil)
			tt.change(&s)
			assert.Empty(t, s.HandlerCosts())
		})
	}
}

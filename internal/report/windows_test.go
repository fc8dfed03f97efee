package report

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/topobench/topobench/internal/analysis"
)

// TestPct: a whole percentage keeps its sign ("10%", not "10").
func TestPct(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.1, "10%"}, {0.162, "16.2%"}, {0.0049, "0.5%"}, {0, "0%"}, {math.NaN(), "–"}, {math.Inf(1), "–"},
	} {
		t.Run(tc.want, func(t *testing.T) { assert.Equal(t, tc.want, pct(tc.in)) })
	}
}

// TestOwnWindows: each topology takes the window its slowest path needs
// least time at; the length most topologies take is the flag's first.
func TestOwnWindows(t *testing.T) {
	path := func(top string, g int, win, need time.Duration) analysis.PathSpread {
		sp := analysis.PathSpread{Key: analysis.Key{Group: analysis.Group{GOMAXPROCS: g}, Topology: top}}
		sp.Window, sp.Needed = win, need
		if need > 0 {
			sp.PairsNeeded = 6
		}
		return sp
	}
	s := time.Second
	tests := []struct {
		name    string
		spreads []analysis.PathSpread
		want    string
	}{
		{"one window", []analysis.PathSpread{path("nginx-http", 1, 3*s, 20*s), path("nginx-fcgi-tcp", 1, 3*s, 40*s)}, "3s"},
		{"a slow path's own", []analysis.PathSpread{
			path("nginx-http", 1, 3*s, 20*s), path("nginx-http", 1, 6*s, 38*s),
			path("nginx-http-unix", 1, 3*s, 20*s),
			path("nginx-fcgi-tcp", 1, 3*s, 40*s), path("nginx-fcgi-tcp", 1, 6*s, 38*s),
			// the slowest of its GOMAXPROCS decides
			path("nginx-fcgi-tcp", 8, 3*s, 160*s), path("nginx-fcgi-tcp", 8, 6*s, 100*s),
		}, "3s,nginx-fcgi-tcp=6s"},
		{"a length some path never reaches the precision at", []analysis.PathSpread{
			path("nginx-http", 1, 3*s, 20*s), path("nginx-http-unix", 1, 3*s, 20*s),
			path("nginx-fcgi-tcp", 1, 3*s, 10*s), path("nginx-fcgi-tcp", 8, 3*s, 0), path("nginx-fcgi-tcp", 8, 8*s, 90*s), path("nginx-fcgi-tcp", 1, 8*s, 50*s),
		}, "3s,nginx-fcgi-tcp=8s"},
		{"none within the precision", []analysis.PathSpread{path("nginx-http", 1, 3*s, 0)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, ownWindows(tt.spreads))
		})
	}
}

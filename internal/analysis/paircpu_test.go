package analysis

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// withWindowCPU gives every window of a pair design nginx's and the
// server's CPU time: nginx 40 + i%4 µs a request through nginx, the
// server 30 µs (standalone's 25), over the window's requests.
func withWindowCPU(runs []results.Run) []results.Run {
	for i := range runs {
		r := &runs[i]
		if r.Pair == nil || r.Failed() {
			continue
		}
		per := func(us float64) *results.Usage {
			s := us * float64(r.Figures.Requests) * 1e-6
			return &results.Usage{User: s / 2, System: s / 2}
		}
		r.CPU = &results.CPU{Load: *per(10), Server: per(30)}
		if r.Topology == Standalone {
			r.CPU.Server = per(25)
		} else {
			r.CPU.Nginx = per(40 + float64(i%4))
		}
	}
	return runs
}

// TestPairedCPU: a pair design's nginx and server µs per request are the
// windows' mean with a t interval over the windows.
func TestPairedCPU(t *testing.T) {
	env, runs := analysistest.PairedSweep()
	s := Summarize(env, withWindowCPU(runs))
	tests := []struct {
		topology      string
		nginx, server float64
		hasNginx      bool
	}{
		{topology: "nginx-http", nginx: 41.5, server: 30, hasNginx: true},
		{topology: "nginx-fcgi-tcp", nginx: 41.5, server: 30, hasNginx: true},
		{topology: "standalone", server: 25},
	}
	for _, tt := range tests {
		t.Run(tt.topology, func(t *testing.T) {
			c, ok := s.Cell(Key{pairedGroup(), tt.topology})
			require.True(t, ok)
			require.NotNil(t, c.CPU)
			require.NotNil(t, c.CPU.Server)
			assert.InDelta(t, tt.server, c.CPU.Server.Center, 1e-6)
			require.True(t, c.CPU.Server.Known(), "an interval over the windows")
			assert.InDelta(t, tt.server, *c.CPU.Server.Lo, 1e-6, "no spread, no width")
			if !tt.hasNginx {
				assert.Nil(t, c.CPU.Nginx, "standalone has no nginx")
				return
			}
			require.NotNil(t, c.CPU.Nginx)
			assert.InDelta(t, tt.nginx, c.CPU.Nginx.Center, 0.6, "the windows' mean")
			require.True(t, c.CPU.Nginx.Known())
			assert.Less(t, *c.CPU.Nginx.Lo, c.CPU.Nginx.Center)
			assert.Greater(t, *c.CPU.Nginx.Hi, c.CPU.Nginx.Center)
			assert.Equal(t, 6, c.CPU.Nginx.N, "one sample a window")
		})
	}
}

func pairedGroup() Group {
	return Group{Target: results.TargetGo, GOMAXPROCS: 1, Connections: 5000, Load: results.LoadBuiltin}
}

// TestTInterval: Student's t at 95% over the samples.
func TestTInterval(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		center   float64
		half     float64
		known    bool
		notFound bool
	}{
		{name: "none", notFound: true},
		{name: "one sample, no interval", xs: []float64{5}, center: 5},
		// mean 2, s = 1, t(0.975, 2) = 4.303: 2 ± 4.303/√3.
		{name: "three samples", xs: []float64{1, 2, 3}, center: 2, half: 4.302653 / math.Sqrt(3), known: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			iv := tInterval(tt.xs)
			if tt.notFound {
				assert.Nil(t, iv)
				return
			}
			require.NotNil(t, iv)
			assert.InDelta(t, tt.center, iv.Center, 1e-9)
			require.Equal(t, tt.known, iv.Known())
			if tt.known {
				assert.InDelta(t, tt.center-tt.half, *iv.Lo, 1e-5)
				assert.InDelta(t, tt.center+tt.half, *iv.Hi, 1e-5)
			}
		})
	}
}

// TestPairedRankAndReference: in a pair design the ranks follow the
// ratios to standalone, not the windows' rates, and the 2013 rows are
// filled from the pairs whatever their load.
func TestPairedRankAndReference(t *testing.T) {
	env, runs := analysistest.PairedSweep()
	// nginx-fcgi-tcp's pairs ran where both windows served twice as
	// fast: its median req/s passes nginx-http's, its ratio does not.
	for i := range runs {
		if r := &runs[i]; r.Pair != nil && r.Pair.With == "nginx-fcgi-tcp" {
			f := *r.Figures
			f.ReqPerSec *= 2
			r.Figures = &f
		}
	}
	s := Summarize(env, runs)
	cell := func(top string) Cell {
		c, ok := s.Cell(Key{pairedGroup(), top})
		require.True(t, ok)
		return c
	}
	http, fcgi, st := cell("nginx-http"), cell("nginx-fcgi-tcp"), cell(Standalone)
	require.Greater(t, fcgi.ReqPerSec.Median, http.ReqPerSec.Median, "the rates alone would rank fcgi ahead")
	tests := []struct {
		name string
		c    Cell
		rank int
		next string
	}{
		{"standalone first", st, 1, ""},
		{"nginx-http by its ratio", http, 2, Standalone},
		{"nginx-fcgi-tcp behind it", fcgi, 3, "nginx-http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.rank, tt.c.Rank)
			assert.Equal(t, tt.next, tt.c.Next)
		})
	}
	t.Run("the order vs standalone is the ratio's", func(t *testing.T) {
		assert.Equal(t, http.RatioToStandalone, http.VsNext)
		require.NotNil(t, fcgi.VsNext)
		assert.InDelta(t, 0.25/0.45, fcgi.VsNext.Center, 0.02)
		assert.True(t, fcgi.Settled())
	})
	t.Run("2013's rows from the pairs", func(t *testing.T) {
		ref := s.RefCell(Key{refGroup(RefRow{GOMAXPROCS: 1}), "nginx-http"})
		require.NotNil(t, ref)
		require.NotNil(t, ref.Ratio)
		assert.InDelta(t, http.RatioToStandalone.Center, *ref.Ratio, 1e-12, "the pairs' ratio, not the cross-check's 0.44")
		require.NotNil(t, ref.RatioLo)
		assert.Equal(t, *http.RatioToStandalone.Lo, *ref.RatioLo)
		assert.Equal(t, *http.RatioToStandalone.Hi, *ref.RatioHi)
		sref := s.RefCell(Key{refGroup(RefRow{GOMAXPROCS: 1}), Standalone})
		require.NotNil(t, sref.Ratio)
		assert.Equal(t, 1.0, *sref.Ratio)
		unmeasured := s.RefCell(Key{refGroup(RefRow{GOMAXPROCS: 8}), "nginx-http"})
		require.NotNil(t, unmeasured)
		assert.Nil(t, unmeasured.Ratio, "GOMAXPROCS=8 was not in the sweep")
	})
	t.Run("warnings count windows", func(t *testing.T) {
		env, runs := analysistest.PairedSweep()
		for i := range runs {
			if runs[i].Pair != nil && runs[i].Topology == "nginx-http" && runs[i].Rep <= 2 {
				runs[i].LoadShare = 0.97
			}
		}
		got := warnings(Summarize(env, runs), "load-bound")
		require.Len(t, got, 1)
		assert.Contains(t, got[0], "GOMAXPROCS=1 load=builtin nginx-http: load-bound in 2 of 6 windows; the first, rep 1:")
	})
}

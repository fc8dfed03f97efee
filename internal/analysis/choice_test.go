package analysis

import (
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// placeholder is a dash standing for a figure, or an unknown interval:
// neither belongs in the sentence (a range's dash sits between digits).
var placeholder = regexp.MustCompile(`(^|[^0-9])–|–([^0-9]|$)|∞|NaN`)

func only(runs []results.Run, keep ...string) []results.Run {
	var out []results.Run
	for _, r := range runs {
		for _, k := range keep {
			if r.Topology == k {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestChoose: which path the sentence names, what it says of the order,
// and the sentence itself where its figures are known by construction.
func TestChoose(t *testing.T) {
	settled, unsettled := true, false
	fixture := func() (results.Env, []results.Run) { return analysistest.Fixture(t) }
	tests := []struct {
		name    string
		sweep   func() (results.Env, []results.Run)
		want    []Choice // Sentence compared only where set
		has     []string // in every sentence
		hasNot  []string // in none
		choices int
	}{
		{
			name:  "paired, two groups, settled and not",
			sweep: analysistest.ChoiceSweep,
			want: []Choice{
				{Label: "GOMAXPROCS=1", Path: "nginx-http-unix", Other: "nginx-http", Settled: &settled,
					Sentence: "Your own Go service behind nginx, GOMAXPROCS=1: over a unix socket (nginx-http-unix) it serves 0.46 ± 1% of standalone's rate, nginx spending 34 µs ± 2% and the backend 29 µs ± 2% a request (standalone 25 µs ± 1%); its lead over TCP (nginx-http, 0.40 ± 1%) is settled at 95%. A FastCGI backend would change it: internal/fastcgi 0.55 ± 1%, net/http/fcgi 0.25–0.27."},
				{Label: "GOMAXPROCS=2", Path: "nginx-http-unix", Other: "nginx-http", Settled: &unsettled,
					Sentence: "Your own Go service behind nginx, GOMAXPROCS=2: over a unix socket (nginx-http-unix) it serves 0.45 ± 1% of standalone's rate, nginx spending 34 µs ± 2% and the backend 30 µs ± 2% a request (standalone 25 µs ± 1%); its lead over TCP (nginx-http, 0.45 ± 1%) is not settled at 95%. A FastCGI backend would change it: net/http/fcgi 0.22 ± 1%."},
			},
		},
		{
			name:  "paired, with a latency phase at GOMAXPROCS=1 only",
			sweep: analysistest.LatencySweep,
			want: []Choice{
				{Label: "GOMAXPROCS=1", Path: "nginx-http-unix", Other: "nginx-http", Settled: &settled,
					Sentence: "Your own Go service behind nginx, GOMAXPROCS=1: over a unix socket (nginx-http-unix) it serves 0.46 ± 1% of standalone's rate, nginx spending 34 µs ± 2% and the backend 29 µs ± 2% a request (standalone 25 µs ± 1%), its p99 1.08 ms ± 248 µs above standalone's at 4,000 req/s (5,000 connections); its lead over TCP (nginx-http, 0.40 ± 1%) is settled at 95%. A FastCGI backend would change it: internal/fastcgi 0.55 ± 1%, net/http/fcgi 0.25–0.27."},
				{Label: "GOMAXPROCS=2", Path: "nginx-http-unix", Other: "nginx-http", Settled: &unsettled},
			},
		},
		{
			name:  "paired, one group, no nginx-http-unix, no CPU",
			sweep: analysistest.PairedSweep,
			want: []Choice{{Path: "nginx-http",
				Sentence: "Your own Go service behind nginx: over TCP (nginx-http) it serves 0.45 ± 1% of standalone's rate. A FastCGI backend would change it: net/http/fcgi 0.25 ± 1%."}},
			hasNot: []string{"µs", "settled", "unix"},
		},
		{
			name:   "rounds: both paths, no word of settling",
			sweep:  func() (results.Env, []results.Run) { return analysistest.IsolatedUnixFixture(t) },
			want:   []Choice{{Path: "nginx-http-unix", Other: "nginx-http"}},
			has:    []string{"over a unix socket (nginx-http-unix) it serves 0.45 ± 27% of standalone's rate, nginx spending 44 µs ± 6% and the backend 37 µs ± 14% a request (standalone 37 µs ± 14%); TCP (nginx-http) 0.41 ± 27%."},
			hasNot: []string{"settled"},
		},
		{
			name: "rounds: the unix socket alone",
			sweep: func() (results.Env, []results.Run) {
				env, runs := analysistest.IsolatedUnixFixture(t)
				return env, only(runs, Standalone, "nginx-http-unix")
			},
			want:   []Choice{{Path: "nginx-http-unix"}},
			hasNot: []string{"TCP", "FastCGI"},
		},
		{
			name:   "rounds, two groups, too few runs for an interval",
			sweep:  fixture,
			want:   []Choice{{Label: "GOMAXPROCS=1", Path: "nginx-http"}, {Label: "GOMAXPROCS=8", Path: "nginx-http"}},
			has:    []string{"net/http/fcgi 0."},
			hasNot: []string{"±", "µs"},
		},
		{
			name: "no nginx path",
			sweep: func() (results.Env, []results.Run) {
				env, runs := fixture()
				return env, only(runs, Standalone, "nginx-return")
			},
		},
		{
			name: "FastCGI paths only",
			sweep: func() (results.Env, []results.Run) {
				env, runs := fixture()
				return env, only(runs, Standalone, "nginx-fcgi-tcp", "nginx-fcgi-unix")
			},
		},
		{
			name: "no standalone",
			sweep: func() (results.Env, []results.Run) {
				env, runs := fixture()
				return env, only(runs, "nginx-http", "nginx-fcgi-tcp")
			},
		},
		{
			name:    "open-loop groups left out",
			sweep:   func() (results.Env, []results.Run) { return analysistest.CostSweep(true) },
			choices: 4,
			has:     []string{"nginx spending 36 µs"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Summarize(tt.sweep())
			got := Choose(s)
			assert.Equal(t, got, s.Choices, "Summarize keeps them")
			n := len(tt.want)
			if tt.choices > 0 {
				n = tt.choices
			}
			require.Len(t, got, n)
			for i, w := range tt.want {
				assert.Equal(t, w.Label, got[i].Label)
				assert.Equal(t, w.Path, got[i].Path)
				assert.Equal(t, w.Other, got[i].Other)
				assert.Equal(t, w.Settled, got[i].Settled)
				if w.Sentence != "" {
					assert.Equal(t, w.Sentence, got[i].Sentence)
				}
			}
			for _, c := range got {
				assert.False(t, c.Group.Schedule.OpenLoop())
				assert.NotRegexp(t, placeholder, c.Sentence)
				for _, h := range tt.has {
					assert.Contains(t, c.Sentence, h)
				}
				for _, h := range tt.hasNot {
					assert.NotContains(t, c.Sentence, h)
				}
			}
		})
	}
}

// TestChooseSettledIsTheRanks: where the two paths rank next to each
// other, the choice's order is settled exactly when the rank's is.
func TestChooseSettledIsTheRanks(t *testing.T) {
	env, runs := analysistest.ChoiceSweep()
	s := Summarize(env, runs)
	require.Len(t, s.Choices, 2)
	for _, c := range s.Choices {
		t.Run(c.Label, func(t *testing.T) {
			path, _ := s.Cell(Key{c.Group, c.Path})
			other, _ := s.Cell(Key{c.Group, c.Other})
			require.Equal(t, path.Rank+1, other.Rank, "ranked next to each other")
			require.Equal(t, c.Path, other.Next)
			require.NotNil(t, c.Settled)
			assert.Equal(t, other.Settled(), *c.Settled)
		})
	}
	t.Run("a faster unix socket settles GOMAXPROCS=2", func(t *testing.T) {
		// Faster unix windows at GOMAXPROCS=2 settle it there too.
		for i := range runs {
			if r := &runs[i]; r.GOMAXPROCS == 2 && r.Topology == "nginx-http-unix" {
				f := *r.Figures
				f.ReqPerSec *= 1.05
				r.Figures = &f
			}
		}
		s := Summarize(env, runs)
		require.Len(t, s.Choices, 2)
		require.NotNil(t, s.Choices[1].Settled)
		assert.True(t, *s.Choices[1].Settled)
	})
}

// TestCPUFigures: each CPU figure not measured is left out with its
// words.
func TestCPUFigures(t *testing.T) {
	iv := func(c float64) *Interval { return &Interval{Center: c, N: 1} }
	tests := []struct {
		name                 string
		nginx, server, alone *Interval
		want                 string
	}{
		{"all", iv(34), iv(29), iv(25), ", nginx spending 34 µs and the backend 29 µs a request (standalone 25 µs)"},
		{"no nginx", nil, iv(29), iv(25), ", the backend spending 29 µs a request (standalone 25 µs)"},
		{"no standalone", iv(34), iv(29), nil, ", nginx spending 34 µs and the backend 29 µs a request"},
		{"standalone alone", nil, nil, iv(25), " (standalone's server 25 µs a request)"},
		{"none", nil, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, st := Cell{CPU: &CPUPerRequest{Nginx: tt.nginx, Server: tt.server}}, Cell{}
			if tt.alone != nil {
				st.CPU = &CPUPerRequest{Server: tt.alone}
			}
			assert.Equal(t, tt.want, cpuFigures(c, st))
		})
	}
}

// TestDiffering: a group is labelled by the dimensions its choices'
// groups differ in.
func TestDiffering(t *testing.T) {
	g := func(procs int, work time.Duration) Choice {
		return Choice{Group: Group{Target: "go", GOMAXPROCS: procs, Connections: 100, Load: "wrk", Schedule: results.Schedule{Work: work}}}
	}
	tests := []struct {
		name string
		cs   []Choice
		want []string
	}{
		{"one group, no label", []Choice{g(1, 0)}, []string{""}},
		{"by GOMAXPROCS", []Choice{g(1, 0), g(8, 0)}, []string{"GOMAXPROCS=1", "GOMAXPROCS=8"}},
		{"by work, unset as 0", []Choice{g(1, 0), g(1, time.Millisecond)}, []string{"work=0", "work=1ms"}},
		{"by both", []Choice{g(1, 0), g(2, time.Millisecond)}, []string{"GOMAXPROCS=1 work=0", "GOMAXPROCS=2 work=1ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, differing(tt.cs))
		})
	}
}

// TestGoBehind names each path's server and transport: cmd/hello's Go
// server, the user's own service (a command or a running service) as
// theirs, never net/http, and another built-in target by its name.
func TestGoBehind(t *testing.T) {
	own := map[string]string{
		"standalone":      "your service, no nginx",
		"nginx-http":      "your service over TCP",
		"nginx-http-unix": "your service over a unix socket",
		"nginx-return":    "",
		"no-such-path":    "",
	}
	tests := map[string]map[string]string{
		"go": {
			"standalone":           "net/http, no nginx",
			"nginx-http":           "net/http over TCP",
			"nginx-http-unix":      "net/http over a unix socket",
			"nginx-fcgi-tcp":       "net/http/fcgi over TCP",
			"nginx-fcgi-unix":      "net/http/fcgi over a unix socket",
			"nginx-fcgi-fast-tcp":  "internal/fastcgi over TCP",
			"nginx-fcgi-fast-unix": "internal/fastcgi over a unix socket",
			"nginx-return":         "",
			"nginx-static":         "",
			"no-such-path":         "",
		},
		"cmd:./api -listen {addr} -unix {unix}": own,
		"listen:127.0.0.1:8080":                 own,
		"listen:unix:/run/api.sock":             own,
		"java-netty": {
			"standalone":   "java-netty, no nginx",
			"nginx-http":   "java-netty over TCP",
			"nginx-static": "",
		},
	}
	tests[""] = tests["go"]
	for target, tops := range tests {
		for top, want := range tops {
			t.Run(target+"/"+top, func(t *testing.T) {
				got := GoBehind(target, top)
				assert.Equal(t, want, got)
				if results.OwnTarget(target) {
					assert.NotContains(t, got, "net/http")
				}
			})
		}
	}
}

// TestChoiceFigures: a ratio and a µs figure carry their interval where
// known and none where not; a family of two paths is the range of their
// ratios, of one its ratio.
func TestChoiceFigures(t *testing.T) {
	lo, hi := 0.44, 0.48
	known := Interval{Center: 0.46, Lo: &lo, Hi: &hi, N: 6}
	unknown := Interval{Center: 0.46, N: 3}
	cell := func(r float64) Cell { return Cell{RatioToStandalone: &Ratio{Interval: Interval{Center: r, N: 3}}} }
	tests := []struct {
		name, got, want string
	}{
		{"ratio with its interval", ratioFigure(&Ratio{Interval: known}), "0.46 ± 4%"},
		{"ratio without", ratioFigure(&Ratio{Interval: unknown}), "0.46"},
		{"µs with its interval", microsFigure(Interval{Center: 34, Lo: new(32.0), Hi: new(36.0), N: 6}), "34 µs ± 6%"},
		{"µs without", microsFigure(Interval{Center: 7.25, N: 1}), "7.2 µs"},
		{"no family", familyFigure(nil), ""},
		{"a family of one", familyFigure([]Cell{cell(0.25)}), "0.25"},
		{"a family of two, greatest first", familyFigure([]Cell{cell(0.27), cell(0.21)}), "0.21–0.27"},
		{"over TCP", transport("nginx-fcgi-fast-tcp"), "over TCP"},
		{"over a unix socket", transport("nginx-fcgi-unix"), "over a unix socket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
	t.Run("own paths", func(t *testing.T) {
		assert.True(t, OwnPath("nginx-http"))
		assert.True(t, OwnPath("nginx-http-unix"))
		assert.False(t, OwnPath("nginx-fcgi-fast-unix"))
		assert.False(t, OwnPath(Standalone))
	})
}

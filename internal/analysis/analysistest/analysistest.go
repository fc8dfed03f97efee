// Package analysistest holds the fake sweeps the analysis and the
// renderers are tested against: a results directory in the format of
// today's records and of older ones, built to trip every warning, and
// variants derived from it.
package analysistest

import (
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// here is this package's directory, so the fixture loads from any test's
// working directory.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Fixture is testdata/sweep: a fake results directory (made-up figures in
// the range this project measures) built to trip every warning.
func Fixture(t testing.TB) (results.Env, []results.Run) {
	t.Helper()
	env, runs, err := results.Load(Dir())
	require.NoError(t, err)
	require.Len(t, runs, 30)
	return env, runs
}

// IsolatedFixture is the GOMAXPROCS=1 half of the fixture grown to six
// rounds (rounds 4-6 repeat rounds 1-3 at round-specific factors), run
// with -isolate netns on pinned CPUs and -reps auto, with CPU records
// whose per-request figures are known by construction: rep r spent
// 18+r µs of load generator CPU, 40+r of nginx and 30+2r of server per
// request (halved between user and system). Rep 2 of nginx-http was
// noisy, rep 3 of nginx-fcgi-tcp unsettled and rep 5 of standalone
// retried.
func IsolatedFixture(t testing.TB) (results.Env, []results.Run) {
	env, runs := Fixture(t)
	env.Plan.GOMAXPROCS = []int{1}
	env.Plan.Reps = 6
	env.Plan.RepsAuto = &results.RepsAuto{Max: 6, Within: 0.05}
	env.Plan.Isolation = results.IsolateNetns
	env.Plan.PinLoad, env.Plan.PinServer = "0", "1"
	// Each round's factor, and nginx-http's own drift in later rounds.
	round := map[int]float64{4: 1.02, 5: 0.97, 6: 1.01}
	var out []results.Run
	for _, r := range runs {
		if r.GOMAXPROCS != 1 {
			continue
		}
		for _, rep := range []int{r.Rep, r.Rep + 3} {
			c := r
			c.Rep = rep
			res := *r.Figures
			if f, ok := round[rep]; ok {
				res.ReqPerSec *= f
				if c.Topology == "nginx-http" {
					res.ReqPerSec *= 1.04
				}
				res.Requests = int64(res.ReqPerSec * 30)
			}
			c.Figures = &res
			n := float64(res.Requests) * 1e-6 / 2
			per := func(us float64) results.Usage { return results.Usage{User: us * n, System: us * n} }
			c.CPU = &results.CPU{Load: per(18 + float64(rep)), Nginx: new(per(40 + float64(rep))), Server: new(per(30 + 2*float64(rep)))}
			c.Settle = &results.Settle{Waited: 200 * time.Millisecond, Settled: true, CPUShare: 0.01, ServerRSS: 12 << 20, NginxRSS: 8 << 20}
			c.Noise = &results.Noise{Busy: 60, Steal: 0.1, Others: 0.8, Window: 30 * time.Second}
			switch {
			case c.Topology == "nginx-http" && rep == 2:
				c.Noise.Others, c.Noise.Flagged = 9.5, "CPU outside the run 16% of the machine, above 10%"
			case c.Topology == "nginx-fcgi-tcp" && rep == 3:
				c.Settle.Waited, c.Settle.Settled, c.Settle.CPUShare, c.Settle.ServerRSS = 5*time.Second, false, 0.35, 860<<20
			case c.Topology == "standalone" && rep == 5:
				c.Retried = "wrk did not exit 10s after its duration"
			}
			out = append(out, c)
		}
	}
	return env, out
}

// Dir is the fixture's results directory, to read; Copy gives one to
// write into.
func Dir() string { return filepath.Join(here(), "testdata", "sweep") }

// Copy copies the fixture's results directory into a temporary one.
func Copy(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(Dir())))
	return dir
}

// CostSweep is a fake sweep over the handler's work (0, 50 µs, 200 µs,
// 1 ms) on one core, six rounds, whose figures follow the CPU model
// exactly but for a round-to-round wobble of ±1%: standalone's server
// costs 25 µs per request plus the work, nginx-http's nginx 36 µs and
// its server 26 µs plus the work, so req/s = 10⁶ ÷ µs per request. With
// open, it also holds open-loop cells at 2,000 req/s whose p50 and p99
// are 100 µs and 400 µs longer through nginx.
func CostSweep(open bool) (results.Env, []results.Run) {
	works := []time.Duration{0, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond}
	env := results.Env{
		Start: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), End: time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC),
		CPUs: 2,
		Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{100},
			Reps: 6, Duration: 10 * time.Second, Threads: 4, Timeout: 2 * time.Second, PinLoad: "0", PinServer: "1", Isolation: results.IsolateNetns},
	}
	wobble := []float64{1, 1.01, 0.99, 1.005, 0.995, 1}
	var runs []results.Run
	for _, w := range works {
		wu := float64(w) / float64(time.Microsecond)
		env.Plan.Schedules = append(env.Plan.Schedules, results.Schedule{Work: w})
		for rep := 1; rep <= 6; rep++ {
			for _, top := range []string{"standalone", "nginx-http"} {
				nginx, server := 0.0, 25+wu
				if top == "nginx-http" {
					nginx, server = 36, 26+wu
				}
				rate := 1e6 / (nginx + server) * wobble[rep-1]
				n := int64(rate * 10)
				per := func(v float64) results.Usage { return results.Usage{User: v * float64(n) / 1e6} }
				runs = append(runs, results.Run{
					Cell:    results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Schedule: results.Schedule{Work: w}, Rep: rep},
					Figures: &results.Figures{Requests: n, ReqPerSec: rate, Latency: true, P50: time.Millisecond, P99: 5 * time.Millisecond, Max: 9 * time.Millisecond},
					CPU:     &results.CPU{Load: per(15), Nginx: new(per(nginx)), Server: new(per(server))},
				})
			}
		}
		if !open {
			continue
		}
		for _, top := range []string{"standalone", "nginx-http"} {
			p50, p99 := 200*time.Microsecond+w, 900*time.Microsecond+2*w
			if top == "nginx-http" {
				p50, p99 = p50+100*time.Microsecond, p99+400*time.Microsecond
			}
			runs = append(runs, results.Run{
				Cell: results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin,
					Schedule: results.Schedule{Rate: 2000, Work: w}, Rep: 1},
				Figures: &results.Figures{Requests: 20000, ReqPerSec: 1999, TargetRate: 2000, Latency: true, Histogram: true,
					P50: p50, P99: p99, Max: 2 * p99},
			})
		}
	}
	return env, runs
}

// PairedSweep is a fake paired sweep (-design paired -load builtin) at
// GOMAXPROCS=1 and 5000 connections behind 2013's upstream keepalive 300,
// on pinned CPUs: six A/A pairs of standalone and six pairs each of
// nginx-http (about 0.45 of standalone) and nginx-fcgi-tcp (about 0.25),
// then the wrk cross-check, one run each of standalone and nginx-http,
// whose ratio is 0.44 (18,040 over 41,000).
func PairedSweep() (results.Env, []results.Run) {
	env, runs := pairedSweep([]PathGroup{{GOMAXPROCS: 1, Paths: []Path{{Topology: "nginx-http", Ratio: 0.45}, {Topology: "nginx-fcgi-tcp", Ratio: 0.25}}}})
	env.Command = append(env.Command, "-cross-check", "wrk")
	env.Plan.Paired.Check = &results.Check{Load: results.LoadWrk, Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: 1, Duration: 15 * time.Second}
	for _, top := range []string{"standalone", "nginx-http"} {
		rate := map[string]float64{"standalone": 41000, "nginx-http": 18040}[top]
		runs = append(runs, results.Run{
			Cell:    results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 5000, Load: results.LoadWrk, Rep: 1},
			Start:   env.Start.Add(time.Duration(len(runs)) * 2 * time.Second),
			Wall:    15 * time.Second,
			Figures: &results.Figures{Requests: int64(15 * rate), ReqPerSec: rate},
		})
	}
	return env, runs
}

// Path is one topology of PairedPaths: its rate over standalone's
// 40,000 req/s, and nginx's and its server's CPU µs per request (none
// when zero).
type Path struct {
	Topology             string
	Ratio, Nginx, Server float64
}

// PathGroup is the paths of PairedPaths at one GOMAXPROCS.
type PathGroup struct {
	GOMAXPROCS int
	Paths      []Path
	// Standalone is standalone's server µs a request where the paths
	// measured CPU; 25 when zero.
	Standalone float64
}

// PairedPaths is a fake paired sweep like PairedSweep, without its
// cross-check, over the given paths at each GOMAXPROCS of groups, in
// that order: six A/A pairs of standalone (25 µs of server CPU a
// request), then six pairs of each path. A window's rate wobbles by up
// to ±1% about its path's, its CPU µs by ±2% about the path's, both in
// a fixed sequence.
func PairedPaths(groups []PathGroup) (results.Env, []results.Run) {
	return pairedSweep(groups)
}

// ChoiceSweep is PairedPaths over every path a user's own Go service
// and the FastCGI servers take, at GOMAXPROCS 1 and 2: at 1 nginx-http-unix
// (0.46 of standalone) well ahead of nginx-http (0.40), at 2 the two
// within the windows' wobble (0.452 and 0.45).
func ChoiceSweep() (results.Env, []results.Run) {
	return PairedPaths([]PathGroup{
		{GOMAXPROCS: 1, Paths: []Path{
			{Topology: "nginx-http", Ratio: 0.40, Nginx: 36, Server: 30},
			{Topology: "nginx-fcgi-tcp", Ratio: 0.25, Nginx: 40, Server: 45},
			{Topology: "nginx-fcgi-unix", Ratio: 0.27, Nginx: 38, Server: 44},
			{Topology: "nginx-fcgi-fast-unix", Ratio: 0.55, Nginx: 30, Server: 20},
			{Topology: "nginx-http-unix", Ratio: 0.46, Nginx: 34, Server: 29},
		}},
		{GOMAXPROCS: 2, Paths: []Path{
			{Topology: "nginx-http", Ratio: 0.45, Nginx: 35, Server: 30},
			{Topology: "nginx-fcgi-tcp", Ratio: 0.22, Nginx: 41, Server: 46},
			{Topology: "nginx-http-unix", Ratio: 0.452, Nginx: 34, Server: 30},
		}},
	})
}

// IsolatedUnixFixture is IsolatedFixture with nginx-http-unix beside
// nginx-http: each of its runs nginx-http's at 1.08 times the rate, with
// the same CPU per request.
func IsolatedUnixFixture(t testing.TB) (results.Env, []results.Run) {
	env, runs := IsolatedFixture(t)
	env.Plan.Topologies = slices.Insert(slices.Clone(env.Plan.Topologies), 2, "nginx-http-unix")
	for _, r := range slices.Clone(runs) {
		if r.Topology != "nginx-http" {
			continue
		}
		r.Topology = "nginx-http-unix"
		f := *r.Figures
		f.ReqPerSec *= 1.08
		f.Requests = int64(float64(f.Requests) * 1.08)
		r.Figures = &f
		scale := func(u results.Usage) results.Usage {
			return results.Usage{User: u.User * 1.08, System: u.System * 1.08}
		}
		r.CPU = &results.CPU{Load: scale(r.CPU.Load), Nginx: new(scale(*r.CPU.Nginx)), Server: new(scale(*r.CPU.Server))}
		runs = append(runs, r)
	}
	return env, runs
}

func pairedSweep(groups []PathGroup) (results.Env, []results.Run) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	tops := []string{"standalone"}
	var procs []int
	for _, g := range groups {
		procs = append(procs, g.GOMAXPROCS)
		for _, p := range g.Paths {
			if !slices.Contains(tops, p.Topology) {
				tops = append(tops, p.Topology)
			}
		}
	}
	plan := results.Plan{Topologies: tops, GOMAXPROCS: procs, Connections: []int{5000}, Loads: []results.Generator{results.LoadBuiltin},
		UpstreamKeepalive: []results.Keepalive{results.DefaultKeepalive}, Duration: time.Second, Warmup: time.Second, Reps: 1,
		Threads: 100, Timeout: 2 * time.Second, Isolation: results.IsolateNetns, PinLoad: "0", PinServer: "1",
		Paired: &results.Paired{Pairs: 6, Seed: 7, Lead: time.Second, Own: true}}
	gs := make([]string, len(procs))
	for i, g := range procs {
		gs[i] = strconv.Itoa(g)
	}
	env := results.Env{
		Command: []string{"topobench", "compare", "-design", "paired", "-load", "builtin", "-gomaxprocs", strings.Join(gs, ","), "-pairs", "6"},
		Start:   t0, End: t0.Add(3 * time.Minute), CPUModel: "AMD EPYC", CPUs: 2, Plan: plan,
		Nginx: &results.NginxEnv{WorkerProcesses: 1, WorkerConnections: 10240, WorkerRlimitNofile: 20000, Backlog: 5000,
			Keepalive: map[string]int{"300": 300}},
	}
	var runs []results.Run
	for _, g := range groups {
		runs = append(runs, pairedGroup(t0, len(runs), g)...)
	}
	return env, runs
}

// pairedGroup is one GOMAXPROCS's windows of pairedSweep, the first
// starting after before windows.
func pairedGroup(t0 time.Time, before int, g PathGroup) []results.Run {
	var runs []results.Run
	win := func(p Path, rep int, rate float64, pair results.Pair) {
		r := results.Run{
			Cell:    results.Cell{Topology: p.Topology, GOMAXPROCS: g.GOMAXPROCS, Connections: 5000, Load: results.LoadBuiltin, Rep: rep},
			Start:   t0.Add(time.Duration(before+len(runs)) * 2 * time.Second),
			Wall:    time.Second,
			Figures: &results.Figures{Requests: int64(rate), ReqPerSec: rate},
			Pair:    &pair,
		}
		if p.Server > 0 {
			k := 1 + 0.02*float64(len(runs)%3-1)
			per := func(us float64) *results.Usage {
				s := us * k * rate * 1e-6
				return &results.Usage{User: s / 2, System: s / 2}
			}
			r.CPU = &results.CPU{Load: *per(10), Server: per(p.Server)}
			if p.Nginx > 0 {
				r.CPU.Nginx = per(p.Nginx)
			}
		}
		runs = append(runs, r)
	}
	cpu := len(g.Paths) > 0 && g.Paths[0].Server > 0
	st := Path{Topology: "standalone"}
	if cpu {
		st.Server = cmp.Or(g.Standalone, 25)
	}
	wobble := []float64{1, 0.99, 1.01, 1.005, 0.995, 1}
	seq := 0
	for i := 1; i <= 6; i++ {
		seq++
		at := seq
		win(st, at, 40000, results.Pair{With: "standalone", Index: i, Seq: at, First: true})
		seq++
		win(st, seq, 40000*wobble[i-1], results.Pair{With: "standalone", Index: i, Seq: at, Twin: true})
	}
	for ti, p := range g.Paths {
		for i := 1; i <= 6; i++ {
			seq++
			win(st, seq, 40000, results.Pair{With: p.Topology, Index: i, Seq: seq, First: i%2 == 0})
			win(p, i, 40000*p.Ratio*wobble[(i+ti)%6], results.Pair{With: p.Topology, Index: i, Seq: seq, First: i%2 == 1})
		}
	}
	return runs
}

// LatencySweep is ChoiceSweep with the latency phase at GOMAXPROCS=1,
// -latency-rate auto: three rounds of standalone and each path alone at
// 4,000 req/s, standalone's p50 0.5 ms, each path's about 0.1 ms more a
// tenth of its capacity ratio short of standalone's, p99 ten times and
// p99.9 twenty times the p50; nginx-fcgi-tcp's second run missed the
// rate (3,700 req/s), flagged.
func LatencySweep() (results.Env, []results.Run) {
	env, runs := ChoiceSweep()
	env.Plan.Paired.Latency = &results.Latency{Fraction: 0.5, Rounds: 3, Duration: 2 * time.Second}
	t := runs[len(runs)-1].Start
	paths := map[string]float64{"nginx-http": 0.40, "nginx-fcgi-tcp": 0.25, "nginx-fcgi-unix": 0.27, "nginx-fcgi-fast-unix": 0.55, "nginx-http-unix": 0.46}
	order := []string{"nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-fcgi-fast-unix", "nginx-http-unix"}
	sa := 0
	run := func(top string, rep int, p50 time.Duration, rate float64) {
		t = t.Add(3 * time.Second)
		runs = append(runs, results.Run{
			Cell:  results.Cell{Topology: top, GOMAXPROCS: 1, Connections: 5000, Load: results.LoadBuiltin, Schedule: results.Schedule{Fraction: 0.5}, Rep: rep},
			Start: t, Wall: 2 * time.Second,
			Figures: &results.Figures{Requests: int64(2 * rate), ReqPerSec: rate, TargetRate: 4000, Latency: true, Histogram: true,
				P50: p50, P99: 10 * p50, P999: 20 * p50},
		})
	}
	for round := 1; round <= 3; round++ {
		for _, top := range order {
			sa++
			wobble := time.Duration(round-2) * 10 * time.Microsecond
			run("standalone", sa, 500*time.Microsecond+wobble, 4000)
			rate := 4000.0
			if top == "nginx-fcgi-tcp" && round == 2 {
				rate = 3700
			}
			added := time.Duration((1-paths[top])*1000) * time.Microsecond / 5
			run(top, round, 500*time.Microsecond+added+2*wobble, rate)
		}
	}
	return env, runs
}

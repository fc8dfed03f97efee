package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// leftovers lists live processes whose command line mentions dir: every
// child of a sweep (cmd/hello, nginx, wrk) names a path inside it.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, dir) && !strings.Contains(cmd, "compare") {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+cmd)
		}
	}
	return found
}

// summaryCell mirrors the parts of summary.json the test checks.
type summaryCell struct {
	GOMAXPROCS int    `json:"gomaxprocs"`
	Topology   string `json:"topology"`
	Reps       int    `json:"reps"`
	Failed     int    `json:"failed"`
	ReqPerSec  struct {
		Median, Min, Max float64
	} `json:"req_per_sec"`
	Ratio *struct {
		Center float64 `json:"center"`
		Lo     *float64
		Hi     *float64
		N      int
	} `json:"ratio_to_standalone"`
}

func TestCompareEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx and wrk")
	}
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1,2", "-reps", "2",
		"-duration", "1s", "-warmup", "1s", "-connections", "50", "-threads", "2",
		"-isolate", "none", "-cpus", "none", "-free-ports", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))

	for _, f := range []string{"env.json", "summary.md", "summary.csv", "summary.json", "bench.txt",
		"reqps.svg", "reqps.png", "p99.svg", "p99.png", "topobench.lua", "logs/hello-g1.log", "logs/hello-g2.log"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "sock", "*"))
	assert.Empty(t, socks, "sockets left behind")

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.False(t, env.Interrupted)
	assert.False(t, env.End.IsZero())
	require.Len(t, runs, 8)
	for _, r := range runs {
		require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
		assert.Positive(t, r.Figures.Requests, r.Name())
		assert.FileExists(t, results.RawPath(dir, r))
		assert.Contains(t, strings.Join(r.Command, " "), "-t2 -c50 -d1s", r.Name())
		// -isolate none -cpus none is the loopback setup: no namespace or
		// CPU wrapper, only stdbuf for wrk's line-buffered header.
		assert.Equal(t, []string{"stdbuf", "-oL"}, r.Command[:2], r.Name())
		assert.Equal(t, "wrk", filepath.Base(r.Command[2]), r.Name())
		assert.True(t, strings.HasPrefix(r.URL, "http://127.0.0.1:"), r.URL)
	}
	assert.Equal(t, results.IsolateNone, env.Plan.Isolation)
	assert.Nil(t, env.CPUSplit, "-cpus none: no calibration")
	assert.NotContains(t, stdout.String(), "cpus auto")
	// The recorded command is one a reader can run again, not the test
	// binary's path.
	assert.Equal(t, []string{"topobench", "compare", "-preset", "2013", "-topologies", "standalone,nginx-http"}, env.Command[:6])
	// The progress shows every cell with its rate and errors.
	assert.Equal(t, 8, strings.Count(stdout.String(), "req/s"), stdout.String())

	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	var sum struct{ Cells []summaryCell }
	require.NoError(t, json.Unmarshal(b, &sum))
	require.Len(t, sum.Cells, 4)
	standalone := map[int]float64{}
	for _, c := range sum.Cells {
		if c.Topology == "standalone" {
			standalone[c.GOMAXPROCS] = c.ReqPerSec.Median
		}
	}
	for _, c := range sum.Cells {
		name := c.Topology
		assert.Equal(t, 2, c.Reps, name)
		assert.Zero(t, c.Failed, name)
		assert.LessOrEqual(t, c.ReqPerSec.Min, c.ReqPerSec.Median, name)
		assert.LessOrEqual(t, c.ReqPerSec.Median, c.ReqPerSec.Max, name)
		// The median of two runs is their mean; check it against the records.
		var rates []float64
		for _, r := range runs {
			if r.Topology == c.Topology && r.GOMAXPROCS == c.GOMAXPROCS {
				rates = append(rates, r.Figures.ReqPerSec)
			}
		}
		require.Len(t, rates, 2)
		assert.InDelta(t, (rates[0]+rates[1])/2, c.ReqPerSec.Median, 0.01, name)
		require.NotNil(t, c.Ratio, name)
		assert.InDelta(t, c.ReqPerSec.Median/standalone[c.GOMAXPROCS], c.Ratio.Center, 1e-9, name)
		assert.Nil(t, c.Ratio.Lo, "two runs each give no interval")
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "(reqps.svg)")
	bench, err := os.ReadFile(filepath.Join(dir, "bench.txt"))
	require.NoError(t, err)
	assert.Equal(t, 8, strings.Count(string(bench), "\nBenchmarkTopobench/"))
}

// TestCompareBudget runs a real sweep on a budget: it plans its first
// rounds, adds runs while they fit, and ends within the budget (plus the
// overrun it allows itself), saying where the time went.
func TestCompareBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx and wrk")
	}
	const budget = 75 * time.Second
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"compare", "-preset", "2013",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-budget", budget.String(),
		"-duration", "1s", "-warmup", "0s", "-connections", "10", "-threads", "1", "-cpus", "first",
		"-free-ports", "-out", dir}, &stdout, &stderr)
	took := time.Since(start)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	a := env.Plan.RepsAuto
	require.NotNil(t, a)
	assert.Equal(t, budget, a.Budget)
	assert.Equal(t, time.Second, env.Plan.Duration)
	assert.GreaterOrEqual(t, len(runs), 2*env.Plan.Reps, "the first rounds ran")
	assert.LessOrEqual(t, env.Spent, budget+budget/10, "the sweep keeps to its budget")
	assert.Less(t, took, budget+budget/5, "with the report written")
	out := stdout.String()
	assert.Contains(t, out, "budget left")
	assert.Contains(t, out, "budget: done after")
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "-budget 1m15s: after the first rounds")
	assert.Contains(t, string(md), "- **Time:** ")
}

// TestCompareInterrupt sends SIGINT to a real topobench in the middle of a
// sweep: finished cells stay on disk with a report, no child survives, and
// -resume finishes the rest.
func TestCompareInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx and wrk")
	}
	bin := buildTopobench(t)

	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-preset", "2013",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "3",
		"-duration", "1s", "-warmup", "0s", "-connections", "20", "-threads", "2",
		"-free-ports", "-out", dir)
	// Read while the process writes: a Tail is safe for that, a Buffer is not.
	stderr := proc.NewTail(64 << 10)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	// Interrupt once the second cell has finished, during the third.
	sc := bufio.NewScanner(pipe)
	var seen []string
	finished := 0
	for finished < 2 && sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.Contains(sc.Text(), "req/s") {
			finished++
		}
	}
	require.Equal(t, 2, finished, "output:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
	time.Sleep(300 * time.Millisecond) // into the third cell's wrk run
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
	assert.NotZero(t, ee.ExitCode())
	assert.Contains(t, stderr.String(), "interrupted")
	assert.Contains(t, stderr.String(), "-resume "+dir)
	assert.Empty(t, leftovers(t, dir))
	assert.Empty(t, namespacesOf(t, cmd.Process.Pid), "Ctrl-C must remove the run's network namespaces")
	socks, _ := filepath.Glob(filepath.Join(dir, "sock", "*"))
	assert.Empty(t, socks, "sockets left behind")

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.True(t, env.Interrupted)
	assert.GreaterOrEqual(t, len(runs), 2)
	assert.Less(t, len(runs), 6)
	for _, r := range runs {
		assert.False(t, r.Failed(), "an interrupted cell must not be recorded: %s %s", r.Name(), r.Error)
	}
	assert.FileExists(t, filepath.Join(dir, "summary.md"))

	// -resume measures only what is missing.
	var rout, rerr bytes.Buffer
	err = run(ctx, []string{"compare", "-resume", dir, "-free-ports"}, &rout, &rerr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", rout.String(), rerr.String())
	assert.Equal(t, 6-len(runs), strings.Count(rout.String(), "req/s"), rout.String())
	env, runs, err = results.Load(dir)
	require.NoError(t, err)
	assert.False(t, env.Interrupted)
	assert.Len(t, runs, 6)
	assert.Empty(t, leftovers(t, dir))
}

func TestCompareBadInput(t *testing.T) {
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown topology", []string{"-topologies", "nginx-php"}, "-topologies"},
		{"a TLS topology under the event loops", []string{"-preset", "2013", "-load", "builtin", "-engine", "loops", "-topologies", "standalone,nginx-tls-http"}, "-engine: loops: the event loops speak no TLS, which nginx-tls-http does"},
		{"TLS beside plaintext under the default duet", []string{"-topologies", "standalone,standalone-tls,nginx-tls-http"}, "-topologies: duet: pairs every topology with one baseline; measure standalone-tls, nginx-tls-http (over TLS) and standalone (plaintext) in separate sweeps"},
		{"an unknown TLS key", []string{"-topologies", "standalone-tls", "-tls-key", "rsa4096"}, `-tls-key: unknown TLS key type "rsa4096" (want p256 or rsa2048)`},
		{"an unknown TLS version", []string{"-topologies", "standalone-tls", "-tls-version", "1.1"}, `-tls-version: unknown TLS version "1.1" (want 1.3 or 1.2)`},
		{"a TLS resumption neither on nor off", []string{"-topologies", "standalone-tls", "-tls-resume", "yes"}, `-tls-resume: "yes", want on or off`},
		{"TLS flags without a TLS topology", []string{"-preset", "2013", "-tls-version", "1.2"}, "-topologies: names no topology over TLS (standalone-tls, nginx-tls-http, nginx-tls-http-unix), and -tls-key, -tls-version or -tls-resume applies to them alone"},
		{"TLS through agents", []string{"-preset", "2013", "-topologies", "standalone-tls", "-hello-agent", "http://127.0.0.1:1", "-nginx-agent", "http://127.0.0.1:2"}, "-topologies: standalone-tls speaks TLS, whose servers run here only"},
		{"bad gomaxprocs", []string{"-gomaxprocs", "1,x"}, "-gomaxprocs"},
		{"zero gomaxprocs", []string{"-gomaxprocs", "0"}, "-gomaxprocs"},
		{"no reps", []string{"-preset", "2013", "-reps", "0"}, "-reps"},
		{"reps auto", []string{"-reps", "auto:3"}, "-reps: auto: removed; -budget D -precision P adds runs"},
		{"pairs", []string{"-pairs", "5"}, "-pairs: removed; -budget D fits the pairs to the time"},
		{"scenario", []string{"-scenario", "2009"}, "-scenario: now -preset, as in -preset 2009"},
		{"unknown preset", []string{"-preset", "1999"}, `-preset: unknown preset "1999" (known: duet, paired, tls, 2013`},
		{"no pairs", []string{"-reps", "0"}, "-reps: 0 pairs, want at least 1"},
		{"precision with reps", []string{"-reps", "3", "-precision", "3%"}, "-precision: applies to -budget"},
		{"budget and reps", []string{"-preset", "2013", "-budget", "10m", "-reps", "3"}, "-budget and -reps: give one"},
		{"budget too short", []string{"-preset", "2013", "-budget", "1m"}, "-budget: 1m0s is too short for 18 cells"},
		{"budget zero", []string{"-preset", "2013", "-budget", "0s"}, "-budget: 0s, want a positive duration"},
		{"precision without budget", []string{"-preset", "2013", "-precision", "3%"}, "-precision: applies to -budget, the goal it stops at"},
		{"precision not a fraction", []string{"-preset", "2013", "-budget", "10m", "-precision", "5 percent"}, "-precision: \"5 percent\" is not a fraction"},
		{"reps neither count nor auto", []string{"-preset", "2013", "-reps", "many"}, "-reps"},
		{"no connections", []string{"-connections", "0"}, "-connections"},
		{"wait not a duration", []string{"-preset", "2013", "-wait", "5ms,x"}, `-wait: "x" is not a duration`},
		{"work not a duration", []string{"-preset", "2013", "-work", "50"}, `-work: "50" is not a duration`},
		{"rate not a number", []string{"-preset", "2013", "-rate", "fast"}, `-rate: "fast" is not a rate`},
		{"bad upstream keepalive", []string{"-upstream-keepalive", "300,lots"}, `-upstream-keepalive: "lots", want auto or a positive number of connections`},
		{"upstream keepalive twice", []string{"-upstream-keepalive", "auto,auto"}, "-upstream-keepalive: auto listed twice"},
		{"upstream keepalive without nginx", []string{"-upstream-keepalive", "300,auto", "-topologies", "standalone"}, "-upstream-keepalive: 2 pools, and no topology"},
		{"bad load CPU list", []string{"-pin-load", "abc"}, "-pin-load"},
		{"unknown isolation", []string{"-isolate", "vm"}, "-isolate"},
		{"negative link delay", []string{"-link-delay", "-1ms"}, "-link-delay"},
		{"link delay below tc's resolution", []string{"-link-delay", "1500ns"}, "-link-delay"},
		{"link delay on one loopback", []string{"-isolate", "none", "-link-delay", "100us"}, "-link-delay: needs -isolate netns"},
		{"bad CPU sets", []string{"-cpus", "0"}, "-cpus"},
		{"overlapping CPU sets", []string{"-cpus", "0/0"}, "-cpus"},
		{"both CPU flags", []string{"-cpus", "none", "-pin-load", "0"}, "-cpus"},
		{"connections not a multiple", []string{"-preset", "2013", "-threads", "3", "-connections", "10"}, "-connections"},
		{"fractional duration", []string{"-preset", "2013", "-duration", "1500ms"}, "-duration"},
		{"unparsable duration", []string{"-preset", "2013", "-duration", "soon"}, "-duration"},
		{"stray argument", []string{"extra"}, "unexpected argument"},
		{"resume with plan flags", []string{"-resume", dir, "-reps", "2"}, "-reps"},
		{"resume of nothing", []string{"-resume", filepath.Join(dir, "none")}, "-resume"},
		{"swarm flags without -swarm", []string{"-swarm-tolerance", "1s"}, "-swarm-tolerance: needs -swarm"},
		{"bad swarm engines", []string{"-swarm", "-swarm-engines", "node-b"}, `-swarm-engines: "node-b" is not NODE=ENGINE`},
		{"swarm-allow without -swarm", []string{"-swarm-allow", "10.0.0.2"}, "-swarm-allow: needs -swarm"},
		{"swarm-allow not an address", []string{"-swarm", "-swarm-allow", "node-b"}, `-swarm-allow "node-b": not an IP address`},
		{"unknown design", []string{"-design", "latin-square"}, `-design: "latin-square", want rounds, paired or duet`},
		{"duet with wrk", []string{"-design", "duet", "-load", "wrk"}, "-design: duet: needs -load builtin"},
		{"window without paired", []string{"-preset", "2013", "-window", "2s"}, "-window: applies to -design paired"},
		{"cross-check without paired", []string{"-preset", "2013", "-cross-check", "wrk"}, "-cross-check: applies to -design paired"},
		{"paired and duration", []string{"-design", "paired", "-duration", "2s"}, "-duration: under -design paired a window's length is -window"},
		{"fractional window", []string{"-design", "paired", "-window", "1500ms"}, `-window: "1500ms", want whole seconds`},
		{"window of no topology", []string{"-design", "duet", "-topologies", "standalone,nginx-http", "-window", "2s,nginx-fcgi-tcp=6s"}, `-window: "nginx-fcgi-tcp" is not a topology of the plan`},
		{"lead without paired", []string{"-preset", "2013", "-lead", "1s"}, "-lead: applies to -design paired"},
		{"process without paired", []string{"-preset", "2013", "-standalone-process", "shared"}, "-standalone-process: applies to -design paired"},
		{"unknown process", []string{"-design", "paired", "-standalone-process", "both"}, `-standalone-process: "both", want own or shared`},
		{"duet shared", []string{"-design", "duet", "-standalone-process", "shared"}, "-standalone-process: shared cannot run a duet"},
		{"negative lead", []string{"-design", "paired", "-load", "builtin", "-lead", "-1s"}, `-lead: "-1s", want a duration from 0 to 1m`},
		{"lead of no topology", []string{"-design", "paired", "-load", "builtin", "-lead", "1s,nginx-h2=2s"}, `-lead: "nginx-h2" is not a topology of the plan`},
		{"lead with wrk", []string{"-design", "paired", "-load", "wrk", "-lead", "1s"}, "-lead: applies to -load builtin"},
		{"paired without standalone", []string{"-design", "paired", "-topologies", "nginx-http,nginx-fcgi-tcp"}, "-design: paired: -topologies needs standalone, which every other is measured beside"},
		{"paired with two loads", []string{"-design", "paired", "-load", "wrk,builtin"}, "-design: paired: give one -load"},
		{"paired open loop", []string{"-design", "paired", "-load", "builtin", "-rate", "1000"}, "-design: paired: windows are closed loop"},
		{"budget and pairs", []string{"-design", "paired", "-budget", "10m", "-reps", "5"}, "-budget and -reps: give one"},
		{"paired budget too short", []string{"-design", "paired", "-budget", "2m"}, "-budget: 2m0s is too short for 8 topologies x 2 blocks of pairs"},
		{"cross-check with the pairs' load", []string{"-design", "paired", "-load", "wrk", "-cross-check", "wrk"}, "-cross-check: the pairs' load is wrk already"},
		{"cross-check unknown load", []string{"-design", "paired", "-load", "builtin", "-cross-check", "ab"}, `-cross-check: unknown load generator "ab"`},
		{"cross-check bad duration", []string{"-design", "paired", "-load", "builtin", "-cross-check", "wrk:soon"}, `-cross-check: "wrk:soon", want LOAD or LOAD:DURATION`},
		{"pinned servers elsewhere", []string{"-preset", "2013", "-hello-agent", "http://127.0.0.1:1", "-nginx-agent", "http://127.0.0.1:2", "-pin-server", "0"}, "-pin-server: the servers run elsewhere"},
		{"an nginx agent alone", []string{"-preset", "2013", "-nginx-agent", "http://127.0.0.1:2"}, "-nginx-agent: needs -hello-agent"},
		{"a speed probe elsewhere", []string{"-preset", "2013", "-hello-agent", "http://127.0.0.1:1", "-nginx-agent", "http://127.0.0.1:2", "-speed-probe"}, "-speed-probe: it measures this machine's CPUs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"compare"}, tc.args...), &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error()+stderr.String(), tc.want)
			assert.NotContains(t, strings.TrimSpace(err.Error()), "\n", "one line")
			assert.NotZero(t, exitCode(err))
			_, statErr := os.Stat(filepath.Join("results"))
			assert.True(t, os.IsNotExist(statErr), "bad input must not create results/")
		})
	}
}

// TestComparePlanErrorNamesTheFlag: a plan's field that no flag of its
// name sets is named by the flag that set it.
func TestComparePlanErrorNamesTheFlag(t *testing.T) {
	for _, tc := range []struct {
		name  string
		given []string
		err   error
		want  string
	}{
		{"a flag of the field's name", []string{"reps"}, plan.Errorf(plan.Reps, "0, want at least 1"), "-reps: 0, want at least 1"},
		{"a preset's request count", nil, plan.Errorf(plan.Requests, "-1 is negative"), "-preset: -1 is negative"},
		{"a preset's fraction", nil, plan.Errorf(plan.Fraction, "a fraction of capacity of 2"), "-preset: a fraction of capacity of 2"},
		{"-cpus's server list", []string{"cpus"}, plan.Errorf(plan.PinServer, "the servers run elsewhere"), "-cpus: the servers run elsewhere"},
		{"-pin-server's own list", []string{"cpus", "pin-server"}, plan.Errorf(plan.PinServer, "x"), "-pin-server: x"},
		{"a list no flag gave", nil, plan.Errorf(plan.PinLoad, "x"), "-pin-load: x"},
		{"wrapped", []string{"cpus"}, fmt.Errorf("resuming: %w", plan.Errorf(plan.PinLoad, "x")), "resuming: -cpus: x"},
		{"a budget's goal", []string{"budget", "precision"}, plan.Errorf(plan.Precision, "1, want a fraction between 0 and 1 such as 5%%"), "-precision: 1, want a fraction between 0 and 1 such as 5%"},
		{"the speed probes", []string{"speed-probe"}, fmt.Errorf("sweep: %w", plan.Errorf(plan.SpeedProbe, "the probe on CPU 0 exited: exit status 1")), "sweep: -speed-probe: the probe on CPU 0 exited: exit status 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc := &compareCommand{given: map[string]bool{}}
			for _, g := range tc.given {
				cc.given[g] = true
			}
			err := cc.planError(tc.err)
			assert.Equal(t, tc.want, err.Error())
			assert.Equal(t, 2, exitCode(err), "a bad plan exits 2")
		})
	}
}

func TestCompareRefusesTooManyConnections(t *testing.T) {
	// More connections than the open-files limit allows: refused by the
	// preflight before anything starts.
	var stdout, stderr bytes.Buffer
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-connections", "1000000", "-threads", "100", "-out", dir}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "preflight")
	assert.NoDirExists(t, dir)
}

// TestComparePaired runs a real short paired sweep: one start of the
// servers, standalone's and nginx-http's windows in pairs, each recorded
// with its pair, and the ratio taken pair by pair with its method in the
// report.
func TestComparePaired(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx and wrk")
	}
	t.Setenv(runAsMainEnv, "1")                    // the cross-check's engine is this binary
	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-design", "paired",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "3", "-window", "1s", "-seed", "3", "-cross-check", "builtin:1s",
		"-connections", "20", "-threads", "2", "-isolate", "none", "-cpus", "none", "-free-ports", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.NotNil(t, env.Plan.Paired)
	assert.Equal(t, uint64(3), env.Plan.Paired.Seed)
	require.Len(t, runs, 14, "3 pairs of 2 windows of nginx-http and of the A/A, and the cross-check's 2 runs")
	firsts := map[bool]int{}
	var checks int
	for _, r := range runs {
		if r.LoadName() == results.LoadBuiltin {
			checks++
			require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
			assert.Nil(t, r.Pair, "the cross-check is no pair")
			continue
		}
		require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
		require.NotNil(t, r.Pair, r.Name())
		assert.Contains(t, []string{"nginx-http", "standalone"}, r.Pair.With, "nginx-http's pairs and the A/A's")
		assert.Positive(t, r.Figures.Requests, r.Name())
		assert.Contains(t, strings.Join(r.Command, " "), "-c20 -d1s", r.Name())
		require.NotNil(t, r.CPU.Server, "the servers' CPU around each window")
		if r.Topology == "nginx-http" {
			firsts[r.Pair.First]++
		}
	}
	assert.Equal(t, 3, firsts[true]+firsts[false])
	assert.Equal(t, 2, checks)

	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	require.NoError(t, err)
	var sum struct {
		Cells []struct {
			Topology string `json:"topology"`
			Ratio    *struct {
				Center float64  `json:"center"`
				N      int      `json:"n"`
				Method string   `json:"method"`
				Lag1   *float64 `json:"lag1"`
			} `json:"ratio_to_standalone"`
		}
	}
	require.NoError(t, json.Unmarshal(b, &sum))
	var found bool
	for _, c := range sum.Cells {
		if c.Topology != "nginx-http" || c.Ratio == nil || c.Ratio.Method == "" {
			continue // the cross-check's ratio has no pairs
		}
		found = true
		require.NotNil(t, c.Ratio)
		assert.Equal(t, 3, c.Ratio.N, "one ratio a pair")
		assert.NotEmpty(t, c.Ratio.Method)
		assert.NotNil(t, c.Ratio.Lag1)
		// The center is the pairs' geometric mean: check it against the records.
		var logs float64
		byIndex := map[int][2]float64{}
		for _, r := range runs {
			if r.Pair == nil || r.Pair.With != "nginx-http" {
				continue
			}
			v := byIndex[r.Pair.Index]
			if r.Topology == "standalone" {
				v[0] = r.Figures.ReqPerSec
			} else {
				v[1] = r.Figures.ReqPerSec
			}
			byIndex[r.Pair.Index] = v
		}
		for _, v := range byIndex {
			logs += math.Log(v[1] / v[0])
		}
		assert.InDelta(t, math.Exp(logs/3), c.Ratio.Center, 1e-9)
	}
	assert.True(t, found)
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(md), "- **Design:** paired")
	assert.Regexp(t, `\| [^|]*GOMAXPROCS=1[^|]* \| nginx-http \| 3 \| t on the spread of 3 pairs[^|]+ \| [-+][0-9.]+ \|`, string(md))
	assert.Regexp(t, `A/A [0-9.]+ ± `, string(md), "the A/A's row")
	assert.Regexp(t, `### Cross-check \(builtin\)\n\nOne 1s builtin run of each after the pairs, at GOMAXPROCS=1`, string(md))
	assert.Regexp(t, `\| nginx-http \| 1 \| [0-9,]+ \| [0-9,]+ \| [0-9.]+ \| [0-9.]+ ± [0-9.]+% \|`, string(md))
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), "<caption>Cross-check (builtin)</caption>")
	assert.Contains(t, stdout.String(), "pair 3 nginx-http: ")
	assert.Contains(t, stdout.String(), "pair 3 A/A: ")

	// The window spread of the sweep: its pairs, spreads and the time a
	// ratio needs.
	var wout bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"windows", dir}, &wout, &stderr))
	assert.Regexp(t, `GOMAXPROCS=1 connections=20 nginx-http\s+1s\s+3\s`, wout.String())
	err = run(context.Background(), []string{"windows", filepath.Join(dir, "none")}, &wout, &stderr)
	require.Error(t, err)
}

// TestComparePairedInterrupt runs a real paired sweep of the engine's
// session on a budget, sends SIGINT during its pairs (to the harness and
// its session child, as Ctrl-C does to the process group), then resumes it
// with a new budget: the finished
// windows stay (a pair cut in two keeps its first window and gives no
// ratio), nothing survives the interrupt, and -resume completes the first
// pairs and spends its budget where the ratio is widest.
func TestComparePairedInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx and wrk")
	}
	bin := buildTopobench(t)

	dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-preset", "2013", "-design", "paired", "-load", "builtin", "-budget", "90s", "-window", "1s", "-lead", "250ms",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-connections", "20", "-threads", "2",
		"-cpus", "first", "-free-ports", "-out", dir)
	stderr := proc.NewTail(64 << 10)
	cmd.Stderr = stderr
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	// Interrupt once three windows have finished, during the fourth.
	sc := bufio.NewScanner(pipe)
	var seen []string
	finished := 0
	for finished < 3 && sc.Scan() {
		seen = append(seen, sc.Text())
		if strings.HasPrefix(sc.Text(), "[pair ") && strings.Contains(sc.Text(), "req/s") {
			finished++
		}
	}
	require.Equal(t, 3, finished, "output:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	if pids, _ := filepath.Glob("/proc/[0-9]*/cmdline"); len(pids) > 0 {
		// Ctrl-C reaches the session child too.
		for _, p := range pids {
			b, err := os.ReadFile(p)
			if err == nil && strings.Contains(string(b), "load\x00-session") && strings.Contains(string(b), bin) {
				if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
					_ = syscall.Kill(pid, syscall.SIGINT)
				}
			}
		}
	}
	for sc.Scan() {
		seen = append(seen, sc.Text())
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "stdout:\n%s\nstderr:\n%s", strings.Join(seen, "\n"), stderr.String())
	assert.Contains(t, stderr.String(), "interrupted")
	assert.Contains(t, stderr.String(), "-resume "+dir)
	assert.Empty(t, leftovers(t, dir))
	assert.Empty(t, namespacesOf(t, cmd.Process.Pid), "Ctrl-C must remove the run's network namespaces")

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.True(t, env.Interrupted)
	require.NotNil(t, env.Plan.Paired)
	first := env.Plan.Paired.Pairs
	assert.GreaterOrEqual(t, len(runs), 3)
	assert.Less(t, len(runs), 2*first, "interrupted during the first pairs")
	for _, r := range runs {
		assert.False(t, r.Failed(), "an interrupted window must not be recorded: %s %s", r.Name(), r.Error)
		assert.NotNil(t, r.Pair)
	}
	assert.FileExists(t, filepath.Join(dir, "summary.md"))

	// -resume with a new budget for the rest, here: the engine is this
	// binary.
	t.Setenv(runAsMainEnv, "1")
	var rout, rerr bytes.Buffer
	began := time.Now()
	err = run(ctx, []string{"compare", "-resume", dir, "-budget", "50s", "-free-ports"}, &rout, &rerr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", rout.String(), rerr.String())
	assert.Less(t, time.Since(began), 50*time.Second+50*time.Second/5, "the new budget, with the report")
	env, runs, err = results.Load(dir)
	require.NoError(t, err)
	assert.False(t, env.Interrupted)
	pairs := map[int]int{}
	for _, r := range runs {
		pairs[r.Pair.Index]++
	}
	complete := 0
	for _, n := range pairs {
		if n == 2 || n > 2 {
			complete++
		}
	}
	assert.GreaterOrEqual(t, complete, first, "the first pairs completed")
	assert.Contains(t, rout.String(), "budget: done after")
	assert.Empty(t, leftovers(t, dir))
}

// TestComparePairedEngine runs a real short paired sweep on the built-in
// engine's session: one session child per start of the servers holds the
// pools, each window's record has its drain and histogram, and wrk's
// cross-check follows.
func TestComparePairedEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep with nginx, wrk and the engine")
	}
	t.Setenv(runAsMainEnv, "1") // the engine is this binary
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-design", "paired", "-load", "builtin",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "3", "-window", "1s",
		"-connections", "50", "-threads", "2", "-isolate", "none", "-cpus", "auto", "-free-ports",
		"-cross-check", "wrk:1s", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Empty(t, leftovers(t, dir))

	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	// The calibration's load session ends with its servers: the pairs'
	// session is one that keeps its connections (below, every window's
	// command is the session's).
	require.NotNil(t, env.CPUSplit, "-cpus auto calibrated")
	require.Len(t, runs, 3*2+3*2+2, "nginx-http's pairs, the A/A's and the cross-check")
	for _, r := range runs {
		require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
		if r.Pair == nil {
			assert.Equal(t, results.LoadWrk, r.LoadName(), "the cross-check")
			continue
		}
		cmd, pool := strings.Join(r.Command, " "), r.Topology
		// With standalone in a process of its own (the default), every
		// other A/A pair gives standalone's role to the other process,
		// whose pool is the twin's.
		swapped := r.Pair.With == "standalone" && r.Pair.Index%2 == 0
		if r.Pair.Twin != swapped {
			pool = "standalone-twin"
		}
		assert.Contains(t, cmd, "load -session window "+pool+" 1s lead 1s", r.Name())
		assert.Equal(t, time.Second, r.Lead, "%s: the default lead before the measured time", r.Name())
		assert.Positive(t, r.LeadAnswers, r.Name())
		assert.Positive(t, r.Drain, "%s: the drain is recorded, apart", r.Name())
		assert.Zero(t, r.Reconnects, r.Name())
		assert.Zero(t, r.Figures.Errors.Total(), r.Name())
		assert.True(t, r.Figures.Histogram, r.Name())
		assert.Positive(t, r.CPU.Load.Total(), "%s: the session's CPU over the window", r.Name())
		h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+hdr.EncodedExt))
		require.NoError(t, err, r.Name())
		assert.Equal(t, r.Figures.Requests, h.TotalCount(), "%s: the window's histogram is exactly its answers", r.Name())
	}
	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Regexp(t, `\| nginx-http \| 1 \| [0-9,]+ \| [0-9,]+ \| [0-9.]+ \| [0-9.]+ ± [0-9.]+% \|`, string(md))
	assert.NotContains(t, string(md), "### GOMAXPROCS=1 connections=50 load=wrk", "the cross-check is no group")
	assert.Contains(t, string(md), "- **Load:** `topobench load -session: -connections 50 closed loop, window POOL 1s lead 1s`, in windows")
	assert.Contains(t, string(md), "each window's first 1s (the pool starting from idle) and the drains between windows are not measured")
}

// buildTopobench builds this command into the test's temporary directory,
// for tests that signal it as a separate process.
func buildTopobench(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "topobench")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

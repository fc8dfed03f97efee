package loadgen

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
)

// engineScript writes a shell script that stands in for "topobench load":
// it prints summary, writes the histograms into -out when given, and
// exits with status.
func engineScript(t *testing.T, dir, summary string, status int) string {
	t.Helper()
	bin := filepath.Join(dir, "engine")
	script := "#!/bin/sh\n" +
		"if [ \"$4\" = -out ]; then mkdir -p \"$5\"; echo HISTF > \"$5/latency.hdr\"; echo '0.1 0.5' > \"$5/latency.hgrm\"; fi\n" +
		"printf '%s\\n' '" + summary + "'\n" +
		"exit " + string(rune('0'+status)) + "\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin
}

// TestBuiltinMeasure: a recorded run of its own child keeps its spec and
// histograms beside the record, and its summary's figures in it; a run
// that measured only errors (ExitNoneSucceeded) is a result, not a
// failure; a child that prints nothing is.
func TestBuiltinMeasure(t *testing.T) {
	c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 10, Load: results.LoadBuiltin, Rep: 1}
	for _, tc := range []struct {
		name    string
		summary string
		status  int
		err     string
	}{
		{"answers", `{"requests": 500}`, 0, ""},
		{"only errors", `{"requests": 0}`, 3, ""},
		{"no summary", ``, 0, "the engine printed no summary"},
		{"not JSON", `requests: 5`, 0, "reading the engine's summary"},
		{"failed", `{"requests": 1}`, 1, "exit status 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, results.Create(dir))
			g := &builtinGen{plan: smallPlan("standalone"), bin: engineScript(t, dir, tc.summary, tc.status), dir: dir}
			run := results.Run{Cell: c, URL: "http://127.0.0.1:8080/"}
			_, err := g.Measure(context.Background(), c, time.Second, &run)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, run.Figures)
			assert.Equal(t, run.Figures.Requests, map[int]int64{0: 500, 3: 0}[tc.status])
			assert.Equal(t, []string{g.bin, "load", "-spec", filepath.Join(dir, results.RunsDir, c.Key()+".spec"), "-out", filepath.Join(dir, results.RunsDir, "."+c.Key()+".load")}, run.Command)
			require.NotNil(t, run.CPU)
			for _, ext := range []string{"spec", "hdr", "hgrm"} {
				assert.FileExists(t, filepath.Join(dir, results.RunsDir, c.Key()+"."+ext))
			}
			assert.NoDirExists(t, filepath.Join(dir, results.RunsDir, "."+c.Key()+".load"), "the scratch directory goes")
		})
	}
}

// TestBuiltinWarm: a warmup's spec goes once it has run, and nothing of
// it stays beside the records.
func TestBuiltinWarm(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	g := &builtinGen{plan: smallPlan("standalone"), bin: engineScript(t, dir, `{"requests": 5}`, 0), dir: dir}
	c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 10, Load: results.LoadBuiltin, Rep: 1}
	require.NoError(t, g.Warm(context.Background(), c, "http://127.0.0.1:8080/", time.Second))
	entries, err := os.ReadDir(filepath.Join(dir, results.RunsDir))
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestBuiltinBound: a child may run for the measured load, the last
// answers' timeout and start-up slack before it is stopped as hung.
func TestBuiltinBound(t *testing.T) {
	p := smallPlan("standalone")
	g := &builtinGen{plan: p}
	closed := results.Cell{Connections: 10}
	assert.Equal(t, 10*time.Second+p.Timeout+30*time.Second, g.bound(closed, 10*time.Second, false))
	assert.Equal(t, 3*time.Second+p.Timeout+30*time.Second, g.bound(closed, 3*time.Second, true))
	counted := results.Cell{Connections: 10, Schedule: results.Schedule{Rate: 100, Requests: 500}}
	assert.Equal(t, 5*time.Second+p.Timeout+30*time.Second, g.bound(counted, time.Second, false), "500 requests at 100 a second")
	probe := results.Cell{Connections: 10, Schedule: concurrencyProbe}
	assert.Equal(t, 25*time.Second+(p.Timeout+10*time.Second)+30*time.Second, g.bound(probe, time.Second, false))
}

// fakeRunner logs what a runner's session asks of it.
type fakeRunner struct{ log []string }

func (r *fakeRunner) Warm(_ context.Context, c results.Cell, url string, d time.Duration) error {
	r.log = append(r.log, "warm "+c.Topology+" "+url+" "+d.String())
	return nil
}

func (r *fakeRunner) Measure(_ context.Context, c results.Cell, d time.Duration, run *results.Run) ([]byte, error) {
	r.log = append(r.log, "measure "+c.Topology+" "+run.URL+" "+d.String())
	return []byte("raw"), errors.New("measured")
}

// TestPerRun: a runner's session keeps nothing across windows: a warmup
// window warms the pool's URL, a recorded one measures it, a closed pool
// has no windows.
func TestPerRun(t *testing.T) {
	r := &fakeRunner{}
	ctx := context.Background()
	sess, err := PerRun(r).Begin(ctx, true)
	require.NoError(t, err)
	assert.False(t, sess.Keeps(), "a runner opens its connections anew every window")
	c := results.Cell{Topology: "standalone"}
	require.NoError(t, sess.Open(ctx, "p", c, "http://h/"))
	_, err = sess.Window(ctx, "p", time.Second, nil)
	require.NoError(t, err)
	raw, err := sess.Window(ctx, "p", 2*time.Second, &results.Run{URL: "http://h/"})
	require.EqualError(t, err, "measured")
	assert.Equal(t, "raw", string(raw))
	require.NoError(t, sess.Close(ctx, "p"))
	_, err = sess.Window(ctx, "p", time.Second, nil)
	require.ErrorContains(t, err, `no pool "p" open`)
	require.NoError(t, sess.End())
	assert.Equal(t, []string{"warm standalone http://h/ 1s", "measure standalone http://h/ 2s"}, r.log)
}

// TestOptions: where a generator's child runs comes from its options.
func TestOptions(t *testing.T) {
	allow := netip.MustParseAddr("169.254.1.1")
	p := smallPlan("standalone")
	w := NewWrk(p, "/usr/bin/wrk", "/r/s.lua", "/r", InNetns("cli", allow), PinnedTo(cpuset.Of(2))).(perRun).r.(*wrkGen)
	assert.Equal(t, "cli", w.netns)
	assert.Equal(t, allow, w.allow)
	assert.Equal(t, "2", w.options(results.Cell{Connections: 1}, "http://169.254.1.1/", time.Second).CPUs)
	assert.Nil(t, w.cgroup)

	g, err := NewBuiltin(p, "/r", WithBin("/bin/topobench"), Counting(func(pool string) Counters { return Counters{Total: "/g/" + pool} }))
	require.NoError(t, err)
	b := g.(*builtinGen)
	assert.Equal(t, "/bin/topobench", b.bin)
	assert.Equal(t, "/g/standalone", b.counters("standalone").Total)
	assert.NotNil(t, b.client, "the engine's own session client")
	g, err = NewBuiltin(p, "/r")
	require.NoError(t, err)
	self, err := os.Executable()
	require.NoError(t, err)
	assert.Equal(t, self, g.(*builtinGen).bin, "the harness's own binary")
}

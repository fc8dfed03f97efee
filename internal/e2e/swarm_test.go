package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster/swarm"
	"github.com/topobench/topobench/internal/cluster/swarmtest"
	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// ran is what one run of the binary left: its output and exit code.
type ran struct {
	stdout, stderr string
	code           int
}

// topobench runs the built binary in this directory, inside the
// checkout that -swarm builds its image from. The end of ctx is Ctrl-C,
// as a user presses it; the wait after it covers removing the services.
func topobench(ctx context.Context, t *testing.T, args ...string) ran {
	t.Helper()
	cmd := exec.CommandContext(ctx, testenv.TopobenchBin(t), args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 2 * time.Minute
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := ran{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		require.NoError(t, err, "topobench %s\nstderr:\n%s", strings.Join(args, " "), r.stderr)
	}
	if ee != nil {
		r.code = ee.ExitCode()
	}
	return r
}

// errText is the error main printed last on stderr ("topobench: " and
// the error, which may span lines), or "" when there is none.
func (r ran) errText() string {
	s := strings.TrimSuffix(r.stderr, "\n")
	i := strings.LastIndex("\n"+s, "\ntopobench: ")
	if i < 0 {
		return ""
	}
	return s[i+len("topobench: "):]
}

func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	require.NoError(t, err, "docker %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// needBase makes the Debian base image of the cluster's image when the
// engine lacks it, as make compose does. It logs what it made and how
// long that took: a new machine's engine has no image, so this is part
// of make test's time there.
func needBase(t *testing.T) {
	t.Helper()
	if exec.Command("docker", "image", "inspect", swarm.DefaultBase).Run() == nil {
		return
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Fatalf("the engine has no %s and debootstrap, which makes it, is not found: .ci/install-tools --tests installs what the swarm tests need", swarm.DefaultBase)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("bash", "../../compose/base-images.sh")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	require.NoError(t, err, "compose/base-images.sh: %s%s", stderr.String(), stdout.String())
	t.Logf("made the base images in %v (compose/base-images.sh):\n%s", time.Since(t0).Round(time.Second), strings.TrimSpace(stderr.String()))
}

// removeImages removes the cluster's images a test's sweeps built, and
// the stopped containers of their tasks the engine still keeps.
func removeImages(t *testing.T, images []string) {
	for _, img := range images {
		if ids := docker(t, "ps", "-aq", "--filter", "ancestor="+img); ids != "" {
			exec.Command("docker", append([]string{"rm", "-f"}, strings.Fields(ids)...)...).Run()
		}
		exec.Command("docker", "image", "rm", img).Run()
	}
}

func nodes(t *testing.T) string {
	return docker(t, "node", "ls", "--format", "{{.ID}} {{.Status}} {{.Availability}}")
}

// swarmSweeps is the test swarm with what its sweeps left: the images
// they built, removed at the end, and the nodes as they were before.
type swarmSweeps struct {
	*swarmtest.Swarm
	nodesBefore string
	images      []string
}

// keepImage notes the image of the sweep in dir, if it got that far.
func (c *swarmSweeps) keepImage(dir string) {
	if env, _, err := results.Load(dir); err == nil && env.Cluster != nil {
		c.images = append(c.images, env.Cluster.Image)
	}
}

// compare runs the sweep of three topologies at 2000 req/s, extra
// flags after it, and logs what it wrote.
func (c *swarmSweeps) compare(ctx context.Context, t *testing.T, dir string, extra ...string) ran {
	args := append([]string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", c.WorkerID + "=" + c.Worker,
		"-topologies", "standalone,nginx-http,nginx-fcgi-unix", "-gomaxprocs", "1", "-load", "builtin",
		"-rate", "2000", "-connections", "64", "-reps", "1", "-duration", "3s", "-warmup", "1s",
		// This shared 2-core machine's timers wake late at times
		// (TestSwarm's note); the verdict itself is
		// cluster.TestRunLoadInvalid's.
		"-swarm-tolerance", "500ms",
		"-out", dir}, extra...)
	t0 := time.Now()
	r := topobench(ctx, t, args...)
	t.Logf("compare -swarm took %v, exit %d\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), r.code, r.stdout, r.stderr)
	c.keepImage(dir)
	return r
}

// TestCompareSwarm runs compare -swarm on a real two-node swarm on this
// machine (swarmtest): the servers on the worker, in its network
// namespace, the load first from the manager alone, then from both
// nodes; each time the report is written, every run's merged rate is
// its target's, the per-node histograms merge to the run's, and no
// service is left.
func TestCompareSwarm(t *testing.T) {
	swarmtest.HostEngine(t)
	swarmtest.LockHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()

	if st := docker(t, "info", "--format", "{{.Swarm.LocalNodeState}}"); st == "inactive" {
		t.Run("no swarm", func(t *testing.T) {
			r := topobench(ctx, t, "compare", "-preset", "2013", "-swarm", "-load", "builtin", "-out", filepath.Join(t.TempDir(), "r"))
			assert.Equal(t, 1, r.code)
			assert.Contains(t, r.errText(), "-swarm: no cluster: the engine is in no swarm")
			assert.NotContains(t, r.errText(), "\n")
			t.Log(r.errText())
		})
	}

	needBase(t)
	c := &swarmSweeps{Swarm: swarmtest.New(t), nodesBefore: nodes(t)}
	t.Cleanup(func() { removeImages(t, c.images) })

	t.Run("no role labels", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		r := c.compare(ctx, t, dir)
		require.NotZero(t, r.code)
		assert.Equal(t, "no ready node labelled topobench.role=server", r.errText())
		assert.NoDirExists(t, dir, "refused before anything was created")
	})

	c.Label(t, c.WorkerID, "server")
	c.Label(t, c.ManagerID, "load")
	t.Run("swarm-allow not the server node's", func(t *testing.T) { c.allowNotServer(ctx, t) })
	t.Run("one load node", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		// The server's own address named: accepted, and no -allow-remote
		// for a link-local one.
		r := c.compare(ctx, t, dir, "-swarm-allow", c.WorkerAddr)
		require.Zero(t, r.code, r.errText())
		assert.Contains(t, r.stdout, "cluster (swarm): servers on ")
		c.check(t, dir, []string{c.ManagerID})
	})
	t.Run("interrupted, then resumed", func(t *testing.T) { c.interrupted(ctx, t) })

	c.Label(t, c.WorkerID, "server,load")
	t.Run("two load nodes", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		r := c.compare(ctx, t, dir)
		require.Zero(t, r.code, r.errText())
		c.check(t, dir, []string{c.ManagerID, c.WorkerID})
	})
	t.Run("closed loop, two load nodes", func(t *testing.T) { c.closedLoop(ctx, t) })
}

// allowNotServer: a -swarm-allow that is not the server node's address
// is refused before the image is built.
func (c *swarmSweeps) allowNotServer(ctx context.Context, t *testing.T) {
	// 192.0.2.1 is TEST-NET-1: refused before anything, never sent to.
	dir := filepath.Join(testenv.ShortDir(t), "r")
	r := topobench(ctx, t, "compare", "-preset", "2013", "-swarm", "-swarm-engines", c.WorkerID+"="+c.Worker, "-swarm-allow", "192.0.2.1",
		"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-out", dir)
	t.Log(r.errText())
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.errText(), "-swarm-allow: 192.0.2.1: the swarm reports the server node ")
	assert.Contains(t, r.errText(), " at "+c.WorkerAddr+", not 192.0.2.1")
	assert.NotContains(t, r.errText(), "\n")
	assert.NotContains(t, r.stderr, "building the cluster's image", "refused before the image is built")
	assert.NoDirExists(t, dir)
	assert.Empty(t, docker(t, "service", "ls", "-q"))
}

// check reads the sweep in dir, whose load ran on the nodes loaders.
func (c *swarmSweeps) check(t *testing.T, dir string, loaders []string) {
	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.NotNil(t, env.Cluster)
	c.images = append(c.images, env.Cluster.Image)
	assert.Equal(t, c.WorkerID, env.Cluster.Server.ID)
	assert.Equal(t, c.WorkerAddr, env.Cluster.ServerAddr)
	assert.False(t, env.Cluster.Remote, "the test swarm's address is link-local")
	assert.Contains(t, env.Cluster.Parity, "load node ", "parity checked by a job on a load node")
	if len(loaders) > 1 {
		assert.Contains(t, env.Cluster.Parity, c.ManagerID[:12], "from a load node other than the server's")
	}
	var got []string
	for _, n := range env.Cluster.Load {
		got = append(got, n.ID)
		assert.True(t, n.ClockKnown)
	}
	assert.ElementsMatch(t, loaders, got)
	assert.NotEmpty(t, env.NginxVersion, "from procd on the server node")
	require.Len(t, runs, 3)
	for i := range runs {
		checkRun(t, dir, &runs[i], len(loaders))
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	require.NoError(t, err)
	assert.Contains(t, string(summary), "nginx-fcgi-unix")
	assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
	assert.Equal(t, c.nodesBefore, nodes(t), "the swarm's nodes as they were")
}

// checkRun checks one open-loop run of the sweep in dir: its rate,
// its nodes' shares, and its histogram the exact merge of theirs.
func checkRun(t *testing.T, dir string, r *results.Run, loaders int) {
	require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
	f := r.Figures
	require.NotNil(t, f)
	assert.InDelta(t, 2000, f.TargetRate, 1e-9)
	assert.InEpsilon(t, 2000, f.ReqPerSec, 0.05, "the shares add up to the rate")
	assert.Zero(t, f.Errors.Total())
	require.Len(t, r.Nodes, loaders)
	require.NotNil(t, r.CPU.Server, "cmd/hello's CPU time from procd on the server node")
	if r.Topology != "standalone" {
		require.NotNil(t, r.CPU.Nginx, "nginx's CPU time from procd on the server node")
	}
	var sum int64
	var hs []*hdrhistogram.Histogram
	for i, n := range r.Nodes {
		assert.InDelta(t, 2000/float64(loaders), n.Rate, 1e-9)
		assert.Less(t, n.StartSkew.Abs(), 500*time.Millisecond)
		assert.Empty(t, n.Invalid)
		sum += n.Figures.Requests
		h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+".node"+string(rune('0'+i))+hdr.EncodedExt))
		require.NoError(t, err)
		hs = append(hs, h)
		t.Logf("%s node %s: rate %.0f, skew %v (clock offset %v ±%v), slack %v, %d req, %.0f req/s, p99 %v p99.9 %v, cpu %.2fs load-bound %v",
			r.Name(), n.Hostname, n.Rate, n.StartSkew, n.ClockOffset, n.ClockUncertainty, n.Slack, n.Figures.Requests, n.Figures.ReqPerSec, n.Figures.P99, n.Figures.P999, n.CPU, n.LoadBound)
	}
	assert.Equal(t, sum, f.Requests)
	merged, err := hdr.Merge(hs...)
	require.NoError(t, err)
	h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+hdr.EncodedExt))
	require.NoError(t, err)
	assert.True(t, merged.Equals(h), "the run's histogram is the exact merge of the nodes'")
	t.Logf("%s merged: %d req, %.0f req/s of %.0f, p99 %v p99.9 %v; cpu/req server %.1fus",
		r.Name(), f.Requests, f.ReqPerSec, f.TargetRate, f.P99, f.P999, results.PerRequest(*r.CPU.Server, f.Requests))
}

// interrupted: Ctrl-C while the first cell's load runs keeps what
// finished and removes every service the run created; -resume with the
// same -swarm flags finishes the sweep on the same nodes.
func (c *swarmSweeps) interrupted(ctx context.Context, t *testing.T) {
	dir := filepath.Join(testenv.ShortDir(t), "r")
	ictx, icancel := context.WithCancel(ctx)
	defer icancel()
	go func() {
		for ictx.Err() == nil {
			if out, _ := exec.Command("docker", "service", "ls", "--format", "{{.Name}}").Output(); strings.Contains(string(out), "-load-") {
				icancel()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	swarmArgs := []string{"-swarm", "-swarm-engines", c.WorkerID + "=" + c.Worker, "-swarm-tolerance", "500ms"}
	r := topobench(ictx, t, append([]string{"compare", "-preset", "2013",
		"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-rate", "500", "-connections", "8",
		"-reps", "1", "-duration", "8s", "-warmup", "0s", "-out", dir}, swarmArgs...)...)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	require.NotZero(t, r.code)
	assert.Contains(t, r.errText(), "interrupted")
	assert.Contains(t, r.errText(), "finish with: topobench compare -resume "+dir+" -swarm and the same -swarm-* flags")
	c.keepImage(dir)
	assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")

	t0 := time.Now()
	r = topobench(ctx, t, append([]string{"compare", "-resume", dir}, swarmArgs...)...)
	t.Logf("compare -resume took %v\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), r.stdout, r.stderr)
	require.Zero(t, r.code, r.errText())
	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	assert.False(t, env.Interrupted)
	require.NotNil(t, env.Cluster)
	assert.Equal(t, c.WorkerID, env.Cluster.Server.ID)
	require.Len(t, runs, 1)
	assert.False(t, runs[0].Failed(), runs[0].Error)
	require.Len(t, runs[0].Nodes, 1)
	assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
}

// closedLoop: the connections split C/N (7: 4 and 3), no rate; the
// merge is exact as in open loop.
func (c *swarmSweeps) closedLoop(ctx context.Context, t *testing.T) {
	dir := filepath.Join(testenv.ShortDir(t), "r")
	t0 := time.Now()
	r := topobench(ctx, t, "compare", "-preset", "2013", "-swarm", "-swarm-engines", c.WorkerID+"="+c.Worker,
		"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-connections", "7",
		"-reps", "1", "-duration", "2s", "-warmup", "0s", "-swarm-tolerance", "500ms", "-out", dir)
	t.Logf("compare -swarm (closed loop) took %v\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), r.stdout, r.stderr)
	require.Zero(t, r.code, r.errText())
	env, runs, err := results.Load(dir)
	require.NoError(t, err)
	require.NotNil(t, env.Cluster)
	c.images = append(c.images, env.Cluster.Image)
	require.Len(t, runs, 1)
	run := runs[0]
	require.False(t, run.Failed(), "%s: %s", run.Name(), run.Error)
	require.NotNil(t, run.Figures)
	assert.Zero(t, run.Figures.TargetRate, "closed loop")
	assert.Zero(t, run.Figures.Errors.Total())
	require.Len(t, run.Nodes, 2)
	var conns []int
	var sum int64
	var hs []*hdrhistogram.Histogram
	for i, n := range run.Nodes {
		conns = append(conns, n.Connections)
		assert.Zero(t, n.Rate)
		assert.Empty(t, n.Invalid)
		assert.Positive(t, n.Figures.Requests)
		sum += n.Figures.Requests
		h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, run.Name()+".node"+string(rune('0'+i))+hdr.EncodedExt))
		require.NoError(t, err)
		hs = append(hs, h)
		t.Logf("node %s: %d connections, %d req, %.0f req/s, p99 %v", n.Hostname, n.Connections, n.Figures.Requests, n.Figures.ReqPerSec, n.Figures.P99)
	}
	assert.Equal(t, []int{4, 3}, conns)
	assert.Equal(t, sum, run.Figures.Requests)
	merged, err := hdr.Merge(hs...)
	require.NoError(t, err)
	h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, run.Name()+hdr.EncodedExt))
	require.NoError(t, err)
	assert.True(t, merged.Equals(h), "the run's histogram is the exact merge of the nodes'")
	assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
}

// TestCompareSwarmByHand runs compare -swarm's full sweep on the
// two-node test swarm, with the load from one node and then from
// both, keeping the results under $TOPOBENCH_SWARM_BYHAND (it runs only
// when that is set: it takes a quarter of an hour). Extra compare flags
// may follow in $TOPOBENCH_SWARM_ARGS (e.g. -duration 5s).
func TestCompareSwarmByHand(t *testing.T) {
	out := os.Getenv("TOPOBENCH_SWARM_BYHAND")
	if out == "" {
		t.Skip("TOPOBENCH_SWARM_BYHAND=DIR runs compare -swarm's full sweep by hand")
	}
	swarmtest.HostEngine(t)
	needBase(t)
	c := &swarmSweeps{Swarm: swarmtest.New(t), nodesBefore: nodes(t)}
	// Ctrl-C stops the sweep as it stops compare, which removes its
	// services; the test's cleanup then takes the swarm down.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	t.Cleanup(func() { removeImages(t, c.images) })
	for _, tc := range []struct{ name, worker string }{{"one-load-node", "server"}, {"two-load-nodes", "server,load"}} {
		c.Label(t, c.WorkerID, tc.worker)
		c.Label(t, c.ManagerID, "load")
		dir := filepath.Join(out, tc.name)
		args := []string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", c.WorkerID + "=" + c.Worker,
			"-topologies", "standalone,nginx-http,nginx-fcgi-unix", "-gomaxprocs", "1", "-load", "builtin", "-rate", "2000,4000", "-reps", "3"}
		args = append(append(args, strings.Fields(os.Getenv("TOPOBENCH_SWARM_ARGS"))...), "-out", dir)
		t0 := time.Now()
		r := topobench(ctx, t, args...)
		t.Logf("%s: topobench %s took %v: exit %d: %s\nstdout:\n%s\nstderr:\n%s", tc.name, strings.Join(args, " "), time.Since(t0).Round(time.Second), r.code, r.errText(), r.stdout, r.stderr)
		assert.Zero(t, r.code, r.errText())
		c.keepImage(dir)
		t.Logf("docker service ls: %q", docker(t, "service", "ls", "-q"))
		assert.Empty(t, docker(t, "service", "ls", "-q"))
		assert.Equal(t, c.nodesBefore, nodes(t))
	}
}

package main

import (
	"bytes"
	"context"
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
			var stdout, stderr bytes.Buffer
			err := run(ctx, []string{"compare", "-preset", "2013", "-swarm", "-load", "builtin", "-out", filepath.Join(t.TempDir(), "r")}, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 1, exitCode(err))
			assert.Contains(t, err.Error(), "-swarm: no cluster: the engine is in no swarm")
			assert.NotContains(t, err.Error(), "\n")
			t.Log(err)
		})
	}

	needBase(t)
	s := swarmtest.New(t)
	nodesBefore := docker(t, "node", "ls", "--format", "{{.ID}} {{.Status}} {{.Availability}}")
	var images []string
	t.Cleanup(func() { removeImages(t, images) })
	compare := func(t *testing.T, dir string, extra ...string) (string, error) {
		args := append([]string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", s.WorkerID + "=" + s.Worker,
			"-topologies", "standalone,nginx-http,nginx-fcgi-unix", "-gomaxprocs", "1", "-load", "builtin",
			"-rate", "2000", "-connections", "64", "-reps", "1", "-duration", "3s", "-warmup", "1s",
			// This shared 2-core machine's timers wake late at times
			// (TestSwarm's note); the verdict itself is
			// cluster.TestRunLoadInvalid's.
			"-swarm-tolerance", "500ms",
			"-out", dir}, extra...)
		var stdout, stderr bytes.Buffer
		t0 := time.Now()
		err := run(ctx, args, &stdout, &stderr)
		t.Logf("compare -swarm took %v\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), stdout.String(), stderr.String())
		if env, _, lerr := results.Load(dir); lerr == nil && env.Cluster != nil {
			images = append(images, env.Cluster.Image)
		}
		return stdout.String(), err
	}

	t.Run("no role labels", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		_, err := compare(t, dir)
		require.Error(t, err)
		assert.Equal(t, "no ready node labelled topobench.role=server", err.Error())
		assert.NoDirExists(t, dir, "refused before anything was created")
	})

	check := func(t *testing.T, dir string, loaders []string) {
		env, runs, err := results.Load(dir)
		require.NoError(t, err)
		require.NotNil(t, env.Cluster)
		images = append(images, env.Cluster.Image)
		assert.Equal(t, s.WorkerID, env.Cluster.Server.ID)
		assert.Equal(t, s.WorkerAddr, env.Cluster.ServerAddr)
		assert.False(t, env.Cluster.Remote, "the test swarm's address is link-local")
		assert.Contains(t, env.Cluster.Parity, "load node ", "parity checked by a job on a load node")
		if len(loaders) > 1 {
			assert.Contains(t, env.Cluster.Parity, s.ManagerID[:12], "from a load node other than the server's")
		}
		var got []string
		for _, n := range env.Cluster.Load {
			got = append(got, n.ID)
			assert.True(t, n.ClockKnown)
		}
		assert.ElementsMatch(t, loaders, got)
		assert.NotEmpty(t, env.NginxVersion, "from procd on the server node")
		require.Len(t, runs, 3)
		for _, r := range runs {
			require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
			f := r.Figures
			require.NotNil(t, f)
			assert.InDelta(t, 2000, f.TargetRate, 1e-9)
			assert.InEpsilon(t, 2000, f.ReqPerSec, 0.05, "the shares add up to the rate")
			assert.Zero(t, f.Errors.Total())
			require.Len(t, r.Nodes, len(loaders))
			require.NotNil(t, r.CPU.Server, "cmd/hello's CPU time from procd on the server node")
			if r.Topology != "standalone" {
				require.NotNil(t, r.CPU.Nginx, "nginx's CPU time from procd on the server node")
			}
			var sum int64
			var hs []*hdrhistogram.Histogram
			for i, n := range r.Nodes {
				assert.InDelta(t, 2000/float64(len(loaders)), n.Rate, 1e-9)
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
		summary, err := os.ReadFile(filepath.Join(dir, "summary.md"))
		require.NoError(t, err)
		assert.Contains(t, string(summary), "nginx-fcgi-unix")
		assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
		assert.Equal(t, nodesBefore, docker(t, "node", "ls", "--format", "{{.ID}} {{.Status}} {{.Availability}}"), "the swarm's nodes as they were")
	}

	s.Label(t, s.WorkerID, "server")
	s.Label(t, s.ManagerID, "load")
	t.Run("swarm-allow not the server node's", func(t *testing.T) {
		// 192.0.2.1 is TEST-NET-1: refused before anything, never sent to.
		dir := filepath.Join(testenv.ShortDir(t), "r")
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", s.WorkerID + "=" + s.Worker, "-swarm-allow", "192.0.2.1",
			"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-out", dir}, &stdout, &stderr)
		require.Error(t, err)
		t.Log(err)
		assert.Equal(t, 2, exitCode(err))
		assert.Contains(t, err.Error(), "-swarm-allow: 192.0.2.1: the swarm reports the server node ")
		assert.Contains(t, err.Error(), " at "+s.WorkerAddr+", not 192.0.2.1")
		assert.NotContains(t, err.Error(), "\n")
		assert.NotContains(t, stderr.String(), "building the cluster's image", "refused before the image is built")
		assert.NoDirExists(t, dir)
		assert.Empty(t, docker(t, "service", "ls", "-q"))
	})

	t.Run("one load node", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		// The server's own address named: accepted, and no -allow-remote
		// for a link-local one.
		out, err := compare(t, dir, "-swarm-allow", s.WorkerAddr)
		require.NoError(t, err)
		assert.Contains(t, out, "cluster (swarm): servers on ")
		check(t, dir, []string{s.ManagerID})
	})

	t.Run("interrupted, then resumed", func(t *testing.T) {
		// Ctrl-C while the first cell's load runs: what finished is kept,
		// and every service the run created is removed; -resume with the
		// same -swarm flags finishes the sweep on the same nodes.
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
		var stdout, stderr bytes.Buffer
		swarmArgs := []string{"-swarm", "-swarm-engines", s.WorkerID + "=" + s.Worker, "-swarm-tolerance", "500ms"}
		err := run(ictx, append([]string{"compare", "-preset", "2013",
			"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-rate", "500", "-connections", "8",
			"-reps", "1", "-duration", "8s", "-warmup", "0s", "-out", dir}, swarmArgs...), &stdout, &stderr)
		require.Error(t, err)
		t.Logf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
		assert.Contains(t, err.Error(), "interrupted")
		assert.Contains(t, err.Error(), "finish with: topobench compare -resume "+dir+" -swarm and the same -swarm-* flags")
		if env, _, lerr := results.Load(dir); lerr == nil && env.Cluster != nil {
			images = append(images, env.Cluster.Image)
		}
		assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")

		stdout.Reset()
		stderr.Reset()
		t0 := time.Now()
		err = run(ctx, append([]string{"compare", "-resume", dir}, swarmArgs...), &stdout, &stderr)
		t.Logf("compare -resume took %v\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), stdout.String(), stderr.String())
		require.NoError(t, err)
		env, runs, err := results.Load(dir)
		require.NoError(t, err)
		assert.False(t, env.Interrupted)
		require.NotNil(t, env.Cluster)
		assert.Equal(t, s.WorkerID, env.Cluster.Server.ID)
		require.Len(t, runs, 1)
		assert.False(t, runs[0].Failed(), runs[0].Error)
		require.Len(t, runs[0].Nodes, 1)
		assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
	})

	s.Label(t, s.WorkerID, "server,load")
	t.Run("two load nodes", func(t *testing.T) {
		dir := filepath.Join(testenv.ShortDir(t), "r")
		_, err := compare(t, dir)
		require.NoError(t, err)
		check(t, dir, []string{s.ManagerID, s.WorkerID})
	})

	t.Run("closed loop, two load nodes", func(t *testing.T) {
		// The connections split C/N (7: 4 and 3), no rate; the merge is
		// exact as in open loop.
		dir := filepath.Join(testenv.ShortDir(t), "r")
		var stdout, stderr bytes.Buffer
		t0 := time.Now()
		err := run(ctx, []string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", s.WorkerID + "=" + s.Worker,
			"-topologies", "standalone", "-gomaxprocs", "1", "-load", "builtin", "-connections", "7",
			"-reps", "1", "-duration", "2s", "-warmup", "0s", "-swarm-tolerance", "500ms", "-out", dir}, &stdout, &stderr)
		t.Logf("compare -swarm (closed loop) took %v\nstdout:\n%s\nstderr:\n%s", time.Since(t0).Round(time.Millisecond), stdout.String(), stderr.String())
		require.NoError(t, err)
		env, runs, err := results.Load(dir)
		require.NoError(t, err)
		require.NotNil(t, env.Cluster)
		images = append(images, env.Cluster.Image)
		require.Len(t, runs, 1)
		r := runs[0]
		require.False(t, r.Failed(), "%s: %s", r.Name(), r.Error)
		require.NotNil(t, r.Figures)
		assert.Zero(t, r.Figures.TargetRate, "closed loop")
		assert.Zero(t, r.Figures.Errors.Total())
		require.Len(t, r.Nodes, 2)
		var conns []int
		var sum int64
		var hs []*hdrhistogram.Histogram
		for i, n := range r.Nodes {
			conns = append(conns, n.Connections)
			assert.Zero(t, n.Rate)
			assert.Empty(t, n.Invalid)
			assert.Positive(t, n.Figures.Requests)
			sum += n.Figures.Requests
			h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+".node"+string(rune('0'+i))+hdr.EncodedExt))
			require.NoError(t, err)
			hs = append(hs, h)
			t.Logf("node %s: %d connections, %d req, %.0f req/s, p99 %v", n.Hostname, n.Connections, n.Figures.Requests, n.Figures.ReqPerSec, n.Figures.P99)
		}
		assert.Equal(t, []int{4, 3}, conns)
		assert.Equal(t, sum, r.Figures.Requests)
		merged, err := hdr.Merge(hs...)
		require.NoError(t, err)
		h, err := hdr.ReadFile(filepath.Join(dir, results.RunsDir, r.Name()+hdr.EncodedExt))
		require.NoError(t, err)
		assert.True(t, merged.Equals(h), "the run's histogram is the exact merge of the nodes'")
		assert.Empty(t, docker(t, "service", "ls", "-q"), "every service removed")
	})
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
	s := swarmtest.New(t)
	nodesBefore := docker(t, "node", "ls", "--format", "{{.ID}} {{.Status}} {{.Availability}}")
	// Ctrl-C stops the sweep as it stops compare, which removes its
	// services; the test's cleanup then takes the swarm down.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Hour)
	defer cancel()
	var images []string
	t.Cleanup(func() { removeImages(t, images) })
	for _, tc := range []struct{ name, worker string }{{"one-load-node", "server"}, {"two-load-nodes", "server,load"}} {
		s.Label(t, s.WorkerID, tc.worker)
		s.Label(t, s.ManagerID, "load")
		dir := filepath.Join(out, tc.name)
		args := []string{"compare", "-preset", "2013", "-swarm", "-swarm-engines", s.WorkerID + "=" + s.Worker,
			"-topologies", "standalone,nginx-http,nginx-fcgi-unix", "-gomaxprocs", "1", "-load", "builtin", "-rate", "2000,4000", "-reps", "3"}
		args = append(append(args, strings.Fields(os.Getenv("TOPOBENCH_SWARM_ARGS"))...), "-out", dir)
		var stdout, stderr bytes.Buffer
		t0 := time.Now()
		err := run(ctx, args, &stdout, &stderr)
		t.Logf("%s: topobench %s took %v: %v\nstdout:\n%s\nstderr:\n%s", tc.name, strings.Join(args, " "), time.Since(t0).Round(time.Second), err, stdout.String(), stderr.String())
		assert.NoError(t, err)
		if env, _, err := results.Load(dir); err == nil && env.Cluster != nil {
			images = append(images, env.Cluster.Image)
		}
		t.Logf("docker service ls: %q", docker(t, "service", "ls", "-q"))
		assert.Empty(t, docker(t, "service", "ls", "-q"))
		assert.Equal(t, nodesBefore, docker(t, "node", "ls", "--format", "{{.ID}} {{.Status}} {{.Availability}}"))
	}
}

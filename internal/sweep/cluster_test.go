package sweep

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// planCluster is a cluster.Cluster for the planning tests: its nodes
// are given, it places nothing and starts nothing, and counts cleanups.
type planCluster struct {
	nodes    []cluster.Node
	placeErr error
	placed   []string
	cleanups int
}

func (c *planCluster) Nodes(context.Context) ([]cluster.Node, error) { return c.nodes, nil }
func (c *planCluster) PlaceImage(_ context.Context, image string, nodes []cluster.Node) error {
	for _, n := range nodes {
		c.placed = append(c.placed, n.ID)
	}
	return c.placeErr
}
func (c *planCluster) StartServer(context.Context, cluster.Server) error {
	return errors.New("not in a planning test")
}
func (c *planCluster) StopServer(context.Context, string) error { return nil }
func (c *planCluster) RunJobs(context.Context, []cluster.Job, time.Time) ([]cluster.JobOutput, error) {
	return nil, errors.New("not in a planning test")
}
func (c *planCluster) Clock(context.Context, cluster.Node) (cluster.Clock, error) {
	return cluster.Clock{Known: true}, nil
}
func (c *planCluster) Cleanup(context.Context) error { c.cleanups++; return nil }

// TestClusterRefusesBeforeAnything: what a sweep on a cluster cannot do
// is refused in one line naming the flag, a missing role or an image
// that cannot be placed too, nothing is created, and the cluster is
// cleaned up all the same.
func TestClusterRefusesBeforeAnything(t *testing.T) {
	roles := []cluster.Node{
		{ID: "srv", Hostname: "a", Addr: "169.254.9.2", Roles: []cluster.Role{cluster.RoleServer}, Ready: true},
		{ID: "ld", Hostname: "b", Addr: "169.254.9.1", Roles: []cluster.Role{cluster.RoleLoad}, Ready: true, Manager: true},
	}
	for _, tt := range []struct {
		name   string
		change func(*Options, *planCluster)
		plan   bool // an ErrPlan
		want   string
	}{
		{"wrk", func(o *Options, _ *planCluster) { o.Plan.Loads = []results.Generator{results.LoadWrk} }, true, "-load wrk: on the cluster the load is the built-in engine"},
		{"pinned", func(o *Options, _ *planCluster) { o.Plan.PinServer = "0" }, true, "-cpus: "},
		{"netns", func(o *Options, _ *planCluster) { o.Plan.Isolation = results.IsolateNetns }, true, "-isolate netns: "},
		{"a target", func(o *Options, _ *planCluster) { o.Plan.Targets = []string{"java-netty"} }, true, "-targets java-netty: "},
		{"a probe", func(o *Options, _ *planCluster) {
			o.Plan.Schedules = []results.Schedule{{Name: "concurrency-level", Probe: true, Wait: time.Second, Requests: 10}}
		}, true, "-scenario: "},
		{"agents", func(o *Options, _ *planCluster) {
			o.HelloAgent, o.NginxAgent = "http://127.0.0.1:7070", "http://127.0.0.1:7071"
		}, true, "-hello-agent: "},
		{"no server node", func(_ *Options, c *planCluster) { c.nodes = roles[1:] }, false, "no ready node labelled topobench.role=server"},
		{"no load node", func(_ *Options, c *planCluster) { c.nodes = roles[:1] }, false, "no ready node labelled topobench.role=load"},
		{"a load node down", func(_ *Options, c *planCluster) {
			c.nodes = []cluster.Node{roles[0], roles[1]}
			c.nodes[1].Ready = false
		}, false, "no ready node labelled topobench.role=load"},
		{"an image that cannot be placed", func(_ *Options, c *planCluster) {
			c.nodes, c.placeErr = roles, errors.New("image cannot be placed: topobench/cluster:x on node b")
		}, false, "image cannot be placed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			c := &planCluster{nodes: roles}
			p := smallPlan("standalone", "nginx-http")
			p.PinLoad, p.PinServer, p.Isolation = "", "", ""
			p.Loads = []results.Generator{results.LoadBuiltin}
			o := Options{Plan: p, Dir: dir, Progress: &bytes.Buffer{}, Log: &bytes.Buffer{},
				Cluster: &Cluster{C: c, Backend: "test", Image: "topobench/cluster:x"}}
			tt.change(&o, c)
			_, err := Run(context.Background(), o)
			require.Error(t, err)
			assert.Equal(t, tt.plan, errors.Is(err, ErrPlan), "%v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.NoDirExists(t, dir, "nothing created")
			assert.Equal(t, 1, c.cleanups, "the cluster cleaned up")
		})
	}
}

// TestSupervisorScript: bash gets every argument as it was, spaces and
// quotes included, and the servers' commands in order.
func TestSupervisorScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	args := []string{"-prepare", "/usr/local/bin/topobench nginx-conf -out /run/nginx", "-g", "daemon off;", "it's", `a "b" $HOME`}
	script := supervisorScript([][]string{append([]string{"printf", `%s\n`}, args...), {"sleep", "1"}})
	out, err := exec.Command(bash, "-c", script).Output()
	require.NoError(t, err, script)
	assert.Equal(t, strings.Join(args, "\n")+"\n", string(out))

	// The first to fail takes the container down with its status, even
	// when it exits before the script starts watching.
	for _, first := range [][]string{{"sh", "-c", "exit 3"}, {"sh", "-c", "sleep 0.5; exit 3"}} {
		began := time.Now()
		err = exec.Command(bash, "-c", supervisorScript([][]string{{"sleep", "30"}, first})).Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 3, ee.ExitCode())
		assert.Less(t, time.Since(began), 5*time.Second, "the sleeping one was stopped")
	}

	// The engine's stop signal stops every child and exits 0.
	cmd := exec.Command(bash, "-c", supervisorScript([][]string{{"sleep", "30"}, {"sleep", "30"}}))
	require.NoError(t, cmd.Start())
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	assert.NoError(t, cmd.Wait())
	assert.Less(t, time.Since(began), 5*time.Second)
}

func TestCompactReady(t *testing.T) {
	got := compactReady([]string{"procd", "-ready", "tcp:127.0.0.1:9001", "-ready", "unix:/tmp/go.sock", "-ready", "tcp:127.0.0.1:9001", "--", "hello", "-ready"})
	assert.Equal(t, []string{"procd", "-ready", "tcp:127.0.0.1:9001", "-ready", "unix:/tmp/go.sock", "--", "hello", "-ready"}, got)
}

// TestClusterGenSpec: a cell's load on the cluster — open loop with
// Poisson arrivals and a seed of its repetition, closed loop without,
// the timeout covering the handler wait, the warmup as long as the
// plan's, the link-local server address allowed, a name of its own.
func TestClusterGenSpec(t *testing.T) {
	p := smallPlan("standalone")
	p.Duration, p.Warmup, p.Timeout, p.MaxConnections = 5*time.Second, time.Second, 2*time.Second, 1000
	r := &clusterRun{Cluster: Cluster{Image: "img", Lead: 4 * time.Second, Tolerance: 100 * time.Millisecond},
		loaders: []cluster.Node{{ID: "a"}, {ID: "b"}}, addr: netip.MustParseAddr("169.254.9.2")}
	g := &clusterGen{r: r, plan: p}

	open := g.spec(Cell{Connections: 500, Schedule: results.Schedule{Rate: 4000, Wait: 10 * time.Millisecond}, Rep: 2}, "http://169.254.9.2:8080/?wait=10ms", false)
	assert.Equal(t, 4000.0, open.Rate)
	assert.Equal(t, load.Poisson, open.Arrivals)
	assert.Equal(t, uint64(3), open.Seed)
	assert.Equal(t, 1000, open.MaxConnections)
	assert.Equal(t, 500, open.Connections)
	assert.Equal(t, 5*time.Second, open.Duration)
	assert.Equal(t, 2010*time.Millisecond, open.Timeout)
	assert.Equal(t, "169.254.9.2", open.Allow)
	assert.Equal(t, r.loaders, open.Nodes)
	assert.Equal(t, 4*time.Second, open.Lead)
	assert.Equal(t, 100*time.Millisecond, open.Tolerance)
	jobs, shares, err := open.Jobs(time.Now())
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	assert.Equal(t, 2000.0, shares[0].Rate)
	assert.NotEqual(t, shares[0].Seed, shares[1].Seed, "each node its own schedule")

	closed := g.spec(Cell{Connections: 500}, "http://169.254.9.2:8080/", true)
	assert.Zero(t, closed.Rate)
	assert.Empty(t, closed.Arrivals)
	assert.Equal(t, time.Second, closed.Duration, "the warmup")
	assert.NotEqual(t, open.Name, closed.Name)
}

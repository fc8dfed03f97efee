package rig

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
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

// TestServerAddr: where the load goes is the address the cluster reports
// for the server node; a routable one only when -swarm-allow names it,
// and a named one only when it is that address. Nothing is sent.
func TestServerAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, allow string
		remote      bool
		err         string // "" when accepted
	}{
		{"169.254.9.2", "", false, ""},
		{"169.254.9.2", "169.254.9.2", false, ""},
		{"fe80::2", "", false, ""},
		{"127.0.0.1", "", false, ""},
		{"10.0.0.2", "10.0.0.2", true, ""},
		{"192.0.2.7", "192.0.2.7", true, ""},
		{"2001:db8::2", "2001:db8::2", true, ""},
		{"10.0.0.2", "", false, "-swarm-allow: the server node b (n1) is at 10.0.0.2, a routable address"},
		{"2001:db8::2", "", false, "give -swarm-allow 2001:db8::2"},
		{"10.0.0.2", "10.0.0.3", false, "-swarm-allow: 10.0.0.3: the swarm reports the server node b (n1) at 10.0.0.2, not 10.0.0.3; give -swarm-allow 10.0.0.2"},
		{"169.254.9.2", "10.0.0.2", false, "-swarm-allow: 10.0.0.2: the swarm reports the server node b (n1) at 169.254.9.2"},
		{"224.0.0.1", "224.0.0.1", false, "-swarm-allow: 224.0.0.1: the server node b (n1): allow: 224.0.0.1: not an address load may go to"},
		{"node-b", "", false, `the server node b (n1): its address "node-b"`},
	} {
		t.Run(tc.addr+" "+tc.allow, func(t *testing.T) {
			var allow netip.Addr
			if tc.allow != "" {
				allow = netip.MustParseAddr(tc.allow)
			}
			addr, remote, err := ServerAddr(cluster.Node{ID: "n1", Hostname: "b", Addr: tc.addr}, allow)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), "\n")
				if strings.HasPrefix(tc.err, "-swarm-allow") {
					assert.ErrorIs(t, err, plan.ErrPlan)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.addr, addr.String())
			assert.Equal(t, tc.remote, remote)
		})
	}
}

// TestClusterRemote: with a routable server address named by
// -swarm-allow the sweep accepts the cluster, records it in env.json, and
// gives the load and parity jobs -allow-remote with that address. The
// jobs are built, never run.
func TestClusterRemote(t *testing.T) {
	c := &planCluster{nodes: []cluster.Node{
		{ID: "srv", Hostname: "a", Addr: "10.0.0.2", Roles: []cluster.Role{cluster.RoleServer}, Ready: true},
		{ID: "ld", Hostname: "b", Addr: "10.0.0.3", Roles: []cluster.Role{cluster.RoleLoad}, Ready: true, Manager: true},
	}}
	cl := Cluster{C: c, Backend: "test", Image: "img", Allow: netip.MustParseAddr("10.0.0.2")}
	s := New(Config{Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}})
	var env results.Env
	require.NoError(t, s.PrepareCluster(context.Background(), cl, &env, false))
	assert.Equal(t, []string{"srv", "ld"}, c.placed)
	require.NotNil(t, env.Cluster)
	assert.Equal(t, "10.0.0.2", env.Cluster.ServerAddr)
	assert.True(t, env.Cluster.Remote)
	assert.True(t, s.OnCluster())

	g := &clusterGen{r: s.cl, plan: smallPlan()}
	sa, err := topology.Lookup("standalone")
	require.NoError(t, err)
	sp := g.spec(results.Cell{Connections: 10}, s.cl.layout().URL(sa), time.Second, false)
	assert.Equal(t, "10.0.0.2", sp.Allow)
	assert.True(t, sp.AllowRemote)
	jobs, _, err := sp.Jobs(time.Now())
	require.NoError(t, err)
	assert.Contains(t, jobs[0].Cmd, "-allow-remote")
	assert.Equal(t, "http://10.0.0.2:8080/", jobs[0].Cmd[len(jobs[0].Cmd)-1])
	assert.Equal(t, []string{"/usr/local/bin/topobench", "parity", "-at", "10.0.0.2", "-allow-remote", "-topologies", "standalone", "-timeout", "5s"},
		s.cl.parityCmd([]string{"standalone"}, 5*time.Second))

	// On the link-local test swarm neither gets it.
	c.nodes[0].Addr = "169.254.9.2"
	cl.Allow = netip.Addr{}
	s = New(Config{Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}})
	require.NoError(t, s.PrepareCluster(context.Background(), cl, &env, false))
	assert.False(t, env.Cluster.Remote)
	assert.NotContains(t, s.cl.parityCmd([]string{"standalone"}, time.Second), "-allow-remote")
	g = &clusterGen{r: s.cl, plan: smallPlan()}
	assert.False(t, g.spec(results.Cell{Connections: 10}, "http://169.254.9.2:8080/", time.Second, false).AllowRemote)
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
	p := smallPlan()
	p.Duration, p.Warmup, p.Timeout, p.MaxConnections = 5*time.Second, time.Second, 2*time.Second, 1000
	r := &clusterRun{Cluster: Cluster{Image: "img", Lead: 4 * time.Second, Tolerance: 100 * time.Millisecond},
		loaders: []cluster.Node{{ID: "a"}, {ID: "b"}}, addr: netip.MustParseAddr("169.254.9.2")}
	g := &clusterGen{r: r, plan: p}

	open := g.spec(results.Cell{Connections: 500, Schedule: results.Schedule{Rate: 4000, Wait: 10 * time.Millisecond}, Rep: 2}, "http://169.254.9.2:8080/?wait=10ms", p.Duration, false)
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
	assert.True(t, open.NoPrime, "a recorded run primes nothing, as wrk")
	jobs, shares, err := open.Jobs(time.Now())
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	assert.Equal(t, 2000.0, shares[0].Rate)
	assert.NotEqual(t, shares[0].Seed, shares[1].Seed, "each node its own schedule")

	closed := g.spec(results.Cell{Connections: 500}, "http://169.254.9.2:8080/", p.Warmup, true)
	assert.Zero(t, closed.Rate)
	assert.False(t, closed.NoPrime)
	assert.Empty(t, closed.Arrivals)
	assert.Equal(t, time.Second, closed.Duration, "the warmup")
	assert.NotEqual(t, open.Name, closed.Name)
}

// smallPlan is a plan of standalone alone, short.
func smallPlan() results.Plan {
	return results.Plan{
		Targets: []string{results.TargetGo}, Topologies: []string{"standalone"}, GOMAXPROCS: []int{1},
		Connections: []int{100}, Loads: []results.Generator{results.LoadBuiltin}, Reps: 2,
		Duration: 15 * time.Second, Warmup: time.Second, Threads: 100, Timeout: 2 * time.Second,
	}
}

package rig

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/topology"
)

// jobCluster is a planCluster that runs a parity job by answering with
// report (or failing with err), and records the server it is asked to
// start.
type jobCluster struct {
	planCluster
	report  parity.Report
	err     error
	jobs    []cluster.Job
	started []cluster.Server
}

func (c *jobCluster) RunJobs(_ context.Context, jobs []cluster.Job, _ time.Time) ([]cluster.JobOutput, error) {
	c.jobs = append(c.jobs, jobs...)
	if c.err != nil {
		return nil, c.err
	}
	b, err := json.Marshal(c.report)
	if err != nil {
		return nil, err
	}
	return []cluster.JobOutput{{Job: jobs[0], Stdout: b}}, nil
}

func (c *jobCluster) StartServer(_ context.Context, s cluster.Server) error {
	c.started = append(c.started, s)
	return nil
}

func testRun(c cluster.Cluster) *clusterRun {
	return &clusterRun{Cluster: Cluster{C: c, Image: "img"}, env: &results.Env{},
		server: cluster.Node{ID: "srv", Hostname: "a"}, checker: cluster.Node{ID: "ld", Hostname: "b"},
		addr: netip.MustParseAddr("169.254.9.2")}
}

// TestClusterParity: the parity job's report refuses what it refused and
// what it did not check; a job that cannot say refuses every topology.
func TestClusterParity(t *testing.T) {
	tops, err := topology.LookupAll([]string{"standalone", "nginx-http", "nginx-fcgi-tcp"})
	require.NoError(t, err)
	c := &jobCluster{report: parity.Report{Checked: []string{"standalone", "nginx-http"}, Refused: map[string]string{"nginx-http": "a 142-byte header block"}}}
	cs := &clusterServers{c: c, r: testRun(c), tops: tops}
	_, refused := cs.Parity(context.Background(), 5*time.Second)
	assert.Nil(t, refused["standalone"])
	assert.EqualError(t, refused["nginx-http"], "a 142-byte header block")
	assert.ErrorContains(t, refused["nginx-fcgi-tcp"], "did not check it")
	require.Len(t, c.jobs, 1)
	assert.Equal(t, "ld", c.jobs[0].Node, "from a load node, as the load goes")
	assert.Equal(t, []string{"/usr/local/bin/topobench", "parity", "-at", "169.254.9.2", "-topologies", "standalone,nginx-http,nginx-fcgi-tcp", "-timeout", "5s"}, c.jobs[0].Cmd)

	c.err = errors.New("no such node")
	_, refused = cs.Parity(context.Background(), 5*time.Second)
	for _, top := range tops {
		assert.ErrorContains(t, refused[top.Name], "the parity job on node b (ld): no such node")
	}
}

// TestStartClusterServers: one server on the server node runs procd for
// cmd/hello, with its listeners as -ready targets once each, and procd
// for nginx when a topology goes through it; only cmd/hello runs there.
func TestStartClusterServers(t *testing.T) {
	tops, err := topology.LookupAll([]string{"standalone", "nginx-http", "nginx-fcgi-unix"})
	require.NoError(t, err)
	c := &jobCluster{}
	r := New(Config{})
	r.cl = testRun(c)
	st, err := r.startClusterServers(context.Background(), stack.Config{Topologies: tops, GOMAXPROCS: 4, Target: results.TargetGo})
	require.NoError(t, err)
	require.Len(t, c.started, 1)
	srv := c.started[0]
	assert.Equal(t, "servers-g4-1", srv.Name)
	assert.Equal(t, "srv", srv.Node)
	script := srv.Cmd[len(srv.Cmd)-1]
	assert.Contains(t, script, "'GOMAXPROCS=4' '/usr/local/bin/procd' '-listen' '169.254.9.2:7070'")
	assert.Contains(t, script, "'/usr/local/bin/procd' '-listen' '169.254.9.2:7071'")
	assert.Contains(t, script, "'-ready' 'unix:/tmp/")
	assert.Equal(t, 1, strings.Count(script, "'-ready' 'http://127.0.0.1:8080/'"), "standalone's and nginx-http's backend's listener once: %s", script)
	assert.Equal(t, "cmd/hello via http://169.254.9.2:7070, nginx via http://169.254.9.2:7071 on node a (srv)", st.String())
	assert.Zero(t, st.ServerPid()+st.NginxPid(), "no process of this harness")

	_, err = r.startClusterServers(context.Background(), stack.Config{Topologies: tops, Target: "erlang"})
	assert.ErrorContains(t, err, "on the cluster only cmd/hello runs")
	assert.Len(t, c.started, 1)
}

// TestClusterServersAgents: the servers' state and CPU time come from
// their procd, here a real supervisor of a real program over HTTP; a
// server the cluster does not run has none (stack.ErrNoServer).
func TestClusterServersAgents(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	sup, err := supervise.New(supervise.Config{Program: sleep, Args: []string{"30"}})
	require.NoError(t, err)
	_, err = sup.Start(context.Background(), nil)
	require.NoError(t, err)
	api := httptest.NewServer(sup.Handler())
	t.Cleanup(func() {
		api.Close()
		_, _ = (supervise.Client{URL: api.URL}).Stop(context.Background())
	})
	cs := &clusterServers{node: cluster.Node{ID: "srv", Hostname: "a"}, hello: &supervise.Client{URL: api.URL}}
	require.NoError(t, cs.Alive())
	_, err = cs.ServerCPU(context.Background())
	require.NoError(t, err)
	_, err = cs.NginxCPU(context.Background())
	require.ErrorIs(t, err, stack.ErrNoServer)
	require.NoError(t, cs.ready(context.Background()))

	_, err = (supervise.Client{URL: api.URL}).Stop(context.Background())
	require.NoError(t, err)
	assert.ErrorContains(t, cs.Alive(), "cmd/hello on node a (srv) exited")
}

// TestPrepareClusterRefuses: no server node, or on resume other nodes
// than the sweep began on, is refused before anything is placed.
func TestPrepareClusterRefuses(t *testing.T) {
	load := cluster.Node{ID: "ld", Hostname: "b", Addr: "169.254.9.1", Roles: []cluster.Role{cluster.RoleLoad}, Ready: true}
	srv := cluster.Node{ID: "srv", Hostname: "a", Addr: "169.254.9.2", Roles: []cluster.Role{cluster.RoleServer}, Ready: true}
	c := &planCluster{nodes: []cluster.Node{load}}
	err := New(Config{}).PrepareCluster(context.Background(), Cluster{C: c}, &results.Env{}, false)
	require.Error(t, err, "no server node")
	assert.Empty(t, c.placed)

	c.nodes = append(c.nodes, srv)
	env := &results.Env{Cluster: &results.ClusterEnv{Server: results.EnvNode{ID: "other", Hostname: "d"}}}
	err = New(Config{}).PrepareCluster(context.Background(), Cluster{C: c}, env, true)
	require.ErrorContains(t, err, "-resume: the servers ran on node d (other), the swarm's server node is now a (srv)")
	assert.Empty(t, c.placed)

	r := New(Config{})
	env = &results.Env{}
	require.NoError(t, r.PrepareCluster(context.Background(), Cluster{C: c, Backend: "test"}, env, false))
	assert.Equal(t, "load node b (ld)", env.Cluster.Parity)
	assert.Equal(t, cluster.DefaultLead, env.Cluster.Lead)
	assert.Equal(t, "srv", env.Cluster.Server.ID)
	assert.Equal(t, "169.254.9.2", r.ClusterLayout().Host)
	require.NoError(t, sameNodes(env.Cluster, srv, []cluster.Node{load}), "the nodes it began on")
}

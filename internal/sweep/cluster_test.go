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
		{"wrk", func(o *Options, _ *planCluster) { o.Plan.Loads = []results.Generator{results.LoadWrk} }, true, "-load: wrk: on the cluster the load is the built-in engine"},
		{"pinned", func(o *Options, _ *planCluster) { o.Plan.PinServer = "0" }, true, "-cpus: "},
		{"netns", func(o *Options, _ *planCluster) { o.Plan.Isolation = results.IsolateNetns }, true, "-isolate: netns: "},
		{"a target", func(o *Options, _ *planCluster) { o.Plan.Targets = []string{"java-netty"} }, true, "-targets: java-netty: "},
		{"a probe", func(o *Options, _ *planCluster) {
			o.Plan.Schedules = []results.Schedule{{Name: "concurrency-level", Probe: true, Wait: time.Second, Requests: 10}}
		}, true, "-requests: "},
		{"agents", func(o *Options, _ *planCluster) {
			o.HelloAgent, o.NginxAgent = "http://127.0.0.1:7070", "http://127.0.0.1:7071"
		}, true, "-hello-agent: "},
		{"no server node", func(_ *Options, c *planCluster) { c.nodes = roles[1:] }, false, "no ready node labelled topobench.role=server"},
		{"no load node", func(_ *Options, c *planCluster) { c.nodes = roles[:1] }, false, "no ready node labelled topobench.role=load"},
		{"a load node down", func(_ *Options, c *planCluster) {
			c.nodes = []cluster.Node{roles[0], roles[1]}
			c.nodes[1].Ready = false
		}, false, "no ready node labelled topobench.role=load"},
		{"a routable server address, no -swarm-allow", func(_ *Options, c *planCluster) {
			c.nodes = []cluster.Node{roles[0], roles[1]}
			c.nodes[0].Addr = "10.0.0.2"
		}, true, "-swarm-allow: the server node a (srv) is at 10.0.0.2, a routable address; the load goes to another machine only at the address named: give -swarm-allow 10.0.0.2"},
		{"a routable server address, another named", func(o *Options, c *planCluster) {
			c.nodes = []cluster.Node{roles[0], roles[1]}
			c.nodes[0].Addr = "10.0.0.2"
			o.Cluster.Allow = netip.MustParseAddr("10.0.0.3")
		}, true, "-swarm-allow: 10.0.0.3: the swarm reports the server node a (srv) at 10.0.0.2, not 10.0.0.3"},
		{"a link-local server address, another named", func(o *Options, c *planCluster) {
			o.Cluster.Allow = netip.MustParseAddr("10.0.0.2")
		}, true, "-swarm-allow: 10.0.0.2: the swarm reports the server node a (srv) at 169.254.9.2, not 10.0.0.2"},
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
			if tt.plan && strings.Contains(tt.want, "-swarm-allow") {
				assert.Empty(t, c.placed, "no image placed")
				// compare checks the same before it builds the image.
				assert.Equal(t, err.Error(), o.Cluster.Check(context.Background()).Error())
			}
		})
	}
}

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
			addr, remote, err := serverAddr(cluster.Node{ID: "n1", Hostname: "b", Addr: tc.addr}, allow)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), "\n")
				if strings.HasPrefix(tc.err, "-swarm-allow") {
					assert.ErrorIs(t, err, ErrPlan)
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
	cl := &Cluster{C: c, Backend: "test", Image: "img", Allow: netip.MustParseAddr("10.0.0.2")}
	require.NoError(t, cl.Check(context.Background()))
	s := &sweep{Options: Options{Cluster: cl, Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}}}
	require.NoError(t, s.prepareCluster(context.Background()))
	assert.Equal(t, []string{"srv", "ld"}, c.placed)
	require.NotNil(t, s.env.Cluster)
	assert.Equal(t, "10.0.0.2", s.env.Cluster.ServerAddr)
	assert.True(t, s.env.Cluster.Remote)

	g := &clusterGen{r: s.cl, plan: smallPlan("standalone")}
	sa, err := topology.Lookup("standalone")
	require.NoError(t, err)
	sp := g.spec(Cell{Connections: 10}, s.cl.layout().URL(sa), time.Second, false)
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
	s = &sweep{Options: Options{Cluster: cl, Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}}}
	require.NoError(t, s.prepareCluster(context.Background()))
	assert.False(t, s.env.Cluster.Remote)
	assert.NotContains(t, s.cl.parityCmd([]string{"standalone"}, time.Second), "-allow-remote")
	g = &clusterGen{r: s.cl, plan: smallPlan("standalone")}
	assert.False(t, g.spec(Cell{Connections: 10}, "http://169.254.9.2:8080/", time.Second, false).AllowRemote)
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

	open := g.spec(Cell{Connections: 500, Schedule: results.Schedule{Rate: 4000, Wait: 10 * time.Millisecond}, Rep: 2}, "http://169.254.9.2:8080/?wait=10ms", p.Duration, false)
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

	closed := g.spec(Cell{Connections: 500}, "http://169.254.9.2:8080/", p.Warmup, true)
	assert.Zero(t, closed.Rate)
	assert.False(t, closed.NoPrime)
	assert.Empty(t, closed.Arrivals)
	assert.Equal(t, time.Second, closed.Duration, "the warmup")
	assert.NotEqual(t, open.Name, closed.Name)
}

// TestClusterResume: a sweep on a cluster is resumed with -swarm on the
// nodes it began on; resuming it without the cluster, resuming a sweep of
// one machine on a cluster, or on other nodes is refused in one line
// naming -resume, before anything is placed or started.
func TestClusterResume(t *testing.T) {
	roles := []cluster.Node{
		{ID: "srv0123456789ab", Hostname: "a", Addr: "169.254.9.2", Roles: []cluster.Role{cluster.RoleServer}, Ready: true},
		{ID: "ld0123456789abc", Hostname: "b", Addr: "169.254.9.1", Roles: []cluster.Role{cluster.RoleLoad}, Ready: true, Manager: true},
		{ID: "ld2", Hostname: "c", Addr: "169.254.9.3", Roles: []cluster.Role{cluster.RoleLoad}, Ready: true},
	}
	p := smallPlan("standalone")
	p.PinLoad, p.PinServer, p.Isolation = "", "", results.IsolateNone
	p.Loads = []results.Generator{results.LoadBuiltin}
	interrupted := func(t *testing.T, onCluster bool) string {
		dir := filepath.Join(t.TempDir(), "r")
		require.NoError(t, results.Create(dir))
		env := results.Env{Command: []string{"topobench", "compare"}, Start: time.Now().UTC(), Plan: p.Plan, Interrupted: true}
		if onCluster {
			env.Cluster = &results.ClusterEnv{Backend: "swarm", Image: "img",
				Server: results.EnvNode{ID: roles[0].ID, Hostname: "a"},
				Load:   []results.EnvNode{{ID: roles[1].ID, Hostname: "b"}}}
		}
		require.NoError(t, results.WriteEnv(dir, env))
		return dir
	}
	for _, tt := range []struct {
		name      string
		onCluster bool
		nodes     []cluster.Node // nil: no -swarm
		want      string         // "" when accepted
	}{
		{"without the cluster", true, nil, "ran on a cluster (swarm); resume it with -swarm and the same -swarm-* flags"},
		{"a sweep of one machine on a cluster", false, roles[:2], "did not run on a cluster; resume it without -swarm"},
		{"another server node", true, []cluster.Node{{ID: "other", Hostname: "d", Addr: "169.254.9.4", Roles: []cluster.Role{cluster.RoleServer}, Ready: true}, roles[1]},
			"-resume: the servers ran on node a (srv012345678), the swarm's server node is now d (other)"},
		{"another load node", true, roles, "-resume: the load came from b (ld0123456789), the swarm's load nodes are now b (ld0123456789), c (ld2)"},
		{"the same nodes", true, roles[:2], ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := interrupted(t, tt.onCluster)
			o := Options{Dir: dir, Resume: true, Progress: &bytes.Buffer{}, Log: &bytes.Buffer{}}
			var c *planCluster
			if tt.nodes != nil {
				c = &planCluster{nodes: tt.nodes}
				o.Cluster = &Cluster{C: c, Backend: "swarm", Image: "img"}
			}
			_, err := Run(context.Background(), o)
			require.Error(t, err, "a planning cluster starts nothing")
			if tt.want == "" {
				// Accepted: it went on to start the servers, which
				// the planning cluster refuses, and says how to go on.
				assert.Contains(t, err.Error(), "not in a planning test")
				assert.Contains(t, err.Error(), "finish with: topobench compare -resume "+dir+" -swarm and the same -swarm-* flags")
				return
			}
			assert.ErrorIs(t, err, ErrPlan)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
			if c != nil {
				assert.Empty(t, c.placed, "nothing placed")
			}
		})
	}
}

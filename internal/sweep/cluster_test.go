package sweep

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster"
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

package sweep

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/rig"
)

// Cluster runs the sweep on several machines (compare -swarm): each
// block's servers (cmd/hello and nginx, each under procd, which reports
// their CPU time) as one server on the node labelled server, with the
// node's own network, and each cell's load as one job per load node
// (cluster.RunLoad: shares, seeds, one common start, exact merge). The
// sweep reaches the machines only through C. It is one more servers
// and one more generator; the rest of the sweep is the same.
type Cluster struct {
	C cluster.Cluster
	// Backend names the orchestrator in env.json ("swarm").
	Backend string
	// Image holds /usr/local/bin/{hello,procd,topobench} and nginx
	// (swarm.BuildServerImage) on the harness's engine; the sweep places
	// it on the nodes it uses.
	Image string
	// Lead and Tolerance are cluster.LoadSpec's (0: its defaults).
	Lead, Tolerance time.Duration
	// Allow is the server node's address as the user named it (compare
	// -swarm-allow). The load goes to the address the cluster reports
	// for the server node; a link-local one needs no naming, a routable
	// one (real machines) must be named here, and a named one must be
	// it. The load and parity jobs then run with -allow-remote.
	Allow netip.Addr
}

// Check refuses, before anything is created, a cluster the load cannot
// go to: no ready server node, or a server address that -swarm-allow
// does not name as it must (see Cluster.Allow). Errors naming the flag
// are ErrPlan. The sweep checks again as it starts; compare calls it
// before it builds the image.
func (c *Cluster) Check(ctx context.Context) error {
	nodes, err := c.C.Nodes(ctx)
	if err != nil {
		return err
	}
	srv, err := cluster.Select(nodes, cluster.RoleServer)
	if err != nil {
		return err
	}
	_, _, err = rig.ServerAddr(srv[0], c.Allow)
	return err
}

// settleClusterIsolation settles the isolation of a sweep on a cluster
// (plan.Check refused the rest): the machines' own networks.
func (s *sweep) settleClusterIsolation() {
	s.plan.Isolation = results.IsolateNone
	s.env.Plan.Isolation = s.plan.Isolation
}

// prepareCluster readies the cluster's nodes (rig.Rig.PrepareCluster):
// from then on the servers and the load run there.
func (s *sweep) prepareCluster(ctx context.Context) error {
	c := s.Cluster
	return s.rig.PrepareCluster(ctx, rig.Cluster{C: c.C, Backend: c.Backend, Image: c.Image, Lead: c.Lead, Tolerance: c.Tolerance, Allow: c.Allow}, &s.env, s.Resume)
}

// closeCluster removes whatever the run left on the cluster (Ctrl-C
// included).
func (s *sweep) closeCluster() {
	if s.Cluster == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Cluster.C.Cleanup(ctx); err != nil {
		fmt.Fprintf(s.Log, "warning: removing the run's services: %v\n", err)
	}
}

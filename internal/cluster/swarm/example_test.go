package swarm_test

import (
	"context"
	"fmt"
	"time"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/cluster/swarm"
)

// One sweep cell's load on a swarm: the servers on the node labelled
// topobench.role=server, one load job per node labelled
// topobench.role=load, the results merged. (Compiled, not run: it needs
// a swarm; TestSwarm runs the same calls on a real one.)
func Example() {
	ctx := context.Background()
	sw, err := swarm.Open(ctx, swarm.Config{
		// How the harness reaches the other nodes' engines, to place
		// the image and read their clocks.
		Engines: map[string]string{"node-b": "ssh://root@node-b"},
	})
	if err != nil {
		fmt.Println(err) // one line: no swarm, or not a manager
		return
	}
	// Whatever happens, the run's services go (Ctrl-C included).
	defer sw.Cleanup(context.WithoutCancel(ctx))

	nodes, err := sw.Nodes(ctx)
	if err != nil {
		return
	}
	servers, err := cluster.Select(nodes, cluster.RoleServer)
	if err != nil {
		fmt.Println(err) // no ready node labelled topobench.role=server
		return
	}
	loaders, err := cluster.Select(nodes, cluster.RoleLoad)
	if err != nil {
		return
	}
	const image = "topobench/cluster:dev"
	if err := swarm.BuildImage(ctx, swarm.Config{}, ".", image); err != nil {
		return
	}
	if err := sw.PlaceImage(ctx, image, append([]cluster.Node{servers[0]}, loaders...)); err != nil {
		fmt.Println(err) // cluster.ErrImage
		return
	}

	srv := servers[0]
	addr := srv.Addr + ":8080"
	if err := sw.StartServer(ctx, cluster.Server{Name: "hello", Image: image, Node: srv.ID,
		Cmd:   []string{"/usr/local/bin/hello", "-http", addr, "-gomaxprocs", "1"},
		Ready: func(ctx context.Context) error { return nil /* a real GET of http://addr/ */ },
	}); err != nil {
		return
	}

	res, err := cluster.RunLoad(ctx, sw, cluster.LoadSpec{
		Name: "standalone-g1-r3", Image: image, Nodes: loaders,
		URL: "http://" + addr + "/", Allow: srv.Addr,
		Connections: 5000, Duration: 15 * time.Second, Timeout: 2 * time.Second,
	})
	if err != nil {
		fmt.Println(err) // a job did not start by the common start, failed, or printed no report
		return
	}
	fmt.Println(res.Valid(), res.Summary.AchievedRate, res.Summary.Latency.P99)
	for _, n := range res.Nodes {
		fmt.Println(n.Node, n.Clock.Offset, n.Skew, n.Summary.Requests, n.Invalid)
	}
	sw.StopServer(ctx, "hello")
}

package load_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// TestHelloWaitThroughTopologies drives the real cmd/hello, directly and
// through real nginx over proxy_pass and both FastCGI servers, with
// ?wait=100ms: every request takes at least the wait and succeeds (nginx
// passes the query string on), and a bad wait comes back as a 400.
func TestHelloWaitThroughTopologies(t *testing.T) {
	bin := testenv.HelloBin(t) // skips under -short
	ts, err := topology.Parse("standalone,nginx-http,nginx-fcgi-unix,nginx-fcgi-fast-unix")
	require.NoError(t, err)
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	ctx := context.Background()
	srv, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: ts})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Stop() })
	p, err := nginxconf.DefaultParams(l)
	require.NoError(t, err)
	p.Vhosts = nginxconf.Vhosts(ts)
	p.WorkerProcesses = 1
	ng, err := nginx.Start(ctx, nginx.Config{Dir: testenv.ShortDir(t), Params: p})
	require.NoError(t, err)
	t.Cleanup(func() { ng.Stop() })

	const n = 20
	for _, tp := range ts {
		t.Run(tp.Name, func(t *testing.T) {
			tg, err := load.ParseTarget(l.URL(tp))
			require.NoError(t, err)
			res, err := load.Run(ctx, load.Options{Target: tg.WithQuery("wait", "100ms"), Rate: 40, Arrivals: load.Uniform, Connections: 4, Requests: n})
			require.NoError(t, err)
			s := res.Summary
			assert.EqualValues(t, n, s.Requests)
			assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
			assert.GreaterOrEqual(t, s.Latency.P50, 100.0, "the wait holds each answer")
			assert.Less(t, s.Latency.P50, 1000.0)

			res, err = load.Run(ctx, load.Options{Target: tg.WithQuery("wait", "2h"), Connections: 1, Requests: 3, Timeout: 5 * time.Second})
			require.NoError(t, err)
			assert.EqualValues(t, 3, res.Summary.Errors.Status, "a wait above 60s is a 400")
			assert.EqualValues(t, 3, res.Summary.Errors.Total())
		})
	}
}

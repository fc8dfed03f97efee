package target_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/backend"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

func TestZZWrkSanity(t *testing.T) {
	if os.Getenv("WRK_SANITY") == "" {
		t.Skip()
	}
	ctx := context.Background()
	wrk := func(addr string) {
		_ = exec.Command("wrk", "-t2", "-c100", "-d2s", "http://"+addr+"/").Run() // warm-up (JIT)
		out, err := exec.Command("wrk", "-t2", "-c100", "-d5s", "http://"+addr+"/").CombinedOutput()
		require.NoError(t, err)
		t.Logf("%s", out)
	}
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	st, _ := topology.Lookup("standalone")
	h, err := backend.Start(ctx, backend.Config{Bin: testenv.HelloBin(t), Layout: l, Topologies: []topology.Topology{st}, GOMAXPROCS: 2})
	require.NoError(t, err)
	t.Log("go")
	wrk(l.HTTP)
	require.NoError(t, h.Stop())
	dir := testenv.ShortDir(t)
	for _, tg := range target.All() {
		p, err := tg.Build(ctx, filepath.Join(dir, tg.Name))
		require.NoError(t, err)
		addr := testenv.FreeAddr(t)
		s, err := p.Start(ctx, target.Config{Addr: addr, Procs: 2})
		require.NoError(t, err)
		t.Log(tg.Name, p.Command(target.Config{Addr: addr, Procs: 2}))
		time.Sleep(time.Second)
		wrk(addr)
		require.NoError(t, s.Stop())
	}
}

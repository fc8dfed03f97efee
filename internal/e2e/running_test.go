package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
)

// TestPairedRunningService measures a service this test starts itself,
// outside the sweep, on TCP and on a unix socket: a short paired sweep
// attaches to it through nginx, reads its CPU from its own process, and
// leaves it running.
func TestPairedRunningService(t *testing.T) {
	bin := testenv.TopobenchBin(t)
	api := testenv.JSONAPIBin(t)
	for _, tt := range []struct {
		name string
		spec func(addr, sock string) string
		// design: a service on a unix socket alone has no standalone to
		// pair with, so it is measured in rounds.
		design []string
	}{
		{"tcp paired", func(addr, _ string) string { return "listen:" + addr },
			[]string{"-design", "paired", "-topologies", "standalone,nginx-http", "-window", "1s", "-standalone-process", "shared"}},
		{"unix rounds", func(_, sock string) string { return "listen:unix:" + sock },
			[]string{"-design", "rounds", "-topologies", "nginx-http-unix", "-duration", "1s", "-warmup", "1s"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr, sock := testenv.FreeAddr(t), filepath.Join(testenv.ShortDir(t), "api.sock")
			svc := exec.Command(api, "-listen", addr, "-unix", sock)
			require.NoError(t, svc.Start())
			t.Cleanup(func() { _ = svc.Process.Kill(); _ = svc.Wait() })
			spec := tt.spec(addr, sock)
			tg, err := target.Lookup(spec)
			require.NoError(t, err)
			p, err := tg.Build(t.Context(), "")
			require.NoError(t, err)
			_, err = p.Attach(t.Context(), target.Config{}) // answers before the sweep begins
			require.NoError(t, err)

			out := filepath.Join(t.TempDir(), "run")
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			args := append([]string{"compare", "-targets", spec, "-gomaxprocs", "1", "-reps", "2",
				"-connections", "50", "-isolate", "none", "-cpus", "none", "-out", out}, tt.design...)
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.WaitDelay = 10 * time.Second
			log, err := cmd.CombinedOutput()
			require.NoError(t, err, "compare: %s", tail(log))
			assert.Contains(t, string(log), spec+" (running, pid "+strconv.Itoa(svc.Process.Pid)+", CPU from /proc/")
			require.NoError(t, svc.Process.Signal(syscall.Signal(0)), "the service still runs")
			_, err = p.Attach(t.Context(), target.Config{})
			require.NoError(t, err, "and still answers")

			_, runs, err := results.Load(out)
			require.NoError(t, err)
			var measured int
			for _, r := range runs {
				if r.Error != "" || r.Target != spec {
					continue
				}
				measured++
				require.NotNil(t, r.CPU, r.Cell)
				require.NotNil(t, r.CPU.Server, "%s: the service's CPU read from its process", r.Cell)
				assert.Positive(t, r.CPU.Server.User+r.CPU.Server.System, r.Cell)
				if r.Topology != "standalone" {
					assert.NotNil(t, r.CPU.Nginx, r.Cell)
				}
			}
			assert.GreaterOrEqual(t, measured, 2, "every repetition measured")
			_, err = os.Stat(filepath.Join(out, "summary.md"))
			assert.NoError(t, err)
		})
	}
}

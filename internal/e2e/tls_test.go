package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

// TestShortTLSSweep runs a short sweep of the topologies over TLS beside
// standalone, on the engine and wrk, a handshake a request (-close) on
// TLS 1.2: each path over TLS has its ratio to standalone-tls and its CPU
// per request in summary.json, and env.json names the TLS it ran with.
func TestShortTLSSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep: cmd/hello, nginx, wrk")
	}
	bin := testenv.TopobenchBin(t)
	out := filepath.Join(testenv.ShortDir(t), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-design", "rounds",
		"-topologies", "standalone,standalone-tls,nginx-tls-http,nginx-tls-http-unix",
		"-load", "builtin,wrk", "-gomaxprocs", "1", "-connections", "10", "-threads", "2",
		"-reps", "2", "-duration", "1s", "-warmup", "0s", "-close", "true",
		"-tls-version", "1.2", "-isolate", "none", "-cpus", "none", "-free-ports", "-out", out)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "compare: %s", tail(log))

	var env struct {
		Plan struct {
			TLS map[string]any `json:"tls"`
		} `json:"plan"`
	}
	readJSON(t, filepath.Join(out, "env.json"), &env)
	assert.Equal(t, map[string]any{"key": "p256", "version": "1.2", "resume": false}, env.Plan.TLS)
	assert.FileExists(t, filepath.Join(out, "tls-cert.pem"), "the sweep's own certificate")
	assert.Contains(t, read(t, filepath.Join(out, "summary.md")), "over TLS 1.2, p256, resume off, each path over TLS compared with standalone-tls")

	var sum struct {
		Cells []struct {
			Topology string `json:"topology"`
			Load     string `json:"load"`
			Rate     struct {
				Median float64 `json:"median"`
			} `json:"req_per_sec"`
			Ratio *struct {
				Center float64 `json:"center"`
			} `json:"ratio_to_standalone"`
			CPU *struct {
				Servers *struct {
					Center float64 `json:"center"`
				} `json:"servers_us"`
			} `json:"cpu_per_request"`
		} `json:"cells"`
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	rates := map[[2]string]float64{}
	for _, c := range sum.Cells {
		rates[[2]string{c.Load, c.Topology}] = c.Rate.Median
	}
	require.Len(t, rates, 8, "4 topologies x 2 loads")
	for _, c := range sum.Cells {
		name := c.Load + " " + c.Topology
		require.NotNil(t, c.Ratio, name)
		base := "standalone-tls"
		if c.Topology == "standalone" {
			base = "standalone"
		}
		assert.InDelta(t, c.Rate.Median/rates[[2]string{c.Load, base}], c.Ratio.Center, 1e-9, "%s: ratio to %s", name, base)
		require.NotNil(t, c.CPU, name)
		require.NotNil(t, c.CPU.Servers, name)
		assert.Positive(t, c.CPU.Servers.Center, "%s: CPU µs a request", name)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v), path)
}

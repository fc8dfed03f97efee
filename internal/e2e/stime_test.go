package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

// TestShortStimeSweep runs a short rounds sweep of standalone-tls on the
// engine and on OpenSSL's s_time side by side, a handshake a request:
// both have a rate and the load's CPU in summary.json, and s_time's runs
// record its command and its handshakes as the requests.
func TestShortStimeSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a real sweep: cmd/hello, openssl s_time")
	}
	bin := testenv.TopobenchBin(t)
	out := filepath.Join(testenv.ShortDir(t), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-design", "rounds", "-topologies", "standalone-tls",
		"-load", "builtin,s_time", "-gomaxprocs", "1", "-connections", "2", "-reps", "1", "-duration", "1s",
		"-warmup", "0s", "-close", "true", "-isolate", "none", "-cpus", "none", "-free-ports", "-out", out)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "compare: %s", tail(log))

	var sum struct {
		Cells []struct {
			Load string `json:"load"`
			Rate struct {
				Median float64 `json:"median"`
			} `json:"req_per_sec"`
		} `json:"cells"`
	}
	readJSON(t, filepath.Join(out, "summary.json"), &sum)
	rates := map[string]float64{}
	for _, c := range sum.Cells {
		rates[c.Load] = c.Rate.Median
	}
	require.Len(t, rates, 2, "standalone-tls on two loads")
	assert.Positive(t, rates["builtin"])
	assert.Positive(t, rates["s_time"])

	runs, err := filepath.Glob(filepath.Join(out, "runs", "*s_time*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, runs, "s_time's run records")
	var run struct {
		Command []string `json:"command"`
		Figures struct {
			Requests   int64 `json:"requests"`
			Handshakes int64 `json:"handshakes"`
		} `json:"figures"`
	}
	readJSON(t, runs[0], &run)
	assert.Equal(t, []string{"openssl", "s_time"}, run.Command[:2])
	assert.Positive(t, run.Figures.Handshakes)
	assert.Equal(t, run.Figures.Handshakes, run.Figures.Requests)
}

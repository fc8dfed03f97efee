package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/testenv"
)

// TestCompareLatency runs real short paired sweeps with the latency
// phase: after the pairs, standalone and nginx-http alone, open loop, in
// three rounds. At auto the rate is half the slower path's and is
// reached; at a rate no server here reaches every run is flagged and no
// latency is the path's.
func TestCompareLatency(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real sweeps with nginx")
	}
	t.Setenv(runAsMainEnv, "1") // the engine is this binary
	tests := []struct {
		name, rate string
		flagged    bool
	}{
		{"auto", "auto", false},
		{"too fast for the servers", "5000000", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(testenv.ShortDir(t), "r")
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"compare", "-preset", "2013", "-design", "paired", "-load", "builtin",
				"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-reps", "2", "-window", "1s", "-seed", "3", "-latency-rate", tt.rate,
				"-connections", "20", "-isolate", "none", "-cpus", "none", "-free-ports", "-out", dir}, &stdout, &stderr)
			require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			env, runs, err := results.Load(dir)
			require.NoError(t, err)
			require.NotNil(t, env.Plan.Paired.Latency)
			var lat []results.Run
			byTop := map[string][]float64{}
			for _, r := range runs {
				if env.Plan.LatencyRun(r.Cell) {
					lat = append(lat, r)
				} else if r.Pair != nil && r.Figures != nil {
					byTop[r.Topology] = append(byTop[r.Topology], r.Figures.ReqPerSec)
				}
			}
			least := math.Inf(1)
			for _, rates := range byTop {
				least = min(least, stats.Summarize(rates).Center)
			}
			require.Len(t, lat, 6, "3 rounds of standalone and nginx-http")
			slices.SortFunc(lat, func(a, b results.Run) int { return a.Start.Compare(b.Start) })
			for i, r := range lat {
				assert.Equal(t, []string{"standalone", "nginx-http"}[i%2], r.Topology, "interleaved")
				require.NotNil(t, r.Figures, r.Name())
				assert.Positive(t, r.Figures.TargetRate, r.Name())
				if tt.flagged {
					assert.NotEmpty(t, analysis.Flagged(r), "%s: %+v", r.Name(), *r.Figures)
				}
			}
			s := analysis.Summarize(env, runs)
			require.Len(t, s.Latency, 1)
			a := s.Latency[0]
			md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			require.NoError(t, err)
			assert.Contains(t, string(md), "**Added latency at ")
			require.Len(t, a.Paths, 2)
			nh := a.Paths[1]
			if tt.flagged {
				assert.Equal(t, 3, nh.Flagged)
				assert.Zero(t, nh.P99.N, "a flagged run's latency is not the path's")
				return
			}
			// On a shared machine a run may fall behind: it is counted, not used.
			assert.Equal(t, 3-nh.Flagged, nh.P99.N)
			assert.InDelta(t, math.Round(least/2), a.Rate, 1, "half the slower path's median req/s in the pairs")
			for _, r := range lat {
				if analysis.Flagged(r) == "" {
					assert.GreaterOrEqual(t, r.Figures.ReqPerSec, analysis.MinAchieved*r.Figures.TargetRate, r.Name())
				}
			}
			require.NotNil(t, nh.Added)
			assert.LessOrEqual(t, nh.Added[1].N, 3)
		})
	}
}

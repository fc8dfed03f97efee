package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestFractionRate: open loop at a fraction of the capacity sends that
// fraction of the least median closed-loop rate of the block's paths at
// the same work, ceilings and other blocks left out.
func TestFractionRate(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http", "nginx-return"}}}))
	work := 200 * time.Microsecond
	s := &sweep{Options: Options{Dir: dir}}
	write := func(top string, g int, w time.Duration, rates ...float64) {
		for i, r := range rates {
			run := results.Run{Cell: results.Cell{Topology: top, GOMAXPROCS: g, Connections: 100, Load: results.LoadBuiltin,
				Schedule: results.Schedule{Work: w}, Rep: i + 1}, Figures: &results.Figures{ReqPerSec: r, Requests: int64(r)}}
			require.NoError(t, s.record(run, nil))
		}
	}
	write("standalone", 1, work, 1000, 1100, 900)
	write("nginx-http", 1, work, 400, 420, 380)
	write("nginx-return", 1, work, 50) // a ceiling: not a path to the server
	write("nginx-http", 1, 0, 10)      // other work
	write("nginx-http", 2, work, 5)    // other block
	c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 100, Load: results.LoadBuiltin,
		Schedule: results.Schedule{Work: work, Fraction: 0.5}, Rep: 1}
	rate, err := s.fractionRate(c)
	require.NoError(t, err)
	assert.InDelta(t, 200, rate, 0, "half of nginx-http's median 400")

	c.Work = time.Millisecond
	_, err = s.fractionRate(c)
	assert.ErrorContains(t, err, "no closed-loop run at GOMAXPROCS=1, work 1ms measured the capacity")
}

package load

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// limitedServer answers each request after wait, serving at most slots
// requests at a time: the others queue, as behind a fixed thread pool.
func limitedServer(t *testing.T, slots int, wait time.Duration) net.Listener {
	ln := listenTCP(t)
	sem := make(chan struct{}, slots)
	startServer(t, ln, func(c net.Conn) {
		buf := make([]byte, 1024)
		for readRequest(c, buf) == nil {
			sem <- struct{}{}
			time.Sleep(wait)
			<-sem
			if _, err := c.Write([]byte(okResponse)); err != nil {
				return
			}
		}
	})
	return ln
}

func TestProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for answers of 300 ms and more")
	}
	const wait = 300 * time.Millisecond
	for _, tc := range []struct {
		name       string
		slots, n   int
		concurrent int64
	}{
		{"all at once", 50, 40, 40},
		// 40 requests through 10 slots: 10 answer after one wait, the
		// rest after two or more, beyond the bound of 1.5 x wait.
		{"queued", 10, 40, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := limitedServer(t, tc.slots, wait)
			res, err := Probe(context.Background(), ProbeOptions{
				Target: tcpTarget(t, ln), Requests: tc.n, Wait: wait, Within: wait * 3 / 2, Timeout: 10 * time.Second,
			})
			require.NoError(t, err)
			s := res.Summary
			assert.Equal(t, "probe", s.Mode)
			assert.EqualValues(t, tc.n, s.Sent)
			assert.EqualValues(t, tc.n, s.Requests)
			assert.Zero(t, s.Errors.Total())
			assert.Equal(t, tc.concurrent, s.Concurrent)
			assert.EqualValues(t, tc.n, res.Histogram.TotalCount())
			assert.GreaterOrEqual(t, s.Latency.P50, 300.0)
			assert.InDelta(t, 450, s.ProbeWithinMs, 0.001)
		})
	}
}

func TestProbeErrors(t *testing.T) {
	t.Run("refused connections", func(t *testing.T) {
		ln := listenTCP(t)
		tg := tcpTarget(t, ln)
		ln.Close()
		res, err := Probe(context.Background(), ProbeOptions{Target: tg, Requests: 5, Wait: 10 * time.Millisecond})
		require.NoError(t, err)
		assert.EqualValues(t, 5, res.Summary.Errors.Connect)
		assert.Zero(t, res.Summary.Concurrent)
	})
	t.Run("above the open-files limit", func(t *testing.T) {
		limit, err := MaxProbe()
		require.NoError(t, err)
		_, err = Probe(context.Background(), ProbeOptions{Target: Target{Network: "tcp", Address: "127.0.0.1:1", Host: "x", Path: "/"}, Requests: limit + 1, Wait: time.Second})
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrTooManyFiles), "%v", err)
	})
	t.Run("no wait", func(t *testing.T) {
		_, err := Probe(context.Background(), ProbeOptions{Target: Target{Network: "tcp", Address: "127.0.0.1:1", Host: "x", Path: "/"}, Requests: 1})
		assert.ErrorContains(t, err, "wait")
	})
}

func TestProbeWithin(t *testing.T) {
	assert.Equal(t, 2*time.Second, ProbeWithin(time.Second), "at least 1 s of margin")
	assert.Equal(t, 15*time.Second, ProbeWithin(10*time.Second), "half the wait")
}

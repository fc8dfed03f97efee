package load

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWindowArgs(t *testing.T) {
	for _, tc := range []struct {
		arg      string
		d, lead  time.Duration
		slices   int
		counters []string
		err      bool
	}{
		{arg: "1s", d: time.Second},
		{arg: "1s lead 250ms", d: time.Second, lead: 250 * time.Millisecond},
		{arg: "2s counters /a/b", d: 2 * time.Second, counters: []string{"/a/b"}},
		{arg: "1s lead 1s counters /a,/b/c", d: time.Second, lead: time.Second, counters: []string{"/a", "/b/c"}},
		{arg: "1s counters /a lead 1s", d: time.Second, lead: time.Second, counters: []string{"/a"}},
		{arg: "", err: true},
		{arg: "x", err: true},
		{arg: "1s lead", err: true},
		{arg: "1s lead x", err: true},
		{arg: "1s lead 1s lead 2s", err: true},
		{arg: "1s counters /a,,/b", err: true},
		{arg: "1s drain 1s", err: true},
		{arg: "10s slices 10 lead 1s", d: 10 * time.Second, lead: time.Second, slices: 10},
		{arg: "10s slices 0", err: true},
		{arg: "10s slices x", err: true},
	} {
		t.Run(tc.arg, func(t *testing.T) {
			ws, err := windowArgs(tc.arg)
			if tc.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.d, ws.Duration)
			assert.Equal(t, tc.lead, ws.Lead)
			assert.Equal(t, tc.slices, ws.Slices)
			assert.Equal(t, tc.counters, ws.Counters)
		})
	}
}

// TestWindowCounters: counter files are read at the measured time's two
// ends, not around the lead and the drain. /proc/uptime (10 ms
// resolution) advances by the measured time alone: 300 ms after a 400 ms
// lead. A file that cannot be read says why; the window still counts.
func TestWindowCounters(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "a", sessionSpec(srv.target, 4))
	require.NoError(t, err)
	missing := filepath.Join(t.TempDir(), "gone")
	w, err := c.WindowCounting(ctx, "a", 400*time.Millisecond, 300*time.Millisecond, []string{"/proc/uptime", missing})
	require.NoError(t, err)
	require.Len(t, w.Counters, 2)
	up := w.Counters[0]
	assert.Empty(t, up.Error)
	uptime := func(s string) float64 {
		f := strings.Fields(s)
		require.NotEmpty(t, f, "%q", s)
		v, err := strconv.ParseFloat(f[0], 64)
		require.NoError(t, err)
		return v
	}
	span := uptime(up.End) - uptime(up.Start)
	t.Logf("uptime %s to %s: %.2f s over a measured %s (lead %s, drain %s)", up.Start, up.End, span,
		time.Duration(w.DurationNs), time.Duration(w.LeadNs), time.Duration(w.DrainNs))
	assert.InDelta(t, time.Duration(w.DurationNs).Seconds(), span, 0.03)
	assert.Equal(t, missing, w.Counters[1].Path)
	assert.NotEmpty(t, w.Counters[1].Error)
	assert.Positive(t, w.Requests)
	assert.GreaterOrEqual(t, w.CallCPUNs, w.CPUUserNs+w.CPUSysNs, "the call's CPU includes the measured time's")

	_, err = c.WindowCounting(ctx, "a", 0, 100*time.Millisecond, []string{"/a b"})
	assert.Error(t, err)
	w, err = c.WindowAfter(ctx, "a", 0, 100*time.Millisecond)
	require.NoError(t, err)
	assert.Nil(t, w.Counters)
}

package load

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionTogether: one window of two pools at once, on real sockets:
// both measured for the same span, started within a few milliseconds,
// each counting its own server's answers; then each pool's windows still
// add up to its server's.
func TestSessionTogether(t *testing.T) {
	fast := startCounting(t, listenTCP(t), 0)
	slow := startCounting(t, listenTCP(t), 2*time.Millisecond)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "fast", sessionSpec(fast.target, 8))
	require.NoError(t, err)
	_, err = c.Open(ctx, "slow", sessionSpec(slow.target, 8))
	require.NoError(t, err)

	tg, err := c.Together(ctx, []string{"slow", "fast"}, WindowSpec{Duration: 300 * time.Millisecond, Lead: 50 * time.Millisecond})
	require.NoError(t, err)
	require.Len(t, tg.Windows, 2)
	s, f := tg.Windows[0], tg.Windows[1]
	assert.Equal(t, "slow", s.Pool)
	assert.Equal(t, "fast", f.Pool)
	for _, w := range tg.Windows {
		assert.Positive(t, w.Requests, w.Pool)
		assert.Zero(t, w.Errors.Total(), w.Pool)
		assert.InDelta(t, 300*time.Millisecond, time.Duration(w.DurationNs), float64(50*time.Millisecond), w.Pool)
		assert.EqualValues(t, 50*time.Millisecond, w.LeadNs, w.Pool)
	}
	assert.Less(t, s.Start.Sub(f.Start).Abs(), 20*time.Millisecond, "the two windows start together")
	// 8 connections at 2 ms a request make at most 4000/s.
	assert.Less(t, s.AchievedRate, 4100.0)
	assert.Greater(t, f.AchievedRate, s.AchievedRate, "the fast server answers more")

	for _, p := range []struct {
		name string
		srv  *countingServer
	}{{"fast", fast}, {"slow", slow}} {
		tot, err := c.Close(p.name)
		require.NoError(t, err)
		assert.Equal(t, 1, tot.Windows)
		assert.Equal(t, p.srv.answered.Load(), 8+tot.Requests+tot.Drained+tot.LeadAnswers, "%s: a first answer on each connection, then the window's", p.name)
	}
}

func TestSessionTogetherRefuses(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "a", sessionSpec(srv.target, 2))
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		pools []string
		want  string
	}{
		{"one pool", []string{"a"}, "want two pools"},
		{"unknown", []string{"a", "b"}, "no pool b"},
		{"twice", []string{"a", "a"}, "named twice"},
		{"comma", []string{"a", "b,c"}, "no commas"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Together(ctx, tc.pools, WindowSpec{Duration: 50 * time.Millisecond})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err = c.Open(ctx, "x,y", sessionSpec(srv.target, 1))
	var re *ReplyError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "no commas")
	w, err := c.Window(ctx, "a", 50*time.Millisecond)
	require.NoError(t, err, "the session went on")
	assert.Positive(t, w.Requests)
}

// TestSessionSlices: a together cut into slices loads without a pause and
// cuts each pool's window at the same edges: the slices add up to the
// window, each about its share of it, with the counter files read at
// every edge (/proc/uptime advances by a slice, in 10 ms steps).
func TestSessionSlices(t *testing.T) {
	fast := startCounting(t, listenTCP(t), 0)
	slow := startCounting(t, listenTCP(t), time.Millisecond)
	c := startSession(t)
	ctx := context.Background()
	for name, srv := range map[string]*countingServer{"fast": fast, "slow": slow} {
		_, err := c.Open(ctx, name, sessionSpec(srv.target, 4))
		require.NoError(t, err)
	}
	tg, err := c.Together(ctx, []string{"fast", "slow"}, WindowSpec{Duration: 800 * time.Millisecond, Lead: 100 * time.Millisecond, Slices: 4, Counters: []string{"/proc/uptime"}})
	require.NoError(t, err)
	for _, w := range tg.Windows {
		require.Len(t, w.Slices, 4, w.Pool)
		var reqs, ns int64
		for i, sl := range w.Slices {
			assert.Equal(t, i+1, sl.Index)
			assert.InDelta(t, 200*time.Millisecond, time.Duration(sl.DurationNs), float64(40*time.Millisecond), "%s slice %d", w.Pool, sl.Index)
			assert.Positive(t, sl.Requests, "%s slice %d", w.Pool, sl.Index)
			assert.Zero(t, sl.Errors.Total())
			require.Len(t, sl.Counters, 1)
			assert.Empty(t, sl.Counters[0].Error)
			up := func(s string) float64 {
				var v, idle float64
				_, err := fmt.Sscan(s, &v, &idle)
				require.NoError(t, err, s)
				return v
			}
			assert.InDelta(t, 0.2, up(sl.Counters[0].End)-up(sl.Counters[0].Start), 0.05, "%s slice %d: /proc/uptime", w.Pool, sl.Index)
			if i > 0 {
				prev := w.Slices[i-1]
				assert.Equal(t, prev.Start.Add(time.Duration(prev.DurationNs)), sl.Start, "slices follow each other")
				assert.Equal(t, prev.Counters[0].End, sl.Counters[0].Start, "one reading at each inner edge")
			}
			reqs += sl.Requests
			ns += sl.DurationNs
		}
		assert.Equal(t, w.Requests, reqs, "%s: the slices add up to the window", w.Pool)
		assert.Equal(t, w.DurationNs, ns, w.Pool)
		assert.Equal(t, w.Start, w.Slices[0].Start, w.Pool)
	}
	f, s := tg.Windows[0].Slices, tg.Windows[1].Slices
	for i := range f {
		assert.Less(t, f[i].Start.Sub(s[i].Start).Abs(), 20*time.Millisecond, "slice %d starts together on both pools", i+1)
		assert.Greater(t, f[i].AchievedRate(), s[i].AchievedRate(), "slice %d: the fast server answers more", i+1)
	}
}

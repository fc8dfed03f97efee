package load

import (
	"context"
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

	tg, err := c.Together(ctx, []string{"slow", "fast"}, 50*time.Millisecond, 300*time.Millisecond, nil)
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
			_, err := c.Together(ctx, tc.pools, 0, 50*time.Millisecond, nil)
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

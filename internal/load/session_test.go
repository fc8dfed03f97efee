package load

import (
	"context"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingServer answers every request with okResponse after delay and
// counts connections accepted, requests read and answers written.
type countingServer struct {
	target                   Target
	accepted, read, answered atomic.Int64
}

func (s *countingServer) inFlight() int64 { return s.read.Load() - s.answered.Load() }

func startCounting(t *testing.T, ln net.Listener, delay time.Duration) *countingServer {
	t.Helper()
	s := &countingServer{target: tcpTarget(t, ln)}
	resp := []byte(okResponse)
	startServer(t, ln, func(c net.Conn) {
		s.accepted.Add(1)
		buf := make([]byte, 4096)
		for readRequest(c, buf) == nil {
			s.read.Add(1)
			if delay > 0 {
				time.Sleep(delay)
			}
			// Counted before the write: the engine may read the answer,
			// and its window end, before this goroutine runs again.
			s.answered.Add(1)
			if _, err := c.Write(resp); err != nil {
				s.answered.Add(-1)
				return
			}
		}
	})
	return s
}

// startSession serves a session in process over pipes and returns its
// client; the session ends with the test.
func startSession(t *testing.T) *SessionClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeSession(context.Background(), inR, outW, 1); outW.Close() }()
	t.Cleanup(func() {
		inW.Close() // end of input: the session closes its pools
		require.NoError(t, <-done)
	})
	return NewSessionClient(inW, outR)
}

func sessionSpec(tg Target, conns int) Spec {
	s := DefaultSpec()
	s.Target, s.Connections, s.Timeout = tg, conns, time.Second
	return s
}

// TestSessionWindowsAddUp: a pool's windows add up to its totals, which
// add up to what the server answered (drained answers included); its
// connections were opened once, before the first window.
func TestSessionWindowsAddUp(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	ctx := context.Background()
	o, err := c.Open(ctx, "a", sessionSpec(srv.target, 20))
	require.NoError(t, err)
	limit, err := OpenFilesLimit()
	require.NoError(t, err)
	assert.Equal(t, Opened{Pool: "a", Connections: 20, Elapsed: o.Elapsed, OpenFilesLimit: limit}, o)
	assert.EqualValues(t, 20, srv.accepted.Load(), "each connection answered a first request before open replied")

	var sum PoolTotals
	sum.Pool, sum.Opened = "a", 20
	for i := range 3 {
		w, err := c.Window(ctx, "a", 200*time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, i+1, w.Index)
		assert.Positive(t, w.Requests)
		assert.Zero(t, w.Errors.Total())
		assert.Zero(t, srv.inFlight(), "the window drained its answers")
		// At least the time asked for; a busy machine fires the timer late.
		assert.GreaterOrEqual(t, w.DurationNs, int64(200*time.Millisecond))
		assert.Less(t, w.DurationNs, int64(time.Second))
		assert.Equal(t, w.End.Sub(w.Start), time.Duration(w.DurationNs))
		res, err := w.Result()
		require.NoError(t, err)
		assert.Equal(t, w.Requests, res.Histogram.TotalCount(), "the histogram holds exactly the window's answers")
		assert.InDelta(t, float64(w.Requests)/(float64(w.DurationNs)/1e9), w.AchievedRate, 1)
		sum.add(w)
	}
	tot, err := c.Close("a")
	require.NoError(t, err)
	assert.Equal(t, sum, tot)
	assert.Equal(t, srv.answered.Load(), 20+tot.Requests+tot.Drained, "a first answer on each connection, then the windows'")
	assert.EqualValues(t, 20, srv.accepted.Load(), "connections opened once")
	assert.Zero(t, tot.Reconnects)
	require.NoError(t, c.Quit())
}

// TestSessionLead: a window's lead loads the pool before its measured
// time; answers that end in it are counted apart, the measured time and
// the histogram start after it, and lead, window and drain add up to what
// the server answered.
func TestSessionLead(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 100*time.Millisecond)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "a", sessionSpec(srv.target, 10))
	require.NoError(t, err)
	before := srv.answered.Load()
	t0 := time.Now()
	w, err := c.WindowAfter(ctx, "a", 250*time.Millisecond, 300*time.Millisecond)
	require.NoError(t, err)
	assert.EqualValues(t, 250*time.Millisecond, w.LeadNs)
	// Each connection's first answers (at 100 and 200 ms) end in the lead.
	assert.GreaterOrEqual(t, w.LeadAnswers, int64(10))
	assert.Positive(t, w.Requests)
	assert.GreaterOrEqual(t, w.DurationNs, int64(300*time.Millisecond))
	assert.Less(t, w.DurationNs, int64(time.Second))
	assert.False(t, w.Start.Before(t0.Add(250*time.Millisecond)), "the measured time starts after the lead")
	assert.Equal(t, w.End.Sub(w.Start), time.Duration(w.DurationNs))
	res, err := w.Result()
	require.NoError(t, err)
	assert.Equal(t, w.Requests, res.Histogram.TotalCount(), "the histogram holds the measured answers, none of the lead's")
	assert.Equal(t, srv.answered.Load()-before, w.LeadAnswers+w.Requests+w.Drained)
	assert.InDelta(t, float64(w.Requests)/(float64(w.DurationNs)/1e9), w.AchievedRate, 1, "the rate over the measured time alone")
	tot, err := c.Close("a")
	require.NoError(t, err)
	assert.Equal(t, w.LeadAnswers, tot.LeadAnswers)
}

// TestSessionSwitch: a window on a slow pool ends with its answers
// drained, so the next window, on another pool, counts none of them.
func TestSessionSwitch(t *testing.T) {
	slow := startCounting(t, listenTCP(t), 500*time.Millisecond)
	fast := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "slow", sessionSpec(slow.target, 10))
	require.NoError(t, err)
	_, err = c.Open(ctx, "fast", sessionSpec(fast.target, 10))
	require.NoError(t, err)
	for range 2 {
		ws, err := c.Window(ctx, "slow", 700*time.Millisecond)
		require.NoError(t, err)
		assert.Zero(t, slow.inFlight(), "the slow pool's answers are in before the next window")
		assert.Positive(t, ws.Requests)
		assert.Equal(t, 10, ws.Threads, "the pool ran on the event loops")
		assert.Positive(t, ws.Drained, "a 500 ms answer was out when the window ended")
		assert.GreaterOrEqual(t, ws.DrainNs, int64(10*time.Millisecond))
		before := slow.answered.Load()
		wf, err := c.Window(ctx, "fast", 300*time.Millisecond)
		require.NoError(t, err)
		assert.Equal(t, before, slow.answered.Load(), "nothing from the slow pool during the fast window")
		res, err := wf.Result()
		require.NoError(t, err)
		assert.Less(t, res.Histogram.Max(), int64(500_000), "no 500 ms answer in the fast window")
		assert.Positive(t, wf.Requests)
		assert.Equal(t, 10, wf.Threads)
		assert.GreaterOrEqual(t, wf.ReadyPerWake, 1.0, "the window's batching figure")
	}
	ts, err := c.Close("slow")
	require.NoError(t, err)
	tf, err := c.Close("fast")
	require.NoError(t, err)
	assert.Equal(t, slow.answered.Load(), 10+ts.Requests+ts.Drained)
	assert.Equal(t, fast.answered.Load(), 10+tf.Requests+tf.Drained)
}

// TestSessionErrors: a failed command replies an error and the session
// goes on.
func TestSessionErrors(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Window(ctx, "none", time.Second)
	var re *ReplyError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "no pool none")

	bad := sessionSpec(srv.target, 2)
	bad.Rate = 10
	_, err = c.Open(ctx, "a", bad)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "rate")

	bad = sessionSpec(srv.target, 2)
	bad.Requests = 100
	_, err = c.Open(ctx, "a", bad)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "requests")

	bad = sessionSpec(srv.target, 2)
	bad.Procs = 2
	_, err = c.Open(ctx, "a", bad)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "procs")

	_, err = c.Open(ctx, "a", sessionSpec(srv.target, 2))
	require.NoError(t, err)
	_, err = c.Open(ctx, "a", sessionSpec(srv.target, 2))
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "open already")

	_, err = c.Window(ctx, "a", -time.Second)
	require.ErrorAs(t, err, &re)
	_, err = c.WindowAfter(ctx, "a", -time.Second, time.Second)
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "lead")
	for _, line := range []string{"window a 1s lead", "window a 1s lead x", "window a 1s 2s"} {
		require.ErrorAs(t, c.roundTrip(ctx, line, nil), &re, line)
		assert.Contains(t, re.Msg, "want", line)
	}
	_, err = c.Close("b")
	require.ErrorAs(t, err, &re)

	w, err := c.Window(ctx, "a", 100*time.Millisecond)
	require.NoError(t, err, "the session went on")
	assert.Positive(t, w.Requests)
}

// TestSessionFitsOpenFiles: an open that would pass the open-files limit
// beside the pools already open is refused, and the session goes on.
func TestSessionFitsOpenFiles(t *testing.T) {
	limit, err := OpenFilesLimit()
	require.NoError(t, err)
	srv := startCounting(t, listenTCP(t), 0)
	c := startSession(t)
	_, err = c.Open(context.Background(), "a", sessionSpec(srv.target, limit))
	var re *ReplyError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Msg, "open-files limit")
	assert.Zero(t, srv.accepted.Load())
}

// TestSessionReconnects: connections the server closed while the pool
// was idle are dialed again before the next window, not in it; ones it
// closes in a window (Connection: close) are counted as reconnects.
func TestSessionReconnects(t *testing.T) {
	ln := listenTCP(t)
	var accepted atomic.Int64
	var kill atomic.Bool
	conns := make(chan net.Conn, 100)
	startServer(t, ln, func(c net.Conn) {
		accepted.Add(1)
		select {
		case conns <- c:
		default:
		}
		buf := make([]byte, 4096)
		for readRequest(c, buf) == nil {
			// One reading a request: the flag set between two readings
			// would close a connection whose answer said keep-alive.
			closing := kill.Load()
			resp := okResponse
			if closing {
				resp = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 12\r\n\r\nHello World\n"
			}
			if _, err := c.Write([]byte(resp)); err != nil || closing {
				return
			}
		}
	})
	c := startSession(t)
	ctx := context.Background()
	_, err := c.Open(ctx, "a", sessionSpec(tcpTarget(t, ln), 4))
	require.NoError(t, err)
	w, err := c.Window(ctx, "a", 100*time.Millisecond)
	require.NoError(t, err)
	assert.Zero(t, w.Reconnects)

	// The server closes every connection while the pool is idle.
	for range 4 {
		(<-conns).Close()
	}
	time.Sleep(50 * time.Millisecond)
	w, err = c.Window(ctx, "a", 100*time.Millisecond)
	require.NoError(t, err)
	assert.EqualValues(t, 4, w.Reconnects, "dialed again before the window")
	assert.Zero(t, w.Errors.Total(), "no request met a closed connection")
	assert.EqualValues(t, 8, accepted.Load())

	kill.Store(true)
	w, err = c.Window(ctx, "a", 100*time.Millisecond)
	require.NoError(t, err)
	assert.Zero(t, w.Errors.Total(), "Connection: close is no error: %+v", w.Errors)
	assert.Greater(t, w.Reconnects, int64(4), "%+v", w)
	waitFor(t, time.Second, func() bool { return accepted.Load() == 8+w.Reconnects })
}

// listenBacklog listens on loopback with an accept queue of backlog
// connections (net.Listen takes somaxconn).
func listenBacklog(t *testing.T, backlog int) net.Listener {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(t, syscall.Listen(fd, backlog))
	f := os.NewFile(uintptr(fd), "backlog")
	defer f.Close()
	ln, err := net.FileListener(f)
	require.NoError(t, err)
	return ln
}

// TestPacedDials: 1000 connections to a listener whose accept queue holds
// 8 all open, none a connect error, because at most DialsInFlight dials
// are under way at once and the server accepts as they come.
func TestPacedDials(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1000 connections")
	}
	srv := startCounting(t, listenBacklog(t, 8), 0)
	res, err := Run(context.Background(), Options{Target: srv.target, Connections: 1000, Requests: 2000, Timeout: 2 * time.Second})
	require.NoError(t, err)
	s := res.Summary
	assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
	assert.EqualValues(t, 2000, s.Requests)
	assert.EqualValues(t, 1000, srv.accepted.Load())
}

// TestTimeoutKeepsConnection: a request past the timeout is counted as
// a timeout, as wrk counts it, and its connection is kept: its late
// answer comes in on it and the next requests follow on it.
func TestTimeoutKeepsConnection(t *testing.T) {
	ln := listenTCP(t)
	var accepted, n atomic.Int64
	answer := answerEach(okResponse, func() {
		if n.Add(1) == 2 { // the first is the engine's, before the measured time
			time.Sleep(300 * time.Millisecond)
		}
	})
	startServer(t, ln, func(c net.Conn) { accepted.Add(1); answer(c) })
	res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 1, Requests: 5, Timeout: 200 * time.Millisecond})
	require.NoError(t, err)
	s := res.Summary
	assert.EqualValues(t, 1, s.Errors.Timeout)
	assert.EqualValues(t, 1, s.LateAnswers, "the late answer came in on the kept connection")
	assert.EqualValues(t, 4, s.Requests)
	assert.Zero(t, s.Reconnects)
	assert.EqualValues(t, 4, res.Histogram.TotalCount(), "the late answer is not in the histogram")
	assert.EqualValues(t, 1, accepted.Load(), "one connection throughout")
}

// TestPrimeWithoutWait: a new connection's first request, before the
// measured time, goes without the handler wait, which would otherwise
// hold every dial slot for the wait; the measured requests ask for it.
// With NoPrime there is no such request: the server sees only the
// measured ones, as under wrk.
func TestPrimeWithoutWait(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noPrime bool
		plain   int64
	}{
		{"primed", false, 10},
		{"no prime", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listenTCP(t)
			var waited, plain atomic.Int64
			resp := []byte(okResponse)
			startServer(t, ln, func(c net.Conn) {
				buf := make([]byte, 4096)
				for readRequest(c, buf) == nil {
					if strings.Contains(string(buf[:64]), "wait=") {
						waited.Add(1)
					} else {
						plain.Add(1)
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			})
			s := DefaultSpec()
			s.Target, s.Connections, s.Requests, s.Wait, s.NoPrime = tcpTarget(t, ln), 10, 30, time.Millisecond, tc.noPrime
			res, err := Run(context.Background(), s.RunOptions())
			require.NoError(t, err)
			assert.EqualValues(t, 30, res.Summary.Requests)
			assert.Equal(t, tc.plain, plain.Load(), "first requests, without the wait")
			assert.EqualValues(t, 30, waited.Load())
		})
	}
}

// TestSessionInterrupted: the end of the session's context cuts a window
// short and ends the session with the context's error.
func TestSessionInterrupted(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeSession(ctx, inR, outW, 1); outW.Close() }()
	c := NewSessionClient(inW, outR)
	_, err := c.Open(context.Background(), "a", sessionSpec(srv.target, 4))
	require.NoError(t, err)
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	w, err := c.Window(context.Background(), "a", time.Minute)
	assert.Less(t, time.Since(start), 10*time.Second, "the window was cut")
	if err == nil { // the reply may have made it out before the session ended
		assert.True(t, w.Interrupted)
	}
	assert.ErrorIs(t, <-done, context.Canceled)
}

// TestMeasuredCPU: the summary splits off the CPU time of the measured
// time, which excludes connecting.
func TestMeasuredCPU(t *testing.T) {
	srv := startCounting(t, listenTCP(t), 0)
	res, err := Run(context.Background(), Options{Target: srv.target, Connections: 4, Requests: 2000})
	require.NoError(t, err)
	s := res.Summary
	assert.Positive(t, s.MeasuredCPUPerRequestUs)
	assert.LessOrEqual(t, s.MeasuredCPUUserSeconds+s.MeasuredCPUSysSeconds, s.CPUSeconds)
}

// TestCloseResets: the engine ends its connections with a reset, which
// leaves no TIME_WAIT socket on its side: the server reads ECONNRESET,
// not the end of file a FIN gives.
func TestCloseResets(t *testing.T) {
	ln := listenTCP(t)
	ends := make(chan error, 10)
	startServer(t, ln, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			if err := readRequest(c, buf); err != nil {
				ends <- err
				return
			}
			if _, err := c.Write([]byte(okResponse)); err != nil {
				ends <- err
				return
			}
		}
	})
	res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 10, Requests: 100})
	require.NoError(t, err)
	require.EqualValues(t, 100, res.Summary.Requests)
	for range 10 {
		select {
		case err := <-ends:
			assert.ErrorIs(t, err, syscall.ECONNRESET)
		case <-time.After(5 * time.Second):
			t.Fatal("a connection was not closed")
		}
	}
}

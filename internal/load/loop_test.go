package load

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answerInPieces answers each request with pieces, pausing between them
// so that each arrives in a read of its own; close ends the connection
// after each answer without saying so.
func answerInPieces(pieces []string, pause time.Duration, close bool, accepted *atomic.Int64) func(net.Conn) {
	return func(c net.Conn) {
		accepted.Add(1)
		buf := make([]byte, 4096)
		for readRequest(c, buf) == nil {
			for i, p := range pieces {
				if i > 0 {
					time.Sleep(pause)
				}
				if _, err := c.Write([]byte(p)); err != nil {
					return
				}
			}
			if close {
				return
			}
		}
	}
}

// answerThenDrop answers a connection's first request, then reads the
// next and closes without a word: that request is surely in flight when
// the connection goes (a close right after an answer can reach the client
// before it sends again, and is then a plain reconnect).
func answerThenDrop(accepted *atomic.Int64) func(net.Conn) {
	return func(c net.Conn) {
		accepted.Add(1)
		buf := make([]byte, 4096)
		if readRequest(c, buf) != nil {
			return
		}
		if _, err := c.Write([]byte(okResponse)); err != nil {
			return
		}
		_ = readRequest(c, buf)
	}
}

// TestLoopAnswersInPieces: the event loop reads an answer that comes in
// several reads, wherever it is cut, and counts a bad one as a read
// (framing) error and replaces its connection; with one loop for both
// connections too, whose answers then come in turns on one thread.
func TestLoopAnswersInPieces(t *testing.T) {
	hdrEnd := strings.Index(okResponse, "\r\n\r\n")
	for _, tc := range []struct {
		name    string
		pieces  []string
		framing bool
	}{
		{"whole", []string{okResponse}, false},
		{"status line cut", []string{okResponse[:6], okResponse[6:]}, false},
		{"header end cut", []string{okResponse[:hdrEnd+2], okResponse[hdrEnd+2:]}, false},
		{"body cut twice", []string{okResponse[:hdrEnd+4], okResponse[hdrEnd+4 : hdrEnd+8], okResponse[hdrEnd+8:]}, false},
		{"byte by byte", strings.Split(okResponse, ""), false},
		{"bytes past the body", []string{okResponse[:hdrEnd+4], okResponse[hdrEnd+4:] + "extra"}, true},
	} {
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s, %d loops", tc.name, threads), func(t *testing.T) {
				ln := listenTCP(t)
				var accepted atomic.Int64
				startServer(t, ln, answerInPieces(tc.pieces, time.Millisecond, false, &accepted))
				res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 2, Threads: threads, Requests: 20, Timeout: 5 * time.Second})
				require.NoError(t, err)
				s := res.Summary
				assert.Equal(t, threads, s.Threads)
				if !tc.framing {
					assert.EqualValues(t, 20, s.Requests)
					assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
					assert.Zero(t, s.Reconnects)
					assert.EqualValues(t, 20, res.Histogram.TotalCount())
					return
				}
				// The priming request fails too, so the loop dials both.
				assert.Zero(t, s.Requests)
				assert.Positive(t, s.Errors.Framing)
				assert.Equal(t, s.Errors.Framing, s.Errors.Read)
				waitFor(t, time.Second, func() bool { return accepted.Load() == 2+s.Reconnects })
			})
		}
	}
}

// TestLoopClosedConnections: a connection the server closes is replaced
// by the loop and counted as a reconnect; closing with Connection: close
// is no error, closing without a word makes the next request fail (a
// write or read error), closing inside an answer is a framing error.
func TestLoopClosedConnections(t *testing.T) {
	closing := "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 12\r\n\r\nHello World\n"
	for _, tc := range []struct {
		name   string
		pieces []string // nil: answerThenDrop
		errors bool
	}{
		{"connection close", []string{closing}, false},
		{"closed without a word", nil, true},
		{"closed inside the answer", []string{okResponse[:20]}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listenTCP(t)
			var accepted atomic.Int64
			serve := answerInPieces(tc.pieces, 0, true, &accepted)
			if tc.pieces == nil {
				serve = answerThenDrop(&accepted)
			}
			startServer(t, ln, serve)
			res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 3, Requests: 30, Timeout: 5 * time.Second})
			require.NoError(t, err)
			s := res.Summary
			assert.Equal(t, 3, s.Threads, "one loop a connection, at most")
			assert.Positive(t, s.Reconnects)
			assert.Zero(t, s.Errors.Connect+s.Errors.Timeout)
			assert.EqualValues(t, 30, s.Sent+s.Errors.Connect, "every request of the count was sent")
			if tc.errors {
				assert.Positive(t, s.Errors.Read+s.Errors.Write)
			} else {
				assert.Zero(t, s.Errors.Total(), "%+v", s.Errors)
				assert.EqualValues(t, 30, s.Requests)
			}
			assert.Equal(t, s.Requests+s.Errors.Total(), s.Sent)
			waitFor(t, time.Second, func() bool { return accepted.Load() == 3+s.Reconnects })
		})
	}
}

// TestLoopTimeouts: a request past the timeout is counted as a timeout
// and its connection kept for the late answer, on the loops as with
// goroutines; an answer not in after twice the timeout is given up and
// its connection replaced.
func TestLoopTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name       string
		goroutines bool
		sleep      time.Duration
		late       int64
		reconnects int64
	}{
		{"loops: late answer on the kept connection", false, 300 * time.Millisecond, 1, 0},
		{"goroutines: late answer on the kept connection", true, 300 * time.Millisecond, 1, 0},
		{"loops: no answer, connection replaced", false, 700 * time.Millisecond, 0, 1},
		{"goroutines: no answer, connection replaced", true, 700 * time.Millisecond, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln := listenTCP(t)
			var accepted, n atomic.Int64
			answer := answerEach(okResponse, func() {
				if n.Add(1) == 2 { // the first is the priming request
					time.Sleep(tc.sleep)
				}
			})
			startServer(t, ln, func(c net.Conn) { accepted.Add(1); answer(c) })
			res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 1, Requests: 5,
				Timeout: 200 * time.Millisecond, Goroutines: tc.goroutines})
			require.NoError(t, err)
			s := res.Summary
			assert.EqualValues(t, 1, s.Errors.Timeout)
			assert.Equal(t, tc.late, s.LateAnswers)
			assert.Equal(t, tc.reconnects, s.Reconnects)
			assert.EqualValues(t, 4, s.Requests)
			assert.EqualValues(t, 4, res.Histogram.TotalCount(), "the timed-out request is not in the histogram")
			assert.Equal(t, 1+tc.reconnects, accepted.Load())
		})
	}
}

// TestLoopBatching: the loops' ready connections per wake-up is in the
// summary, its JSON form and the record's figures; the goroutine mode
// has none.
func TestLoopBatching(t *testing.T) {
	ln := listenTCP(t)
	startServer(t, ln, answerEach(okResponse, nil))
	for _, tc := range []struct {
		name       string
		goroutines bool
		threads    int
	}{
		{"loops", false, 4},
		{"goroutines", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 40, Threads: tc.threads,
				Goroutines: tc.goroutines, Duration: 200 * time.Millisecond})
			require.NoError(t, err)
			s := res.Summary
			require.Positive(t, s.Requests)
			b, err := json.Marshal(s)
			require.NoError(t, err)
			var back Summary
			require.NoError(t, json.Unmarshal(b, &back))
			f := back.Figures()
			if tc.goroutines {
				assert.Zero(t, s.Threads)
				assert.NotContains(t, string(b), "ready_per_wake")
				assert.Zero(t, f.ReadyPerWake)
				return
			}
			assert.Equal(t, 4, s.Threads)
			assert.Positive(t, s.Wakes)
			assert.GreaterOrEqual(t, s.ReadyPerWake, 1.0)
			assert.LessOrEqual(t, s.ReadyPerWake, 10.0, "a loop has 10 connections")
			assert.Equal(t, s.ReadyPerWake, f.ReadyPerWake)
			assert.Equal(t, 4, f.Threads)
		})
	}
}

// oneLoop is an engine's one loop over one open, idle connection to a
// server that answers every request, driven by the test's own calls.
func oneLoop(t *testing.T) (*loop, *conn) {
	ln := listenTCP(t)
	startServer(t, ln, answerEach(okResponse, nil))
	opt := Options{Target: tcpTarget(t, ln), Connections: 1, Duration: time.Hour}
	require.NoError(t, opt.fill())
	e := newEngine(context.Background(), opt)
	require.NoError(t, e.startLoops())
	t.Cleanup(e.closeLoops)
	cs := e.open(1)
	t.Cleanup(e.closeAll)
	e.start = time.Now()
	l, c := e.loops[0], cs[0]
	require.EqualValues(t, stIdle, c.st)
	return l, c
}

// TestLoopNoAllocationsPerRequest: the loop's request, its answer in
// pieces and the next request allocate nothing.
func TestLoopNoAllocationsPerRequest(t *testing.T) {
	l, c := oneLoop(t)
	// Each call: one wake-up's answer, then the next request.
	do := func() {
		before := c.answered.Load()
		for c.answered.Load() == before {
			n, err := l.wait(-1, l.armed)
			if err != nil {
				t.Fatal(err)
			}
			l.handle(n)
		}
	}
	l.request(c)
	do()
	allocs := testing.AllocsPerRun(2000, do)
	c.flush()
	assert.Zero(t, allocs)
	assert.EqualValues(t, 2002, c.answered.Load())
	assert.Zero(t, c.errs.Load())
}

// TestLoopWritesWhenWritable: the loop sends a connection's next request
// as wrk does, on the wake-up that reports the socket writable after the
// answer was read, not in the wake-up that read it; a wake-up of
// writable sockets alone is not counted as one that brought answers.
func TestLoopWritesWhenWritable(t *testing.T) {
	l, c := oneLoop(t)

	l.request(c)
	require.EqualValues(t, stWait, c.st)
	require.EqualValues(t, 1, c.sent.Load())
	for c.answered.Load() == 0 {
		n, err := l.wait(-1, l.armed)
		require.NoError(t, err)
		l.handle(n)
	}
	assert.EqualValues(t, stSend, c.st, "armed for its next request")
	assert.EqualValues(t, 1, c.sent.Load(), "nothing written in the wake-up that read the answer")
	assert.Equal(t, 1, l.active, "the loop waits for the armed connection")
	assert.True(t, l.armed, "the next wait asks before it blocks")
	wakes, ready := l.wakes, l.ready

	n, err := l.wait(-1, l.armed)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	l.handle(n)
	assert.EqualValues(t, stWait, c.st)
	assert.EqualValues(t, 2, c.sent.Load(), "written on the writable event")
	assert.Equal(t, wakes, l.wakes, "a writable event is no answer")
	assert.Equal(t, ready, l.ready)
	assert.False(t, l.armed, "after a wake-up that only wrote, the next wait blocks at once")
}

// TestLoopsLeaveNothingRunning: after a run on the loops, GOMAXPROCS is
// back where it was and no goroutine of the run is left.
func TestLoopsLeaveNothingRunning(t *testing.T) {
	ln := listenTCP(t)
	startServer(t, ln, answerEach(okResponse, nil))
	procs, before := runtime.GOMAXPROCS(0), runtime.NumGoroutine()
	res, err := Run(context.Background(), Options{Target: tcpTarget(t, ln), Connections: 8, Threads: 4, Duration: 200 * time.Millisecond})
	require.NoError(t, err)
	require.Positive(t, res.Summary.Requests)
	assert.Equal(t, procs, runtime.GOMAXPROCS(0))
	// +1: the test server's accept loop may not have started when counted.
	assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= before+1 }, 2*time.Second, 10*time.Millisecond,
		"goroutines: %d before the run, %d after", before, runtime.NumGoroutine())
	// By name too: the allowance above would hide one.
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, f := range []string{"load.keep(", "load.(*loop).run("} {
		assert.NotContains(t, stacks, f, "a goroutine still runs %s...)", f)
	}
}

// TestAssignInRuns: each loop takes a run of neighbouring connections,
// the runs differ in length by one at most, and small calls spread over
// the loops.
func TestAssignInRuns(t *testing.T) {
	newEngine := func(loops int) *engine {
		e := &engine{}
		for range loops {
			e.loops = append(e.loops, &loop{e: e})
		}
		return e
	}
	conns := func(n int) []*conn {
		cs := make([]*conn, n)
		for i := range cs {
			cs[i] = &conn{}
		}
		return cs
	}
	loopOf := func(e *engine, c *conn) int {
		for i, l := range e.loops {
			if c.loop == l {
				return i
			}
		}
		return -1
	}
	for _, tc := range []struct {
		name         string
		loops, conns int
		want         []int // loop of each connection
	}{
		{"even", 3, 6, []int{0, 0, 1, 1, 2, 2}},
		{"uneven", 3, 7, []int{0, 0, 0, 1, 1, 2, 2}},
		{"fewer connections than loops", 4, 2, []int{0, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(tc.loops)
			cs := conns(tc.conns)
			e.assign(cs)
			got := make([]int, len(cs))
			for i, c := range cs {
				got[i] = loopOf(e, c)
				assert.Same(t, c, c.loop.conns[c.idx])
			}
			assert.Equal(t, tc.want, got)
			for _, l := range e.loops {
				assert.GreaterOrEqual(t, cap(l.events), len(l.conns)+1, "room for every connection and the wake-up")
			}
		})
	}
	t.Run("one at a time", func(t *testing.T) {
		e := newEngine(3)
		var got []int
		for range 4 {
			cs := conns(1)
			e.assign(cs)
			got = append(got, loopOf(e, cs[0]))
		}
		assert.Equal(t, []int{0, 1, 2, 0}, got)
	})
}

// TestProcsLease: two engines' loops that run at once (a session's pools
// together) keep GOMAXPROCS raised for both until the last ends, and the
// process gets back what it had.
func TestProcsLease(t *testing.T) {
	base := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(base) })
	var l procsLease
	steps := []struct {
		name string
		do   func()
		want int
	}{
		{"the first takes 3", func() { l.take(3) }, base + 3},
		{"the second takes 5", func() { l.take(5) }, base + 8},
		{"the first ends: the second's loops keep theirs", func() { l.give(3) }, base + 5},
		{"the last ends", func() { l.give(5) }, base},
	}
	for _, s := range steps {
		s.do()
		assert.Equal(t, s.want, runtime.GOMAXPROCS(0), s.name)
	}
}

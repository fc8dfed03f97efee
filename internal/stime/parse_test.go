package stime

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseFile(t *testing.T, name string) (Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	return Parse(f)
}

// TestParse reads each real capture in testdata (see testdata/README.md).
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Result
	}{
		{"p256-tls13.txt", Result{Procs: 1, Connections: 1425, Elapsed: 3 * time.Second, ConnPerSec: 475,
			RealSeconds: 3, UserSeconds: 0.94, BytesRead: 183825, BytesPerConn: 129}},
		{"rsa2048-tls12.txt", Result{Procs: 1, Connections: 716, Elapsed: 2 * time.Second, ConnPerSec: 358,
			RealSeconds: 2, UserSeconds: 0.48, BytesRead: 92364, BytesPerConn: 129}},
		// A 400 is an answer to s_time: its bytes, no status.
		{"p256-400.txt", Result{Procs: 1, Connections: 1700, Elapsed: 2 * time.Second, ConnPerSec: 850,
			RealSeconds: 2, UserSeconds: 0.93, BytesRead: 329800, BytesPerConn: 194}},
		{"p256-two-procs.txt", Result{Procs: 2, Connections: 943 + 909, Elapsed: 2 * time.Second, ConnPerSec: (943 + 909) / 2.0,
			RealSeconds: 2, UserSeconds: 0.48 + 0.47, BytesRead: 121647 + 117261, BytesPerConn: (121647 + 117261) / (943 + 909)}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			r, err := parseFile(t, tc.file)
			require.NoError(t, err)
			assert.InDelta(t, tc.want.UserSeconds, r.UserSeconds, 1e-9)
			assert.InDelta(t, tc.want.ConnPerSec, r.ConnPerSec, 1e-9)
			r.UserSeconds, r.ConnPerSec = tc.want.UserSeconds, tc.want.ConnPerSec
			assert.Equal(t, tc.want, r)

			f := r.Figures()
			assert.Equal(t, tc.want.Connections, f.Requests)
			assert.Equal(t, tc.want.Connections, f.Handshakes)
			assert.Equal(t, r.ConnPerSec, f.ReqPerSec)
			assert.Equal(t, r.ConnPerSec, f.HandshakesPerSec)
			assert.Zero(t, f.Errors.Total())
			assert.False(t, f.Latency, "s_time times no request")
		})
	}
}

// TestParseFailed: s_time stops at a failed connection with its header
// alone on stdout (the reason on stderr); that is an error, not zeros.
func TestParseFailed(t *testing.T) {
	for _, file := range []string{"refused.txt", "tls13-to-tls12-server.txt"} {
		t.Run(file, func(t *testing.T) {
			_, err := parseFile(t, file)
			require.Error(t, err)
			assert.Contains(t, err.Error(), `s_time report 1 of 1: no "connections/user sec" line (s_time stops at its first failed connection; see its stderr)`)
		})
	}
}

// TestParseBad: what is not s_time's output, is cut short, or disagrees
// with itself is an error naming what is wrong.
func TestParseBad(t *testing.T) {
	whole, err := os.ReadFile(filepath.Join("testdata", "rsa2048-tls12.txt"))
	require.NoError(t, err)
	two, err := os.ReadFile(filepath.Join("testdata", "p256-two-procs.txt"))
	require.NoError(t, err)
	in := string(whole)
	for _, tc := range []struct {
		name, in, want string
		noAnswer       bool
	}{
		{"empty", "", `no "Collecting connection statistics" line`, false},
		{"usage", "s_time: Unknown option: -x\ns_time: Use -help for summary.\n", `no "Collecting connection statistics" line`, false},
		{"no real line", strings.Replace(in, "real seconds", "wall seconds", 1), `no "real seconds" line`, false},
		{"counts disagree", strings.Replace(in, "716 connections in 2", "715 connections in 2", 1), "716 connections in one summary line, 715 in the other", false},
		{"marks cut short", strings.Replace(in, "****\n", "\n", 1), "712 connections marked, 716 summed", false},
		{"a bad number", strings.Replace(in, "0.48s", "0.4.8s", 1), `s_time line "716 connections in 0.4.8s`, false},
		{"the second process cut short", string(two[:len(two)-80]), "s_time report 2 of 2: ", false},
		{"nothing read", strings.Replace(strings.Replace(in, "bytes read 92364", "bytes read 0", 1), ", 129 bytes", ", 0 bytes", 1),
			"s_time got no answer: 716 connections, not a byte read", true},
		{"no connection", "Collecting connection statistics for 1 seconds\n\n\n0 connections in 0.00s; 0.00 connections/user sec, bytes read 0\n0 connections in 2 real seconds, 0 bytes read per connection\n",
			"s_time got no answer: no connection made", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.noAnswer, errors.Is(err, ErrNoAnswer))
		})
	}
}

// TestTimed: the marks' spans replace s_time's whole seconds; a process
// without two marks leaves them.
func TestTimed(t *testing.T) {
	at := time.Unix(1000, 0)
	mark := func(n int64, span time.Duration) Marks {
		return Marks{line: 2, n: n, first: at, last: at.Add(span)}
	}
	r := Result{Procs: 2, Connections: 402, Elapsed: 3 * time.Second, ConnPerSec: 134}
	got := r.Timed([]Marks{mark(201, 2*time.Second), mark(201, 2500*time.Millisecond)})
	assert.Equal(t, 2500*time.Millisecond, got.Elapsed)
	assert.InDelta(t, 100+80, got.ConnPerSec, 1e-9)
	assert.Equal(t, r, r.Timed([]Marks{mark(201, 2*time.Second), mark(1, 0)}))
	assert.Equal(t, r, r.Timed(nil))

	var m Marks
	for _, w := range []string{"Collecting connection statistics for 1 seconds\n**", "*r", "*\n\n3 connections in 0.01s; 1 connections/user sec, bytes read 3\n"} {
		_, err := m.Write([]byte(w))
		require.NoError(t, err)
	}
	_, n := m.Span()
	assert.Equal(t, int64(4), n, "five marks, the words of the summary not among them")
}

// TestParseRuns reads the captures TestRun writes with -capture.
func TestParseRuns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "run-*.txt"))
	require.NoError(t, err)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r, err := parseFile(t, filepath.Base(f))
			require.NoError(t, err)
			assert.Positive(t, r.Connections)
			assert.Equal(t, int64(129), r.BytesPerConn, "cmd/hello's answer to GET / over HTTP/1.0")
		})
	}
}

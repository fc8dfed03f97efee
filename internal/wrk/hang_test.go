package wrk

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHangErrorMessage(t *testing.T) {
	tests := []struct {
		name string
		err  HangError
		want string
	}{
		{"starved", HangError{URL: "http://127.0.0.1:8085/", Limit: 17 * time.Second, Started: true, Threads: map[string]int{"R": 70, "S": 1}},
			"wrk against http://127.0.0.1:8085/ did not finish within 17s of starting its clock: stopped as hung; 70 of 71 threads runnable: short of CPU, not blocked (state in the raw output)"},
		{"blocked", HangError{URL: "http://127.0.0.1:8085/", Limit: 17 * time.Second, Started: true, Threads: map[string]int{"S": 100, "D": 1}},
			"wrk against http://127.0.0.1:8085/ did not finish within 17s of starting its clock: stopped as hung; 101 of 101 threads waiting (state in the raw output)"},
		{"never started", HangError{URL: "http://127.0.0.1:8085/", Limit: 77 * time.Second},
			"wrk against http://127.0.0.1:8085/ did not start its clock within 1m17s: stopped as hung (state in the raw output)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &tt.err
			assert.Equal(t, tt.want, err.Error())
			assert.ErrorIs(t, err, ErrHung)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotErrorIs(t, err, context.Canceled)
		})
	}
}

// TestHeaderWatch feeds wrk's header in pieces, as a pipe delivers it.
func TestHeaderWatch(t *testing.T) {
	h := &headerWatch{seen: make(chan struct{})}
	for _, chunk := range []string{"Running 5s test @ http://127.0.0.1:8085/\n  100 thr", "eads and 500 conn", "ections"} {
		_, err := h.Write([]byte(chunk))
		require.NoError(t, err)
	}
	assert.False(t, h.started(), "not until the line ends")
	_, err := h.Write([]byte("\n  Thread Stats   Avg\n"))
	require.NoError(t, err)
	assert.True(t, h.started())
	select {
	case <-h.seen:
	default:
		t.Fatal("seen not closed")
	}
	_, err = h.Write([]byte("  100 threads and 500 connections\n"))
	require.NoError(t, err, "a second match is harmless")

	h = &headerWatch{seen: make(chan struct{})}
	_, err = h.Write([]byte("Running\u00a05s test\n  100 threads and 500\n"))
	require.NoError(t, err)
	assert.False(t, h.started())
}

func TestProcAddrAndSyscall(t *testing.T) {
	assert.Equal(t, "127.0.0.1:8080", hexAddr("0100007F:1F90"))
	assert.Equal(t, "[00000000000000000000000001000000]:443", hexAddr("00000000000000000000000001000000:01BB"))
	assert.Equal(t, "junk", hexAddr("junk"))
	assert.Equal(t, "running", syscallName("running"))
	assert.Contains(t, syscallName("232 0x3 0x56168b1198b8 0x16"), "232")
}

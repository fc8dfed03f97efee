package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/load"
)

func TestLoadCommandBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"load"}, "no URL given"},
		{[]string{"load", "http://10.1.2.3:80/"}, "not a loopback address"},
		{[]string{"load", "http://example.com/"}, "not a loopback address"},
		{[]string{"load", "http://127.0.0.1:1/", "http://127.0.0.1:2/"}, `unexpected argument "http://127.0.0.1:2/"`},
		{[]string{"load", "-arrivals", "bursty", "-rate", "10", "http://127.0.0.1:1/"}, "-arrivals"},
		{[]string{"load", "-connections", "0", "http://127.0.0.1:1/"}, "-connections must be positive"},
		{[]string{"load", "-timeout", "2m", "http://127.0.0.1:1/"}, "-timeout"},
		{[]string{"load", "-wait", "61s", "http://127.0.0.1:1/"}, "-wait"},
		{[]string{"load", "-rate", "10", "-connections", "20", "-max-connections", "5", "http://127.0.0.1:1/"}, "-max-connections 5"},
		{[]string{"load", "-procs", "0", "http://127.0.0.1:1/"}, "-procs"},
		{[]string{"load", "-nosuchflag", "http://127.0.0.1:1/"}, "nosuchflag"},
		{[]string{"load", "-probe", "10", "http://127.0.0.1:1/"}, "-probe needs -wait"},
		{[]string{"load", "-probe", "10", "-wait", "1s", "-rate", "5", "http://127.0.0.1:1/"}, "do not apply"},
		{[]string{"load", "-probe", "100000000", "-wait", "1s", "http://127.0.0.1:1/"}, "open-files limit"},
		{[]string{"load", "-probe", "10", "-wait", "1s", "-within", "10ms", "http://127.0.0.1:1/"}, "-within 10ms is below -wait"},
		{[]string{"load", "-within", "1s", "http://127.0.0.1:1/"}, "-within applies to -probe only"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 2, exitCode(err))
		})
	}
}

func TestLoadCommandJSONAndFiles(t *testing.T) {
	srv := httptest.NewServer(hello.NewHandler())
	defer srv.Close()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	// Flags after the URL work too.
	err := run(context.Background(), []string{"load", srv.URL + "/", "-rate", "200", "-requests", "40", "-wait", "10ms", "-json", "-out", dir}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	var s load.Summary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), stdout.String())
	assert.Equal(t, "open", s.Mode)
	assert.EqualValues(t, 40, s.Requests)
	assert.Contains(t, s.Target, "?wait=10ms")
	assert.GreaterOrEqual(t, s.Latency.P50, 10.0)
	assert.Zero(t, s.Errors.Total())

	h, err := load.ReadFile(filepath.Join(dir, "latency"+load.EncodedExt))
	require.NoError(t, err)
	assert.EqualValues(t, 40, h.TotalCount())
	f, err := os.Open(filepath.Join(dir, "latency"+load.PercentilesExt))
	require.NoError(t, err)
	defer f.Close()
	rows, err := load.ReadPercentiles(f)
	require.NoError(t, err)
	assert.EqualValues(t, 40, rows[len(rows)-1].TotalCount)
	_, err = os.Stat(filepath.Join(dir, "summary.json"))
	assert.NoError(t, err)
}

// TestLoadCommandInterrupted: Ctrl-C keeps what was measured, prints it and
// exits non-zero; a progress line came on stderr meanwhile.
func TestLoadCommandInterrupted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"load", "-connections", "2", "-duration", "1m", srv.URL + "/"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "interrupted")
	assert.Contains(t, stdout.String(), "requests in")
	assert.Contains(t, stdout.String(), "interrupted")
	assert.Contains(t, stderr.String(), "answered")
}

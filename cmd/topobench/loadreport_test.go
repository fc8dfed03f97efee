package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hello"
	"github.com/topobench/topobench/internal/load"
)

// TestLoadCommandStartAtReport: what a cluster job runs. -start-at holds
// the measured run until that instant; -report prints what
// load.ReadReport reads back, histogram included.
func TestLoadCommandStartAtReport(t *testing.T) {
	srv := httptest.NewServer(hello.NewHandler())
	defer srv.Close()
	at := time.Now().Add(300 * time.Millisecond).UTC()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"load", "-quiet", "-report", "-start-at", at.Format(time.RFC3339Nano),
		"-rate", "200", "-seed", "7", "-duration", "200ms", srv.URL + "/"}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	res, err := load.ReadReport(&stdout)
	require.NoError(t, err)
	assert.True(t, res.Summary.StartAt.Equal(at))
	assert.GreaterOrEqual(t, res.Summary.StartSkewMs, 0.0)
	assert.EqualValues(t, 7, res.Summary.Seed)
	assert.Equal(t, res.Summary.Requests, res.Histogram.TotalCount())
	assert.Positive(t, res.Summary.Requests)
}

func TestLoadCommandStartAtBad(t *testing.T) {
	for _, args := range [][]string{
		{"load", "-start-at", "tomorrow", "http://127.0.0.1:1/"},
		{"load", "-start-at", "2026-11-24T19:00:00Z", "-probe", "3", "-wait", "1s", "http://127.0.0.1:1/"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, &stdout, &stderr)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-start-at")
		assert.Equal(t, 2, exitCode(err))
	}
}

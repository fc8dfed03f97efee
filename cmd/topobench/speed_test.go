package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/speed"
)

// TestSpeedCommand: bad flags are one line naming the flag and exit 2;
// run for real, it prints lines speed.Parse reads until it is stopped.
func TestSpeedCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-period", "0s"}, "-period"},
		{[]string{"-spin", "2s"}, "-spin"},
		{[]string{"-priority", "100"}, "-priority 100"},
		{[]string{"now"}, `unexpected argument "now"`},
	} {
		t.Run(tt.want, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"speed"}, tt.args...), &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, 2, exitCode(err))
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
	t.Run("for real", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: spins the CPU")
		}
		if os.Geteuid() != 0 {
			t.Skip("real-time priority needs root")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		defer cancel()
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(ctx, []string{"speed", "-period", "50ms"}, &stdout, &stderr), stderr.String())
		got, err := speed.Parse(&stdout)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, len(got), 5, "a spin every 50 ms for 400 ms")
	})
}

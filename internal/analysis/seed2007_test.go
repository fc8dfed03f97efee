package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeed2007(t *testing.T) {
	source, rows, err := Seed2007()
	require.NoError(t, err)
	require.Len(t, source, 1)
	assert.Contains(t, source[0], "ab -n 50000 -c 1000")
	require.Len(t, rows, 3)
	assert.Equal(t, Seed2007Row{Server: "java-fixed-pool-5-threads", Target: "java-pool", ReqPerSec: 968.09,
		MeanPerRequest: time.Duration(1032.963 * float64(time.Millisecond))}, rows[1])
}

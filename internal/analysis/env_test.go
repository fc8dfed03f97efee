package analysis

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	assert.Equal(t, 2.0, median([]float64{3, 1, 2}))
	assert.Equal(t, 2.5, median([]float64{4, 1, 3, 2}))
}

func TestPinning(t *testing.T) {
	assert.True(t, strings.HasPrefix(pinning("0", ""), "wrk on CPUs 0; nginx and Go on unpinned"))
	assert.Equal(t, "none: wrk, nginx and Go share every CPU", pinning("", ""))
}

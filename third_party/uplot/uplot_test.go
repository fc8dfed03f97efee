package uplot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The embedded files are the ones SHA256SUMS pins, and the script names
// the version in VERSION.
func TestEmbeddedMatchSums(t *testing.T) {
	files := map[string]string{"uPlot.iife.min.js": JS(), "uPlot.min.css": CSS(), "LICENSE": License()}
	lines := strings.Split(strings.TrimSpace(Sums()), "\n")
	require.Len(t, lines, len(files))
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		require.True(t, ok, "SHA256SUMS line %q", l)
		body, known := files[name]
		require.True(t, known, "SHA256SUMS names %s", name)
		got := sha256.Sum256([]byte(body))
		assert.Equal(t, sum, hex.EncodeToString(got[:]), name)
	}
	assert.Regexp(t, `^\d+\.\d+\.\d+$`, Version())
	assert.True(t, strings.HasPrefix(JS(), "/*! https://github.com/leeoniya/uPlot (v"+Version()+") */"), "uPlot.iife.min.js is not version %s", Version())
	assert.Contains(t, License(), "MIT License")
}

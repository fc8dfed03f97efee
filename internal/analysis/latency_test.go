package analysis

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReferenceCSVs parses the embedded 2016 and 2009 references.
func TestReferenceCSVs(t *testing.T) {
	src, recs := referenceCSV(seed2016, 13, "server")
	assert.Len(t, src, 3)
	assert.Len(t, recs, 21)
	src, recs = referenceCSV(seed2009, 4, "server")
	assert.Len(t, src, 2)
	assert.Len(t, recs, 32)
}

package wrk_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// TestLegacyRecord reads records written before the record held Figures,
// when it held this generator's own report ("result"), and checks that
// the record's reader gives the figures this package's conversion gives
// for that report.
func TestLegacyRecord(t *testing.T) {
	paths, err := filepath.Glob("testdata/legacy/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			var run results.Run
			require.NoError(t, json.Unmarshal(b, &run))
			require.NotNil(t, run.Figures)
			var old struct {
				Report *wrk.Result `json:"result"`
			}
			require.NoError(t, json.Unmarshal(b, &old))
			require.NotNil(t, old.Report)
			assert.Equal(t, old.Report.Figures(), *run.Figures)
		})
	}
}

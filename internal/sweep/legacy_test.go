package sweep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/wrk"
)

// TestLegacyRecords reads records written before the record held Figures,
// when it held the generator's own report (wrk's "result", the engine's
// "engine"), and checks that the record's reader gives the figures the
// generator's own conversion gives for that report: old sweeps report as
// they did.
func TestLegacyRecords(t *testing.T) {
	paths, err := filepath.Glob("../results/testdata/legacy/*.json")
	require.NoError(t, err)
	require.Len(t, paths, 3)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			var run results.Run
			require.NoError(t, json.Unmarshal(b, &run))
			require.NotNil(t, run.Figures)
			var old struct {
				Result *wrk.Result   `json:"result"`
				Engine *load.Summary `json:"engine"`
			}
			require.NoError(t, json.Unmarshal(b, &old))
			switch {
			case old.Result != nil:
				assert.Equal(t, old.Result.Figures(), *run.Figures)
			case old.Engine != nil:
				assert.Equal(t, old.Engine.Figures(), *run.Figures)
			default:
				t.Fatal("the record holds neither generator's report")
			}
		})
	}
}

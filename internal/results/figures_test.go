package results_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestLegacyRecords reads records written before Figures existed
// (testdata/legacy: a wrk run, an engine run in open loop and a probe, as
// the sweep wrote them): their reports become figures and their wrk_args
// the command. That the figures are the ones each generator's own
// conversion gives is tested in the generators' packages.
func TestLegacyRecords(t *testing.T) {
	paths, err := filepath.Glob("testdata/legacy/*.json")
	require.NoError(t, err)
	require.Len(t, paths, 3)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			var run results.Run
			require.NoError(t, json.Unmarshal(b, &run))
			require.NotNil(t, run.Figures, "an old record's report becomes its figures")
			assert.False(t, run.Failed())
			assert.NotEmpty(t, run.Command, "wrk_args becomes the command")

			var old struct {
				Args   []string                   `json:"wrk_args"`
				Report map[string]json.RawMessage `json:"result"`
				Engine map[string]json.RawMessage `json:"engine"`
			}
			require.NoError(t, json.Unmarshal(b, &old))
			assert.Equal(t, old.Args, run.Command)
			report := old.Report
			if report == nil {
				report = old.Engine
				assert.True(t, run.Figures.Histogram, "the engine kept a histogram")
			} else {
				assert.NotZero(t, run.Figures.P999, "wrk's script percentiles are kept")
			}
			var requests int64
			require.NoError(t, json.Unmarshal(report["requests"], &requests))
			assert.Equal(t, requests, run.Figures.Requests)
			assert.True(t, run.Figures.Latency)
		})
	}
}

// TestNewRecordRoundTrip writes a record in today's form and reads it back
// unchanged, strictly.
func TestNewRecordRoundTrip(t *testing.T) {
	run := results.Run{Cell: results.Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}, Command: []string{"wrk", "-c1"},
		Figures: &results.Figures{Requests: 9, ReqPerSec: 3, Errors: results.Errors{Status: 1}, Latency: true, P50: 5, P99: 7, Max: 8}}
	b, err := json.Marshal(run)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "wrk_args")
	var got results.Run
	require.NoError(t, json.Unmarshal(b, &got))
	assert.Equal(t, run, got)

	var bad results.Run
	assert.Error(t, json.Unmarshal([]byte(`{"topology":"standalone","gomaxprocs":1,"rep":1,"surprise":1}`), &bad), "unknown fields are refused")
}

func TestFailed(t *testing.T) {
	cell := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}
	assert.True(t, results.Run{Cell: cell}.Failed(), "no figures")
	assert.True(t, results.Run{Cell: cell, Figures: &results.Figures{}, Error: "boom"}.Failed(), "figures and an error")
	assert.False(t, results.Run{Cell: cell, Figures: &results.Figures{}}.Failed())
}

func TestErrors(t *testing.T) {
	e := results.Errors{Connect: 1, Read: 2, Write: 3, Timeout: 4, Status: 5}
	assert.Equal(t, int64(10), e.Socket())
	assert.Equal(t, int64(15), e.Total())
	assert.Equal(t, results.Errors{2, 4, 6, 8, 10}, e.Add(e))
}

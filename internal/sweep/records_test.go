package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

// TestRecordKeepsWhatLoadReads: the records in memory are the directory's,
// in Load's order, a run measured again replacing its failed record; a
// resumed sweep measures again only the failed cells.
func TestRecordKeepsWhatLoadReads(t *testing.T) {
	p := smallPlan("standalone", "nginx-http")
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Plan: p.Plan}))
	s := &sweep{Options: Options{Dir: dir}, plan: p, done: map[string]bool{}}
	cells := p.Cells()
	for i := len(cells) - 1; i >= 0; i-- {
		run := results.Run{Cell: cells[i], Figures: &results.Figures{ReqPerSec: 100, Requests: 100}}
		if i == 1 {
			run.Figures, run.Error = nil, "refused"
		}
		require.NoError(t, s.record(run, nil))
	}
	require.NoError(t, s.record(results.Run{Cell: cells[1], Figures: &results.Figures{ReqPerSec: 7, Requests: 7}}, nil))

	_, onDisk, err := results.Load(dir)
	require.NoError(t, err)
	require.Len(t, s.runs, len(cells), "one record a run")
	for i := range onDisk {
		assert.Equal(t, onDisk[i].Name(), s.runs[i].Name(), "Load's order")
		assert.Equal(t, onDisk[i].Failed(), s.runs[i].Failed(), onDisk[i].Name())
	}

	r := &sweep{done: map[string]bool{}}
	onDisk[0].Figures, onDisk[0].Error = nil, "refused"
	r.resumeFrom(onDisk)
	assert.Len(t, r.done, len(cells)-1, "the failed cell is measured again")
	assert.False(t, r.done[onDisk[0].Key()])
	assert.Equal(t, onDisk, r.runs)
}

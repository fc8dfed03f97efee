package sweep

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
)

// TestWarningsAreKept: a warning is printed and kept in env.json, those
// raised before the directory existed too, each once.
func TestWarningsAreKept(t *testing.T) {
	var log bytes.Buffer
	s := &sweep{Options: Options{Log: &log}}
	s.warn("copying network settings into namespace %s: %s", "tb-1-0-srv", "sysctl not found in PATH")
	s.Dir = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(s.Dir, results.RunsDir), 0o755))
	s.warn("stopping nginx: exit status 1\n    [alert] worker process exited")
	require.NoError(t, s.writeEnv())
	require.NoError(t, s.writeEnv())
	env, _, err := results.Load(s.Dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"copying network settings into namespace tb-1-0-srv: sysctl not found in PATH",
		"stopping nginx: exit status 1\n    [alert] worker process exited"}, env.Warnings)
	assert.Equal(t, "warning: copying network settings into namespace tb-1-0-srv: sysctl not found in PATH\n"+
		"warning: stopping nginx: exit status 1\n    [alert] worker process exited\n", log.String())
}

// TestWarnGOMAXPROCS: a value above the servers' CPUs is warned of and
// kept; in a duet the warning says to expect timeouts when the other
// side shares the CPUs.
func TestWarnGOMAXPROCS(t *testing.T) {
	for _, tc := range []struct {
		name   string
		paired *results.Paired
		want   []string
	}{
		{"rounds", nil, []string{"GOMAXPROCS=8 exceeds the 1 CPU the servers have (CPU list 1); expect scheduler contention, not parallelism"}},
		{"paired", &results.Paired{}, []string{"GOMAXPROCS=8 exceeds the 1 CPU the servers have (CPU list 1); expect scheduler contention, not parallelism"}},
		{"duet", &results.Paired{Duet: true}, []string{"GOMAXPROCS=8 exceeds the 1 CPU the servers have (CPU list 1); expect scheduler contention, not parallelism; " +
			"in a duet each side's Go shares them with the other side's load, and some of its requests wait seconds for an answer: expect timeouts on that side (-design paired gives each window all of them)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			s := &sweep{Options: Options{Log: &log}}
			s.plan.GOMAXPROCS = []int{1, 8}
			s.plan.Paired = tc.paired
			s.res.ServerCPUs = cpuset.Of(1)
			s.warnGOMAXPROCS(cpuset.Of(0, 1))
			assert.Equal(t, tc.want, s.warnings)
			assert.Equal(t, "warning: "+tc.want[0]+"\n", log.String())
		})
	}
}

// TestResumeKeepsWarnings: a resumed sweep's env.json keeps the warnings
// of the part before it, then its own, a warning raised again included
// (each part's are its record).
func TestResumeKeepsWarnings(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, results.Create(dir))
	require.NoError(t, results.WriteEnv(dir, results.Env{Warnings: []string{"GOMAXPROCS=8 exceeds the 1 CPU here", "stopping nginx: exit status 1"}}))
	var log bytes.Buffer
	s := &sweep{Options: Options{Log: &log, Dir: dir, Resume: true}}
	require.NoError(t, s.resumeDir())
	s.warn("GOMAXPROCS=8 exceeds the 1 CPU here")
	require.NoError(t, s.writeEnv())
	env, _, err := results.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"GOMAXPROCS=8 exceeds the 1 CPU here", "stopping nginx: exit status 1", "GOMAXPROCS=8 exceeds the 1 CPU here"}, env.Warnings)
	assert.Equal(t, "warning: GOMAXPROCS=8 exceeds the 1 CPU here\n", log.String(), "only the new one printed")
}

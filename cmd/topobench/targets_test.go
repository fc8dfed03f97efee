package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
)

func needTargets(t *testing.T, names ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the Erlang and Java targets; skipped under -short")
	}
	for _, n := range names {
		tg, err := target.Lookup(n)
		require.NoError(t, err)
		if err := tg.Check(); err != nil {
			t.Skipf("%v (make tools installs it)", err)
		}
	}
}

// TestCompareTargets runs a sweep of two targets other than Go through
// nginx and standalone, isolated and on the harness's loopback, and checks
// that each target was built, started with the block's processor value,
// passed parity and was measured, its CPU time counted as the server's.
func TestCompareTargets(t *testing.T) {
	needTargets(t, "erlang", "java-threads")
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"netns", []string{"-isolate", "netns", "-cpus", "auto"}},
		{"none", []string{"-isolate", "none", "-cpus", "none", "-free-ports"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "netns" {
				testenv.NeedNetns(t)
			}
			dir := filepath.Join(testenv.ShortDir(t), "r") // compare creates it
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"compare", "-preset", "2013",
				"-targets", "erlang,java-threads", "-topologies", "standalone,nginx-http",
				"-gomaxprocs", "1", "-duration", "1s", "-reps", "1", "-warmup", "0s",
				"-connections", "20", "-out", dir}, tc.args...), &stdout, &stderr)
			require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			out := stdout.String()
			for _, name := range []string{"erlang", "java-threads"} {
				assert.Contains(t, out, name+" GOMAXPROCS=1: "+name+" pid ")
				assert.FileExists(t, filepath.Join(dir, "logs", name+"-g1.log"))
			}
			assert.Equal(t, 2, strings.Count(out, "parity: 2 topologies answer identically"), out)
			assert.NotContains(t, out, "cmd/hello", "no block of this plan runs cmd/hello")
			assert.NoFileExists(t, filepath.Join(dir, "bin", "hello"))

			env, runs, err := results.Load(dir)
			require.NoError(t, err)
			assert.Contains(t, env.Targets["erlang"], "+S 1")
			assert.Contains(t, env.Targets["java-threads"], "-XX:ActiveProcessorCount=1")
			assert.Contains(t, env.Targets["java-threads"], "-Xmx"+target.JVMHeap)
			require.Len(t, runs, 4)
			seen := map[string]int{}
			for _, r := range runs {
				name := r.Name()
				require.False(t, r.Failed(), "%s: %s", name, r.Error)
				seen[r.Target]++
				assert.Positive(t, r.Figures.Requests, name)
				require.NotNil(t, r.CPU, name)
				assert.Positive(t, r.CPU.Server.Total(), "%s: the target's CPU is the server's", name)
			}
			assert.Equal(t, map[string]int{"erlang": 2, "java-threads": 2}, seen)

			md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
			require.NoError(t, err)
			assert.Contains(t, string(md), "| target erlang | gen_tcp")
			assert.Contains(t, string(md), "standalone java-threads serves")
			assert.Empty(t, leftovers(t, dir))
			assert.Empty(t, namespacesOf(t, os.Getpid()), "the run's namespaces must be gone")
		})
	}
}

// TestCompareMissingToolchain: a target whose compiler is not installed is
// refused before anything starts, with one line naming the Debian package.
func TestCompareMissingToolchain(t *testing.T) {
	if testing.Short() {
		t.Skip("changes PATH for the whole process")
	}
	if _, err := exec.LookPath("erlc"); err != nil {
		t.Skip("erlc is missing already")
	}
	t.Setenv("PATH", t.TempDir()) // nothing in it: no erlc, no java
	dir := filepath.Join(testenv.ShortDir(t), "r")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-preset", "2013", "-targets", "go,erlang", "-out", dir}, &stdout, &stderr)
	require.Error(t, err)
	assert.Equal(t, 2, exitCode(err))
	msg := err.Error()
	assert.NotContains(t, msg, "\n", "one line")
	assert.Contains(t, msg, "-targets: target erlang needs erlc: install the Debian package erlang-base")
	assert.NoDirExists(t, dir)
}

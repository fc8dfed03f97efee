package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPreflightCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"preflight", "-connections", "100"}, &stdout, &stderr)
	require.NoError(t, err, "-c 100 fits any machine the tests run on: %s", stdout.String())
	out := stdout.String()
	assert.Contains(t, out, "WHAT IT MEANS FOR -c 100")
	for _, want := range []string{"open files (hard)", "net.core.somaxconn", "net.ipv4.tcp_tw_reuse", "cores", "nginx", "wrk"} {
		assert.Contains(t, out, "\n"+want+" ")
	}
	assert.NotContains(t, out, "tcp_tw_recycle")
}

func TestPreflightCommandFailsWhenTheRunCannotWork(t *testing.T) {
	var stdout, stderr bytes.Buffer
	// No machine here allows one process 2 x 10^9 descriptors.
	err := run(context.Background(), []string{"preflight", "-connections", "1000000000"}, &stdout, &stderr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a run at -c 1000000000 cannot work: ")
	assert.Contains(t, err.Error(), "open files (hard): an nginx worker may need ~2000000064")
	assert.Equal(t, 1, exitCode(err))
	assert.Contains(t, stdout.String(), "FATAL", "the table is printed anyway")
}

// TestPreflightCommandIsolation: a host somaxconn below nginx's backlog stops
// a loopback run, and not one in namespaces, which get the backlog (the CI
// machine's 4096 against -c 5000 failed .ci/run's preflight step).
func TestPreflightCommandIsolation(t *testing.T) {
	tree := t.TempDir()
	require.NoError(t, os.CopyFS(tree, os.DirFS("../../internal/preflight/testdata/procsys")))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "net/core/somaxconn"), []byte("4096\n"), 0o644))
	for _, tc := range []struct {
		isolate string
		fatal   bool
	}{{"none", true}, {"netns", false}} {
		t.Run(tc.isolate, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"preflight", "-procsys", tree, "-connections", "5000", "-isolate", tc.isolate}, &stdout, &stderr)
			if tc.fatal {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "net.core.somaxconn: 4096 caps nginx's listen backlog of 5000")
				return
			}
			require.NoError(t, err, stdout.String())
			assert.Contains(t, stdout.String(), "the run's network namespaces get 5000")
		})
	}
}

func TestPreflightCommandBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"preflight", "-isolate", "vm"},
		{"preflight", "-connections", "0"},
		{"preflight", "-connections", "x"},
		{"preflight", "now"},
	} {
		err := run(context.Background(), args, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, args)
		assert.Equal(t, 2, exitCode(err), args)
	}
}

// TestPreflightApply writes into a copy of a captured /proc/sys, never the
// machine's own.
func TestPreflightApply(t *testing.T) {
	tree := t.TempDir()
	require.NoError(t, os.CopyFS(tree, os.DirFS("../../internal/preflight/testdata/procsys")))
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"preflight", "-apply", "-procsys", tree, "-connections", "100"}, &stdout, &stderr)
	require.NoError(t, err, stderr.String())
	out := stdout.String()
	assert.Contains(t, out, "apply: wrote net.core.somaxconn = 65535\n")
	assert.Contains(t, out, "apply: wrote net.ipv4.ip_local_port_range = 1025 65535\n")
	assert.NotContains(t, out, "apply: wrote fs.file-max", "already above what is wanted")
	b, err := os.ReadFile(filepath.Join(tree, "net/core/somaxconn"))
	require.NoError(t, err)
	assert.Equal(t, "65535\n", string(b))
	// The table after applying shows no sysctl short.
	for _, line := range strings.Split(out, "\n") {
		// Columns are separated by two or more spaces.
		if cols := regexp.MustCompile(`\s{2,}`).Split(line, 5); len(cols) == 5 && strings.Contains(cols[0], ".") {
			assert.NotEqual(t, "short", cols[3], line)
		}
	}

	// A setting the kernel lacks is reported as refused.
	require.NoError(t, os.Remove(filepath.Join(tree, "vm/overcommit_memory")))
	require.NoError(t, os.WriteFile(filepath.Join(tree, "net/core/somaxconn"), []byte("128\n"), 0o644))
	stdout.Reset()
	stderr.Reset()
	err = run(context.Background(), []string{"preflight", "-apply", "-procsys", tree, "-connections", "100"}, &stdout, &stderr)
	require.NoError(t, err)
	assert.Contains(t, stdout.String(), "apply: wrote net.core.somaxconn = 65535\n")
	assert.Regexp(t, `\nvm\.overcommit_memory +1 +no such setting +absent `, stdout.String())
}

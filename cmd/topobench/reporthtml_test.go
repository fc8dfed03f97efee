package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixtureSweep is the report package's fake results directory.
const fixtureSweep = "../../internal/analysis/analysistest/testdata/sweep"

func TestReportHTML(t *testing.T) {
	dir := t.TempDir()
	t.Run("one sweep", func(t *testing.T) {
		out := filepath.Join(dir, "one.html")
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"report", "-html", out, fixtureSweep}, &stdout, &stderr))
		assert.Equal(t, out+"\n", stdout.String())
		page, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(page), "<h1>topobench report</h1>")
		assert.NotContains(t, string(page), "Changes against the baseline")
	})
	t.Run("comparison", func(t *testing.T) {
		out := filepath.Join(dir, "two.html")
		var stdout, stderr bytes.Buffer
		require.NoError(t, run(context.Background(), []string{"report", "-html", out, fixtureSweep, fixtureSweep}, &stdout, &stderr))
		page, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(page), "<h1>topobench comparison</h1>")
		assert.Contains(t, string(page), "Changes against the baseline")
	})
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"no directory", []string{"report", "-html", filepath.Join(dir, "x.html")}, 2, "no results directory given"},
		{"no output", []string{"report", "-html", "", fixtureSweep}, 2, "-html needs an output file"},
		{"missing directory", []string{"report", "-html", filepath.Join(dir, "x.html"), filepath.Join(dir, "nope")}, 1, filepath.Join(dir, "nope")},
		{"unwritable output", []string{"report", "-html", filepath.Join(dir, "no", "such", "x.html"), fixtureSweep}, 1, "-html " + filepath.Join(dir, "no", "such", "x.html")},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), c.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Equal(t, c.code, exitCode(err))
			assert.Contains(t, err.Error(), c.msg)
			assert.NoFileExists(t, filepath.Join(dir, "x.html"))
		})
	}
}

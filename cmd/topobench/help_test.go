package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the commands' help")

// compareHelpText is what compare -h prints; -h is not an error.
func compareHelpText(t *testing.T) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"compare", "-h"}, &stdout, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, 0, exitCode(err))
	return stderr.String()
}

// TestCompareHelpGolden: compare -h prints its flags under the headings
// of compareHelp, with the defaults of the default plan, as
// testdata/compare-help.golden holds them (-update rewrites it).
func TestCompareHelpGolden(t *testing.T) {
	got := compareHelpText(t)
	golden := filepath.Join("testdata", "compare-help.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "compare -h changed; go test ./cmd/topobench -run TestCompareHelpGolden -update rewrites %s", golden)
}

var helpFlagRE = regexp.MustCompile(`(?m)^  -([\w-]+)`)

// TestCompareHelpGroups: every flag of compare is in exactly one group
// of its -h (none lands under "other"), every name a group lists is a
// flag, and the defaults come from the default plan.
func TestCompareHelpGroups(t *testing.T) {
	text := compareHelpText(t)
	assert.NotContains(t, text, "\nother:\n", "a flag is in no group of compareHelp")

	printed := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(text, -1) {
		printed[m[1]] = true
	}
	seen := map[string]string{}
	for _, g := range compareHelp {
		assert.Contains(t, text, "\n"+g.heading+":\n")
		for _, name := range g.flags {
			if prev, ok := seen[name]; ok {
				t.Errorf("-%s is in %q and %q", name, prev, g.heading)
			}
			seen[name] = g.heading
			assert.True(t, printed[name], "group %q lists -%s, which compare does not define", g.heading, name)
		}
	}

	for flag, def := range map[string]string{"gomaxprocs": "1,8", "connections": "5000", "load": "wrk", "precision": `"5%"`} {
		assert.Regexp(t, `(?m)^  -`+flag+` .*\n.*\(default `+regexp.QuoteMeta(def), text, "-%s's default", flag)
	}
}

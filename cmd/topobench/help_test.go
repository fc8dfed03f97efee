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

// compareHelpText is what compare prints for args (-h or -help-all); help
// is not an error.
func compareHelpText(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"compare"}, args...), &stdout, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, 0, exitCode(err))
	return stderr.String()
}

// TestCompareHelpGolden: compare -h prints the first screen's flags and
// -help-all every flag under the headings of compareHelp, with the
// defaults of the default preset, and -preset 2013 -h the 2013 plan's, as
// testdata/*.golden hold them (-update rewrites them).
func TestCompareHelpGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
	}{
		{"compare-help.golden", []string{"-h"}},
		{"compare-help-all.golden", []string{"-help-all"}},
		{"compare-help-2013.golden", []string{"-preset", "2013", "-h"}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got := compareHelpText(t, tc.args...)
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), got, "compare %v changed; go test ./cmd/topobench -run TestCompareHelpGolden -update rewrites %s", tc.args, golden)
		})
	}
}

var helpFlagRE = regexp.MustCompile(`(?m)^  -([\w-]+)`)

// printedFlags are the flags a help text lists.
func printedFlags(text string) map[string]bool {
	printed := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(text, -1) {
		printed[m[1]] = true
	}
	return printed
}

// TestCompareHelpGroups: every flag of compare but the plumbing and the
// removed ones is in exactly one group of -help-all (none lands under
// "other"), every name a group lists is a flag, the first screen holds at
// most 15 of them, neither screen shows the plumbing, and the defaults
// come from the default preset.
func TestCompareHelpGroups(t *testing.T) {
	all := compareHelpText(t, "-help-all")
	first := compareHelpText(t, "-h")
	assert.NotContains(t, all, "\nother:\n", "a flag is in no group of compareHelp")

	printed := printedFlags(all)
	seen := map[string]string{}
	for _, g := range compareHelp {
		assert.Contains(t, all, "\n"+g.heading+":\n")
		for _, name := range g.flags {
			if prev, ok := seen[name]; ok {
				t.Errorf("-%s is in %q and %q", name, prev, g.heading)
			}
			seen[name] = g.heading
			assert.True(t, printed[name], "group %q lists -%s, which compare does not define", g.heading, name)
		}
	}
	onFirst := printedFlags(first)
	assert.LessOrEqual(t, len(onFirst), 15, "compare -h's first screen")
	for name := range onFirst {
		assert.True(t, printed[name], "-%s is on the first screen, not in -help-all", name)
	}
	for _, name := range append(plumbingFlags, "scenario", "pairs") {
		assert.False(t, printed[name] || onFirst[name], "-%s is in a help screen", name)
	}

	for flag, def := range map[string]string{"gomaxprocs": "1,8", "connections": "5000", "load": "builtin", "precision": `"5%"`, "budget": "12m0s", "design": `"duet"`} {
		assert.Regexp(t, `(?m)^  -`+flag+` .*\n.*\(default `+regexp.QuoteMeta(def), all, "-%s's default", flag)
	}
}

// TestComparePlumbingFlags: the flags our own processes pass parse,
// though no help shows them.
func TestComparePlumbingFlags(t *testing.T) {
	text := compareHelpText(t, "-hello-agent=http://127.0.0.1:7070", "-nginx-agent=http://127.0.0.1:7071", "-sockdir=/tmp", "-free-ports", "-h")
	assert.NotContains(t, text, "-hello-agent")
}

package topobench_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFiles are the documentation a reader follows links through.
func docFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/ holds no .md file")
	return append([]string{"README.md", "CONTRIBUTING.md"}, docs...)
}

var (
	// linkRE matches a markdown link or image: [text](target) or
	// ![alt](target), the target without spaces.
	linkRE = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	// inlineCodeRE matches an inline code span.
	inlineCodeRE = regexp.MustCompile("`[^`\n]+`")
	// makeRE matches a make command and its target, after the start or
	// a space (so that VAR=value make target counts).
	makeRE = regexp.MustCompile(`(?:^|\s)make\s+([A-Za-z][\w.-]*)`)
	// targetRE matches a Makefile rule's targets.
	targetRE = regexp.MustCompile(`(?m)^([A-Za-z][\w.-]*(?:[ \t]+[A-Za-z][\w.-]*)*)[ \t]*:([^=]|$)`)
	// slugDropRE is what GitHub drops from a heading to make its anchor.
	slugDropRE = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// prose splits a markdown document into its text outside fenced code
// blocks and the lines inside them.
func prose(doc string) (text []string, code []string) {
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			code = append(code, line)
		} else {
			text = append(text, line)
		}
	}
	return text, code
}

// anchors are the fragment names of a document's headings, as GitHub
// makes them: lower case, punctuation dropped, spaces as hyphens, a
// repeated name numbered.
func anchors(doc string) map[string]bool {
	text, _ := prose(doc)
	out := map[string]bool{}
	for _, line := range text {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		slug := strings.ReplaceAll(slugDropRE.ReplaceAllString(strings.ToLower(h), ""), " ", "-")
		name := slug
		for i := 1; out[name]; i++ {
			name = slug + "-" + strconv.Itoa(i)
		}
		out[name] = true
	}
	return out
}

// TestDocLinksResolve: every relative link in the documentation names a
// file of the repository and, when it has one, a heading of that file.
func TestDocLinksResolve(t *testing.T) {
	for _, file := range docFiles(t) {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			text, _ := prose(string(raw))
			for _, m := range linkRE.FindAllStringSubmatch(strings.Join(text, "\n"), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
				}
				if !assert.FileExists(t, dest, "%s links to %s", file, target) || frag == "" {
					continue
				}
				doc, err := os.ReadFile(dest)
				require.NoError(t, err)
				assert.True(t, anchors(string(doc))[frag], "%s links to %s: %s has no heading #%s", file, target, dest, frag)
			}
		})
	}
}

// TestDocMakeTargetsExist: every `make X` the documentation names, in
// inline code or a code block, is a target of the Makefile.
func TestDocMakeTargetsExist(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	require.NoError(t, err)
	targets := map[string]bool{}
	for _, m := range targetRE.FindAllStringSubmatch(string(mk), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	require.True(t, targets["compare"] && targets["test"], "Makefile targets not read: %v", targets)

	for _, file := range docFiles(t) {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			text, code := prose(string(raw))
			for _, line := range text {
				code = append(code, inlineCodeRE.FindAllString(line, -1)...)
			}
			for _, c := range code {
				for _, m := range makeRE.FindAllStringSubmatch(strings.Trim(c, "`"), -1) {
					assert.True(t, targets[m[1]], "%s names `make %s`, which is not a Makefile target", file, m[1])
				}
			}
		})
	}
}

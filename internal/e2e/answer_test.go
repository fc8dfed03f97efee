package e2e

import (
	"cmp"
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	os.Exit(code)
}

// TestShortDuetAnswer runs make compare's design, short, on three
// topologies at GOMAXPROCS 1, and reads summary.md and report.html as a
// user would: every figure the duet measures is there.
func TestShortDuetAnswer(t *testing.T) {
	testenv.NeedNetns(t)
	bin := testenv.TopobenchBin(t)
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-topologies", "standalone,nginx-http,nginx-http-unix",
		"-gomaxprocs", "1", "-reps", "6", "-window", "1s", "-out", out)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "compare: %s", tail(log))

	md := read(t, filepath.Join(out, "summary.md"))
	rows := resultRows(t, md, "### GOMAXPROCS=1 load=builtin")
	require.Len(t, rows, 3, "one row a topology:\n%s", md)
	t.Run("nginx and backend µs with intervals", func(t *testing.T) {
		for _, r := range rows[1:] {
			cpu := strings.Split(r["CPU µs/req load / nginx / server"], " / ")
			require.Len(t, cpu, 3, r["topology"])
			for _, part := range cpu[1:] {
				assert.Regexp(t, `^[0-9][0-9,.]* ± [0-9]+%$`, part, "%s: %v", r["topology"], cpu)
			}
		}
	})
	t.Run("ranks in the order of the ratios", func(t *testing.T) { checkRanks(t, rows) })
	t.Run("2013 table filled", func(t *testing.T) { check2013(t, md) })
	t.Run("one warning line per cell and kind", func(t *testing.T) { checkWarnings(t, md) })
	t.Run("the answer's sentence", func(t *testing.T) {
		answer := section(t, html.UnescapeString(read(t, filepath.Join(out, "report.html"))), `id="answer"`, "</section>")
		// The sentences, not the costs table, whose "–" marks a cell not measured.
		answer = regexp.MustCompile(`(?s)<table>.*?</table>`).ReplaceAllString(answer, "")
		text := regexp.MustCompile(`<[^>]+>`).ReplaceAllString(answer, "")
		assert.Contains(t, text, "Your own Go service behind nginx", "the choice sentence")
		assert.Contains(t, text, "µs")
		// "–" between two figures is a range; alone it is a figure missing.
		assert.NotRegexp(t, `(^|[\s(])–([\s),;.]|$)`, text, "a hole in the answer")
	})
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func tail(b []byte) string {
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}

// section is s from the first from to the first end after it.
func section(t *testing.T, s, from, end string) string {
	t.Helper()
	i := strings.Index(s, from)
	require.GreaterOrEqual(t, i, 0, "no %q", from)
	s = s[i:]
	if j := strings.Index(s, end); j >= 0 {
		s = s[:j]
	}
	return s
}

// table is the first markdown table of s, each row by its header's names.
func table(s string) []map[string]string {
	var head []string
	var rows []map[string]string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "|") {
			if head != nil {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case head == nil:
			head = cells
		case strings.HasPrefix(cells[0], "--"):
		default:
			row := map[string]string{}
			for i, c := range cells {
				if i < len(head) {
					row[head[i]] = c
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func resultRows(t *testing.T, md, heading string) []map[string]string {
	t.Helper()
	return table(section(t, md, heading, "\n#"))
}

var leadingNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?`)

func number(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(leadingNumber.FindString(s), 64)
	require.NoError(t, err, "no number at the start of %q", s)
	return f
}

func checkRanks(t *testing.T, rows []map[string]string) {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b map[string]string) int { return cmp.Compare(number(t, a["rank"]), number(t, b["rank"])) })
	for i := 1; i < len(rows); i++ {
		above, below := rows[i-1], rows[i]
		assert.Less(t, number(t, above["rank"]), number(t, below["rank"]), "one rank a row")
		assert.GreaterOrEqual(t, number(t, above["vs standalone"]), number(t, below["vs standalone"]),
			"%s ranks above %s", above["topology"], below["topology"])
	}
}

func check2013(t *testing.T, md string) {
	measured := map[string]bool{"standalone": true, "nginx-http": true}
	rows := table(section(t, md, "## Compared with the 2013 reference", "\n## "))
	require.NotEmpty(t, rows)
	for _, r := range rows {
		if r["GOMAXPROCS"] != "1" || !measured[r["topology"]] {
			continue
		}
		delete(measured, r["topology"])
		assert.NotEqual(t, "not measured", r["this sweep req/s"], r["topology"])
		assert.NotEqual(t, "–", r["this sweep vs standalone"], r["topology"])
	}
	assert.Empty(t, measured, "rows missing from the 2013 table")
}

// warningLine is "- **kind**: the cell: what"; setup lines name no cell.
var warningLine = regexp.MustCompile(`^- \*\*([a-z -]+)\*\*: (GOMAXPROCS=[^:]*):`)

func checkWarnings(t *testing.T, md string) {
	i := strings.Index(md, "## Warnings")
	if i < 0 {
		return
	}
	seen := map[string]int{}
	for _, line := range strings.Split(section(t, md[i:], "## Warnings", "\n## "), "\n") {
		if m := warningLine.FindStringSubmatch(line); m != nil {
			seen[m[1]+" | "+m[2]]++
		}
	}
	for k, n := range seen {
		assert.Equal(t, 1, n, "warning lines for %s", k)
	}
}

package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// pairedWithCPU is the fake paired sweep with nginx's and the server's
// CPU in every window: nginx 40-43 µs a request, the server 30 (standalone's 25).
func pairedWithCPU() (results.Env, []results.Run) {
	env, runs := analysistest.PairedSweep()
	for i := range runs {
		r := &runs[i]
		if r.Pair == nil {
			continue
		}
		per := func(us float64) *results.Usage {
			return &results.Usage{User: us * float64(r.Figures.Requests) * 1e-6}
		}
		r.CPU = &results.CPU{Load: *per(10), Server: per(30)}
		if r.Topology == analysis.Standalone {
			r.CPU.Server = per(25)
		} else {
			r.CPU.Nginx = per(40 + float64(i%4))
		}
	}
	return env, runs
}

// TestPairedReport: a pair design's answer, table and CPU chart give
// nginx's and the server's CPU with intervals, and its 2013 rows are
// filled from the pairs.
func TestPairedReport(t *testing.T) {
	env, runs := pairedWithCPU()
	s := summarize(env, runs)
	g := s.Groups()[0]
	http, ok := s.Cell(analysis.Key{Group: g, Topology: "nginx-http"})
	require.True(t, ok)
	tests := []struct {
		name, got string
		want      []string
	}{
		{"the answer", answer(s.Summary, g), []string{"µs ± ", " of nginx CPU per request (the server 30 µs ± 0%, standalone's 25 µs ± 0%)"}},
		{"the table's CPU column", cpuCell(http), []string{"10 / 4", " ± ", " / 30 ± 0%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				assert.Contains(t, tt.got, w)
			}
			assert.NotRegexp(t, noFigure, tt.got)
		})
	}
	t.Run("the chart's whiskers", func(t *testing.T) {
		_, specs, _ := chartsByTitle(t, Sweep{Summary: s.Summary})
		spec, ok := specs["CPU µs per request, "+groupLabel(g)]
		require.True(t, ok)
		for _, sr := range spec.Series[:2] {
			require.Len(t, sr.Lo, len(spec.Cats), sr.Label)
			for i := range spec.Cats {
				if sr.Y[i] != nil && *sr.Y[i] > 0 && sr.Label == "nginx" && spec.Cats[i] != analysis.Standalone {
					require.NotNil(t, sr.Lo[i], spec.Cats[i])
					assert.LessOrEqual(t, *sr.Lo[i], *sr.Y[i])
					assert.GreaterOrEqual(t, *sr.Hi[i], *sr.Y[i])
				}
			}
		}
	})
	t.Run("2013's rows", func(t *testing.T) {
		_, rows := s.referenceTable()
		var measured int
		for _, r := range rows {
			if r[0] == "1" && (r[1] == "nginx-http" || r[1] == "nginx-fcgi-tcp") {
				measured++
				assert.NotEqual(t, "not measured", r[5], r[1])
				assert.Regexp(t, `^0\.\d\d \(0\.\d\d–0\.\d\d\)$`, r[6], r[1])
			}
		}
		assert.Equal(t, 2, measured)
	})
}

// TestHowToRead: summary.md's key under the tables is at most five
// lines in every golden case, and points at docs/output.md.
func TestHowToRead(t *testing.T) {
	cases := goldenCases(t)
	cases["paired with CPU"] = pairedWithCPU
	for name, load := range cases {
		t.Run(name, func(t *testing.T) {
			env, runs := load()
			var b bytes.Buffer
			require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
			md := b.String()
			i := strings.Index(md, "How to read the table (")
			if len(runs) == 0 {
				assert.Negative(t, i)
				return
			}
			require.GreaterOrEqual(t, i, 0)
			section, _, _ := strings.Cut(md[i:], "\n\n")
			assert.LessOrEqual(t, strings.Count(section, "\n")+1, 5, section)
			assert.Contains(t, section, "docs/output.md")
		})
	}
}

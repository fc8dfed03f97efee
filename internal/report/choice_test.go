package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// TestChoiceOnTop: summary.md opens, after its header, with the choice
// and the costs table, the table's first row within the first 15 lines
// for a sweep of two groups, before "What it costs"; and with neither
// where there is nothing to choose.
func TestChoiceOnTop(t *testing.T) {
	g := goldenCases(t)
	tests := []struct {
		name     string
		sweep    func() (results.Env, []results.Run)
		sentence string // the first group's, as it opens
		head     string // the costs table's header
		rows     int
	}{
		{"paired, two groups", g["choice"], "- Your own Go service behind nginx, GOMAXPROCS=1: over a unix socket (nginx-http-unix)",
			"| path | Go behind it | GOMAXPROCS=1 vs standalone | GOMAXPROCS=1 nginx µs/req | GOMAXPROCS=1 backend µs/req | GOMAXPROCS=2 vs standalone | GOMAXPROCS=2 nginx µs/req | GOMAXPROCS=2 backend µs/req |", 6},
		{"paired, one group, no CPU", g["paired"], "Your own Go service behind nginx: over TCP (nginx-http)",
			"| path | Go behind it | vs standalone |", 3},
		{"rounds, two groups", g["sweep"], "- Your own Go service behind nginx, GOMAXPROCS=1: over TCP (nginx-http)",
			"| path | Go behind it | GOMAXPROCS=1 vs standalone | GOMAXPROCS=8 vs standalone |", 4},
		{"the user's own service", g["own"], "Your service behind nginx: over a unix socket (nginx-http-unix)",
			"| path | Go behind it | vs standalone | nginx µs/req | backend µs/req |", 3},
		{"no path through nginx", g["no-nginx"], "", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, summarize(tt.sweep()).WriteMarkdown(&b))
			lines := strings.Split(b.String(), "\n")
			intro := indexOf(lines, "What it costs to put nginx")
			require.Positive(t, intro)
			top := lines[:intro]
			if tt.sentence == "" {
				assert.NotContains(t, strings.Join(top, "\n"), "Your own Go service")
				assert.NotContains(t, strings.Join(top, "\n"), "| path |")
				return
			}
			first := indexOf(top, tt.sentence)
			require.Positive(t, first, "the sentence")
			assert.True(t, strings.HasPrefix(top[first-2], "- **"), "right after the header's bullets")
			head := indexOf(top, "| path |")
			require.Positive(t, head, "the table")
			assert.Equal(t, tt.head, top[head])
			assert.Less(t, head+2, 15, "its first row within the first 15 lines")
			alone := "| standalone | net/http, no nginx | 1.00"
			if tt.name == "the user's own service" {
				alone = "| standalone | your service, no nginx | 1.00"
				assert.NotContains(t, strings.Join(top[head:], "\n"), "net/http", "the user's service is theirs")
			}
			assert.Equal(t, alone, top[head+2][:len(alone)])
			var rows int
			for _, l := range top[head+2:] {
				if strings.HasPrefix(l, "| ") {
					rows++
				}
			}
			assert.Equal(t, tt.rows, rows, "standalone and each path with Go behind nginx")
			assert.NotContains(t, strings.Join(top[head:], "\n"), "nginx-return", "a ceiling is no row")
		})
	}
}

// ownAPI is the user's own service as a command target, listening on
// TCP and on a unix socket.
const ownAPI = "cmd:./api -listen {addr} -unix {unix}"

// ownSweep is a paired sweep of ownAPI through nginx over TCP (0.40 of
// standalone) and a unix socket (0.46), with CPU figures.
func ownSweep() (results.Env, []results.Run) {
	env, runs := analysistest.PairedPaths([]analysistest.PathGroup{{GOMAXPROCS: 1, Paths: []analysistest.Path{
		{Topology: "nginx-http", Ratio: 0.40, Nginx: 36, Server: 30},
		{Topology: "nginx-http-unix", Ratio: 0.46, Nginx: 34, Server: 29},
	}}})
	env.Plan.Targets = []string{ownAPI}
	env.Command = append(env.Command, "-targets", ownAPI)
	for i := range runs {
		runs[i].Target = ownAPI
	}
	return env, runs
}

// TestCostsBehind: the costs table names the server behind each path as
// the choices' targets have it, each once: cmd/hello's net/http and the
// user's own service side by side in a sweep of both.
func TestCostsBehind(t *testing.T) {
	env, own := ownSweep()
	env.Plan.Targets = []string{results.TargetGo, ownAPI}
	runs := slices.Clone(own)
	for _, r := range own {
		r.Target = ""
		runs = append(runs, r)
	}
	tests := []struct {
		name string
		env  results.Env
		runs []results.Run
		want map[string]string
	}{
		{"own", env, own, map[string]string{
			"standalone": "your service, no nginx", "nginx-http": "your service over TCP", "nginx-http-unix": "your service over a unix socket",
		}},
		{"go and own", env, runs, map[string]string{
			"standalone":      "net/http, no nginx; your service, no nginx",
			"nginx-http":      "net/http over TCP; your service over TCP",
			"nginx-http-unix": "net/http over a unix socket; your service over a unix socket",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := summarize(tt.env, tt.runs).costs()
			require.NotNil(t, c)
			got := map[string]string{}
			for _, r := range c.Rows {
				got[r[0]] = r[1]
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// indexOf is the index of the first line starting with prefix; -1
// without one.
func indexOf(lines []string, prefix string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return i
		}
	}
	return -1
}

// TestChoiceInHTML: report.html's answer holds each group's sentence
// and the costs table, before the answers; a sweep without CPU figures
// gets no CPU columns and no word of them.
func TestChoiceInHTML(t *testing.T) {
	tests := []struct {
		name  string
		sweep func() (results.Env, []results.Run)
		cpu   bool
	}{
		{"with CPU", analysistest.ChoiceSweep, true},
		{"without", analysistest.PairedSweep, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env, runs := tt.sweep()
			s := summarize(env, runs)
			page := string(renderHTML(t, []Sweep{sweepOf(tt.name, "", env, runs)}))
			answer := page[strings.Index(page, `<section id="answer">`):strings.Index(page, `<ul class="answers">`)]
			for _, c := range s.Choices {
				assert.Contains(t, answer, `<p class="choice">`+strings.ReplaceAll(c.Sentence, "'", "&#39;")+`</p>`)
			}
			assert.Contains(t, answer, "<caption>What each path through nginx costs")
			assert.Equal(t, tt.cpu, strings.Contains(answer, "backend µs/req"))
			assert.Equal(t, tt.cpu, strings.Contains(answer, "CPU µs per request"))
		})
	}
}

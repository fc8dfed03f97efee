package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
)

// TestTLSTableRendered checks by hand what the TLS golden files hold:
// where the table sits, and that a load-bound cell never reads as a
// result.
func TestTLSTableRendered(t *testing.T) {
	render := func(t *testing.T, o analysistest.TLSOptions) (md, page string) {
		env, runs := analysistest.TLSSweep(o)
		s := summarize(env, runs)
		var b bytes.Buffer
		require.NoError(t, s.WriteMarkdown(&b))
		sw := sweepOf("tls", "", env, runs)
		return b.String(), string(renderHTML(t, []Sweep{sw}))
	}
	before := func(t *testing.T, doc, first, then string) {
		t.Helper()
		i, j := strings.Index(doc, first), strings.Index(doc, then)
		require.True(t, i >= 0 && j >= 0, "%q and %q both in the report", first, then)
		assert.Less(t, i, j, "%q before %q", first, then)
	}

	t.Run("kept connections, all TLS: at the top", func(t *testing.T) {
		md, page := render(t, analysistest.TLSOptions{})
		before(t, md, "## TLS: kept connections", "## In short")
		assert.Contains(t, md, "| path | TLS by | nginx to Go | regime | req/s | n | vs standalone-tls | nginx µs/req | Go µs/req | notes |")
		assert.Contains(t, md, "| standalone-tls | Go | none | kept connections | 31,250 ± 1% | 6 | 1.00 (baseline) | none | 32 ± 0% |  |")
		assert.Contains(t, md, "| nginx-tls-http-unix | nginx | unix socket | kept connections |")
		assert.Contains(t, md, "resumption off: every handshake a full one; HTTP/1.1; load wrk at 100 connections; kept connections.")
		before(t, page, "<caption>TLS: kept connections</caption>", `<section id="summary">`)
	})

	t.Run("handshakes, a load-bound cell", func(t *testing.T) {
		md, page := render(t, analysistest.TLSOptions{Close: true, LoadBound: "nginx-tls-http"})
		assert.Contains(t, md, "## TLS: a handshake a request")
		assert.Contains(t, md, "| handshakes/s | n | vs standalone-tls | nginx µs/handshake | Go µs/handshake |")
		assert.Contains(t, md, "| nginx-tls-http | nginx | TCP | a handshake a request | ≥ 2,222 ± 1% | 6 | ≥ 0.89 ± 1% | 420 ± 0% | 30 ± 0% | load-bound: a floor, not a result |")
		assert.Contains(t, page, `<tr class="marked"><th scope="row">nginx-tls-http</th>`)
	})

	t.Run("a load-bound baseline bounds the others' ratios from above", func(t *testing.T) {
		md, _ := render(t, analysistest.TLSOptions{Close: true, LoadBound: "standalone-tls"})
		assert.Contains(t, md, "| standalone-tls | Go | none | a handshake a request | ≥ 2,500 ± 1% | 6 | 1.00 (baseline) |")
		assert.Contains(t, md, "| nginx-tls-http | nginx | TCP | a handshake a request | 2,222 ± 1% | 6 | ≤ 0.89 ± 1% |")
	})

	t.Run("two generators side by side", func(t *testing.T) {
		md, _ := render(t, analysistest.TLSOptions{Close: true, Loads: []results.Generator{results.LoadBuiltin, "s_time"}, Faster: 1.03})
		assert.Contains(t, md, "| load | handshakes/s | n | vs standalone-tls | nginx µs/handshake | Go µs/handshake | vs builtin | notes |")
		before(t, md, "| nginx-tls-http | nginx | TCP | a handshake a request | builtin |", "| nginx-tls-http | nginx | TCP | a handshake a request | s_time |")
		assert.Contains(t, md, "| s_time | 2,289 ± 1% | 6 | 0.89 ± 1% | 420 ± 0% | 30 ± 0% | 1.030 [1.016, 1.044] |  |")
	})

	t.Run("beside plain paths: a section after the results", func(t *testing.T) {
		md, page := render(t, analysistest.TLSOptions{Plain: true})
		before(t, md, "## Results", "## TLS: kept connections")
		before(t, md, "## TLS: kept connections", "## How it was measured")
		assert.NotContains(t, md, "| standalone | Go |", "a plain path is no row")
		before(t, page, `<section id="summary">`, "<caption>TLS: kept connections</caption>")
	})

	t.Run("no TLS: no table", func(t *testing.T) {
		env, runs := analysistest.CostSweep(false)
		var b bytes.Buffer
		require.NoError(t, summarize(env, runs).WriteMarkdown(&b))
		assert.NotContains(t, b.String(), "## TLS")
	})
}

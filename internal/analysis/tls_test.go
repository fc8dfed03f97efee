package analysis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/analysis/analysistest"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

func TestTLSTable(t *testing.T) {
	t.Run("no TLS topology", func(t *testing.T) {
		env, runs := analysistest.CostSweep(false)
		s := analysis.Summarize(env, runs)
		assert.Nil(t, s.TLSTable())
	})

	t.Run("kept connections", func(t *testing.T) {
		env, runs := analysistest.TLSSweep(analysistest.TLSOptions{TLS: &tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}})
		s := analysis.Summarize(env, runs)
		tt := s.TLSTable()
		require.NotNil(t, tt)
		assert.True(t, tt.AllTLS)
		assert.False(t, tt.Handshakes)
		assert.Equal(t, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", tt.Suite)
		assert.True(t, tt.TLS.Resume)
		require.Len(t, tt.Rows, 3)
		var names []string
		for _, r := range tt.Rows {
			names = append(names, r.Key.Topology)
		}
		assert.Equal(t, []string{"standalone-tls", "nginx-tls-http", "nginx-tls-http-unix"}, names)

		base, tcp, unix := tt.Rows[0], tt.Rows[1], tt.Rows[2]
		assert.True(t, base.Baseline)
		assert.Equal(t, "Go", base.Terminates)
		assert.Empty(t, base.Upstream)
		assert.Nil(t, base.Ratio)
		assert.Nil(t, base.NginxUS)
		assert.Equal(t, "nginx", tcp.Terminates)
		assert.Equal(t, "TCP", tcp.Upstream)
		assert.Equal(t, "unix socket", unix.Upstream)

		// The summary's own figures, not new ones.
		c, ok := s.Cell(tcp.Key)
		require.True(t, ok)
		assert.Same(t, c.RatioToStandalone, tcp.Ratio)
		assert.Equal(t, c.ReqPerSec.Median, tcp.Rate.Center)
		assert.Same(t, c.CPU.Nginx, tcp.NginxUS)
		assert.Same(t, c.CPU.Server, tcp.BackendUS)
		assert.InDelta(t, 32.0/71, tcp.Ratio.Center, 0.01, "standalone-tls's 32 µs over nginx's 44 + Go's 27")
		assert.InDelta(t, 44, tcp.NginxUS.Center, 0.5)
		assert.InDelta(t, 27, tcp.BackendUS.Center, 0.5)
		assert.False(t, tcp.Flagged())
	})

	t.Run("handshakes, a load-bound cell", func(t *testing.T) {
		env, runs := analysistest.TLSSweep(analysistest.TLSOptions{Close: true, LoadBound: "nginx-tls-http"})
		s := analysis.Summarize(env, runs)
		tt := s.TLSTable()
		require.NotNil(t, tt)
		assert.True(t, tt.Handshakes)
		require.Len(t, tt.Rows, 3)
		assert.True(t, tt.Rows[1].LoadBound)
		assert.True(t, tt.Rows[1].Flagged())
		assert.Contains(t, tt.Rows[1].Notes, "load-bound")
		assert.False(t, tt.Rows[2].LoadBound)
		assert.InDelta(t, 400, tt.Rows[0].BackendUS.Center, 2, "µs per handshake")
	})

	t.Run("two generators side by side", func(t *testing.T) {
		env, runs := analysistest.TLSSweep(analysistest.TLSOptions{Close: true, Loads: []results.Generator{results.LoadBuiltin, "s_time"}, Faster: 1.03})
		s := analysis.Summarize(env, runs)
		tt := s.TLSTable()
		require.NotNil(t, tt)
		require.Len(t, tt.Rows, 6)
		for i, r := range tt.Rows {
			want := []results.Generator{results.LoadBuiltin, "s_time"}[i%2]
			assert.Equal(t, want, r.Key.Load, "row %d", i)
			if i%2 == 0 {
				assert.Nil(t, r.VsLoad)
				continue
			}
			require.NotNil(t, r.VsLoad, "row %d", i)
			assert.InDelta(t, 1.03, r.VsLoad.Center, 0.02)
			assert.Equal(t, tt.Rows[i-1].Key.Topology, r.Key.Topology)
		}
	})

	t.Run("a section beside plain paths", func(t *testing.T) {
		env, runs := analysistest.TLSSweep(analysistest.TLSOptions{Plain: true})
		s := analysis.Summarize(env, runs)
		tt := s.TLSTable()
		require.NotNil(t, tt)
		assert.False(t, tt.AllTLS)
		assert.Len(t, tt.Rows, 3, "the plain paths are no row")
	})
}

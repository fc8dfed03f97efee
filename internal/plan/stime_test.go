package plan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/tlscert"
)

// stimePlan is the handshake comparison: the engine and s_time side by
// side under -close over the TLS topologies, in rounds.
func stimePlan() Plan {
	p := DefaultPlan()
	p.Topologies = []string{"standalone-tls", "nginx-tls-http", "nginx-tls-http-unix"}
	p.Loads = []results.Generator{results.LoadBuiltin, results.LoadStime}
	p.Connections, p.Close = []int{1, 8}, true
	p.SetTLS(func(s *tlscert.Settings) { s.Key = tlscert.RSA2048 })
	return p
}

// TestCheckStime: s_time only over TLS, only with -close, only in
// rounds, with no more processes than MaxStimeProcs and no resumption.
func TestCheckStime(t *testing.T) {
	require.NoError(t, stimePlan().Validate(Where{}))
	alone := stimePlan()
	alone.Loads, alone.Connections = []results.Generator{results.LoadStime}, []int{MaxStimeProcs}
	require.NoError(t, alone.Validate(Where{}), "s_time alone, at its most processes")

	for _, tt := range []struct {
		name   string
		change func(*Plan)
		field  Field
		want   string
	}{
		{"a plain topology", func(p *Plan) { p.Topologies = append(p.Topologies, "nginx-http") }, Load, "s_time speaks TLS only, and nginx-http is plain HTTP; give TLS topologies alone"},
		{"plain topologies only", func(p *Plan) { p.Topologies, p.TLS = []string{"standalone"}, nil }, Load, "s_time speaks TLS only, and standalone is plain HTTP"},
		{"kept connections", func(p *Plan) { p.Close = false }, Close, "-load s_time makes a connection a request; give -close"},
		{"too many processes", func(p *Plan) { p.Connections = []int{8, MaxStimeProcs + 1} }, Connections, "65: s_time runs a process a connection, want at most 64"},
		{"resumption", func(p *Plan) { p.SetTLS(func(s *tlscert.Settings) { s.Resume = true }) }, TLSResume, "on: s_time -new makes a full handshake every connection"},
		{"the paired design", func(p *Plan) {
			p.Loads, p.Connections = []results.Generator{results.LoadStime}, []int{8}
			p.Paired = &results.Paired{Pairs: 3, Seed: 42}
		}, Design, "paired: s_time makes a connection a request, which no pool kept across windows does; measure it with -design rounds"},
		{"a count of requests", func(p *Plan) { p.Schedules = []results.Schedule{{Requests: 1000}} }, Requests, "1000: s_time runs for a duration"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := stimePlan()
			tt.change(&p)
			requireFieldError(t, p.Validate(Where{}), tt.field, tt.want)
		})
	}
}

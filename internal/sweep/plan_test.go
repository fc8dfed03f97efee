package sweep

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
)

func TestCellsInterleaveRepetitions(t *testing.T) {
	p := Plan{results.Plan{Topologies: []string{"a", "b"}, GOMAXPROCS: []int{1, 8}, Reps: 2}}
	var got []string
	for _, c := range p.Cells() {
		got = append(got, c.Key())
	}
	assert.Equal(t, []string{
		"g1-a-r1", "g1-b-r1", "g1-a-r2", "g1-b-r2",
		"g8-a-r1", "g8-b-r1", "g8-a-r2", "g8-b-r2",
	}, got)
}

func TestValidate(t *testing.T) {
	ok := DefaultPlan()
	require.NoError(t, ok.Validate())
	tests := []struct {
		name   string
		change func(*Plan)
		want   string
	}{
		{"unknown topology", func(p *Plan) { p.Topologies = []string{"nginx-php"} }, "-topologies"},
		{"duplicate topology", func(p *Plan) { p.Topologies = []string{"standalone", "standalone"} }, "-topologies"},
		{"no gomaxprocs", func(p *Plan) { p.GOMAXPROCS = nil }, "-gomaxprocs"},
		{"zero gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{0} }, "-gomaxprocs"},
		{"repeated gomaxprocs", func(p *Plan) { p.GOMAXPROCS = []int{1, 1} }, "-gomaxprocs"},
		{"no reps", func(p *Plan) { p.Reps = 0 }, "-reps"},
		{"sub-second duration", func(p *Plan) { p.Duration = 500 * time.Millisecond }, "-duration"},
		{"fractional duration", func(p *Plan) { p.Duration = 1500 * time.Millisecond }, "-duration"},
		{"negative warmup", func(p *Plan) { p.Warmup = -time.Second }, "-warmup"},
		{"no threads", func(p *Plan) { p.Threads = 0 }, "-threads"},
		{"fewer connections than threads", func(p *Plan) { p.Connections = 10 }, "-connections"},
		{"connections not a multiple of threads", func(p *Plan) { p.Connections = 5050 }, "-connections"},
		{"no timeout", func(p *Plan) { p.Timeout = 0 }, "-timeout"},
		{"sub-second timeout", func(p *Plan) { p.Timeout = 500 * time.Millisecond }, "-timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := DefaultPlan()
			tt.change(&p)
			err := p.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts(" 1, 8 ")
	require.NoError(t, err)
	assert.Equal(t, []int{1, 8}, got)
	_, err = ParseInts("1,x")
	assert.ErrorContains(t, err, `"x"`)
	_, err = ParseInts(",")
	assert.Error(t, err)
}

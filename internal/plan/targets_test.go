package plan

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
)

func TestParseTargets(t *testing.T) {
	all, err := ParseTargets("all")
	require.NoError(t, err)
	assert.Equal(t, append([]string{"go"}, target.Names()...), all)
	assert.Equal(t, append([]string{"go"}, target.Names()...), KnownTargets())
	two, err := ParseTargets(" go, erlang ,")
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "erlang"}, two)
	cmd, err := ParseTargets(`go,cmd:'./api -tags a,b -listen {addr}'`)
	require.NoError(t, err)
	assert.Equal(t, []string{"go", `cmd:'./api -tags a,b -listen {addr}'`}, cmd, "a comma in quotes stays in the command")
	_, err = ParseTargets(`cmd:'./api -listen {addr}`)
	assert.ErrorContains(t, err, "unclosed")
}

func TestScenarioTargets(t *testing.T) {
	p, err := Scenario("2007", 1, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"go", "java-threads", "java-pool", "erlang"}, p.Targets)
	assert.Equal(t, []string{"standalone"}, p.Topologies)
	assert.Equal(t, []int{1000}, p.Connections)
	assert.Equal(t, []int{1}, p.GOMAXPROCS)
	assert.True(t, p.Close, "2007's ab used a connection per request")
	assert.Len(t, p.Cells(), 4*p.Reps)

	// 2009 with every target: the others than Go get standalone and
	// nginx-http, the nginx ceilings are measured once, with Go.
	p, err = Scenario("2009", 1, 2)
	require.NoError(t, err)
	p.Targets = KnownTargets()
	p.Reps = 1
	perTarget := map[string]int{}
	for _, c := range p.Cells() {
		perTarget[c.Target]++
		if c.Target != results.TargetGo {
			assert.Contains(t, []string{"standalone", "nginx-http"}, c.Topology)
		}
	}
	assert.Equal(t, 4*2*4, perTarget["go"])
	for _, n := range target.Names() {
		assert.Equal(t, 2*2*4, perTarget[n], n)
	}
	blocks := p.Blocks()
	require.Len(t, blocks, 2*len(KnownTargets()), "a start per target and processor value")
	assert.Equal(t, "erlang", blocks[2].Target)
}

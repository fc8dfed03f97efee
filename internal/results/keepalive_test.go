package results

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseKeepalive(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Keepalive
		err  string
	}{
		{"auto", KeepaliveAuto, ""},
		{"300", 300, ""},
		{"1", 1, ""},
		{"0", 0, `"0", want auto or a positive number of connections`},
		{"-5", 0, `"-5", want auto`},
		{"Auto", 0, `"Auto", want auto`},
		{"", 0, `"", want auto`},
		{"3e2", 0, `"3e2", want auto`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			k, err := ParseKeepalive(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, k)
		})
	}
}

func TestKeepaliveSize(t *testing.T) {
	assert.Equal(t, 300, Keepalive(0).Size(5000), "the default is 2013's")
	assert.Equal(t, 5000, KeepaliveAuto.Size(5000), "auto: one idle connection per client")
	assert.Equal(t, 64, Keepalive(64).Size(5000))
	assert.Equal(t, "300", Keepalive(0).String())
	assert.Equal(t, "auto", KeepaliveAuto.String())
}

// TestKeepaliveNamesCellsOnlyWhenSwept: a plan of one keepalive keeps
// the names cells had before; a plan of two names both, and nginx
// restarts for each (the outer loop, beside GOMAXPROCS).
func TestKeepaliveNamesCellsOnlyWhenSwept(t *testing.T) {
	one := Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 1,
		UpstreamKeepalive: []Keepalive{KeepaliveAuto}}
	assert.Equal(t, []string{"g1-standalone-c5000-r1", "g1-nginx-http-c5000-r1"}, keys(one.Cells()))
	for _, c := range one.Cells() {
		assert.Equal(t, KeepaliveAuto, one.KeepaliveOf(c))
		assert.Equal(t, "GOMAXPROCS=1", c.Label())
	}
	none := one
	none.UpstreamKeepalive = nil
	assert.Equal(t, DefaultKeepalive, none.KeepaliveOf(none.Cells()[0]))

	two := one
	two.UpstreamKeepalive = []Keepalive{300, KeepaliveAuto}
	cells := two.Cells()
	assert.Equal(t, []string{
		"g1-standalone-c5000-keepalive300-r1", "g1-nginx-http-c5000-keepalive300-r1",
		"g1-standalone-c5000-keepaliveauto-r1", "g1-nginx-http-c5000-keepaliveauto-r1",
	}, keys(cells))
	assert.Equal(t, "GOMAXPROCS=1 upstream keepalive=auto", cells[3].Label())
	assert.Equal(t, KeepaliveAuto, two.KeepaliveOf(cells[3]))
	assert.Equal(t, Keepalive(300), two.KeepaliveOf(cells[0]))
}

func TestKeepaliveJSON(t *testing.T) {
	p := Plan{Topologies: []string{"nginx-http"}, GOMAXPROCS: []int{1}, Connections: []int{5000}, Reps: 1,
		UpstreamKeepalive: []Keepalive{300, KeepaliveAuto}}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"upstream_keepalive":["300","auto"]`)
	var back Plan
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p.UpstreamKeepalive, back.UpstreamKeepalive)

	run := Run{Cell: p.Cells()[1]}
	b, err = json.Marshal(run)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"upstream_keepalive":"auto"`)
	// A run of a one-keepalive plan says nothing of it: the plan does.
	b, err = json.Marshal(Run{Cell: Cell{Topology: "nginx-http", GOMAXPROCS: 1, Rep: 1}})
	require.NoError(t, err)
	assert.NotContains(t, string(b), "keepalive")

	var bad Plan
	err = json.Unmarshal([]byte(`{"topologies":["nginx-http"],"gomaxprocs":[1],"connections":[1],"reps":1,"duration_ns":1,"warmup_ns":0,"threads":1,"timeout_ns":1,"upstream_keepalive":["lots"]}`), &bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `upstream keepalive: "lots", want auto or a positive number of connections`)
}

func TestUpstreamPer1k(t *testing.T) {
	opened := int64(82)
	r := Run{Figures: &Figures{Requests: 41000}, Net: &Net{UpstreamOpened: &opened}}
	v, ok := r.UpstreamPer1k()
	require.True(t, ok)
	assert.InDelta(t, 2.0, v, 1e-9)
	r.Net.UpstreamOpened = nil
	_, ok = r.UpstreamPer1k()
	assert.False(t, ok, "not counted is not zero")
	assert.False(t, (*Net)(nil).Overflowed())
	assert.True(t, (&Net{SyncookiesSent: 1}).Overflowed())
	assert.True(t, (&Net{ListenOverflows: 3}).Overflowed())
	assert.False(t, (&Net{}).Overflowed())
}

package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/target"
)

func TestParseReps(t *testing.T) {
	tests := []struct {
		in      string
		reps    int
		auto    *results.RepsAuto
		wantErr string
	}{
		{"3", 3, nil, ""},
		{"12", 12, nil, ""},
		// The first rounds are the fewest with a ratio interval at the
		// per-look level of the looks from there to N (stats.Sequential).
		{"auto", 6, &results.RepsAuto{Max: 12, Within: 0.05, Confidence: 1 - 0.05/7}, ""},
		{"auto:20", 6, &results.RepsAuto{Max: 20, Within: 0.05, Confidence: 1 - 0.05/15}, ""},
		{"auto:6", 5, &results.RepsAuto{Max: 6, Within: 0.05, Confidence: 1 - 0.05/2}, ""},
		{"auto:4", 4, &results.RepsAuto{Max: 4, Within: 0.05, Confidence: 0.95}, ""},
		{"auto:3", 0, nil, "auto:3: 3 runs are too few for a ratio interval"},
		{"auto:", 0, nil, "want auto or auto:N"},
		{"auto12", 0, nil, "want auto or auto:N"},
		{"lots", 0, nil, `"lots" is not a count`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			reps, auto, err := ParseReps(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.reps, reps)
			if tt.auto == nil {
				assert.Nil(t, auto)
				return
			}
			require.NotNil(t, auto)
			assert.InDelta(t, tt.auto.Confidence, auto.Confidence, 1e-12)
			tt.auto.Confidence = auto.Confidence
			assert.Equal(t, tt.auto, auto)
		})
	}
}

// autoPlan is standalone and nginx-http at GOMAXPROCS 1 and 2 under
// -reps auto: six first rounds, up to eight, ±5%.
func autoPlan() Plan {
	p := Plan{Plan: results.Plan{Topologies: []string{"standalone", "nginx-http"}, GOMAXPROCS: []int{1, 2}, Connections: []int{100},
		Reps: 6, RepsAuto: &results.RepsAuto{Max: 8, Within: 0.05}, Duration: time.Second, Threads: 1, Timeout: time.Second}}
	return p
}

func TestValidateRepsAuto(t *testing.T) {
	p := autoPlan()
	require.NoError(t, p.Validate(Where{}))
	p.RepsAuto.Max = 5
	assert.ErrorContains(t, p.Validate(Where{}), "-reps: auto:5 is fewer than the 6 first rounds")
	p = autoPlan()
	p.RepsAuto.Within = 0
	assert.ErrorContains(t, p.Validate(Where{}), "-reps")
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

func TestParseCPUs(t *testing.T) {
	tests := []struct {
		spec, allowed string
		load, server  string
		err           string
	}{
		{"auto", "0", "", "", ""},
		{"auto", "0-1", "0", "1", ""},
		{"auto", "0-7", "0", "1-7", ""},
		{"auto", "2-3", "2", "3", ""}, // a container's cpuset need not start at 0
		{"auto", "1,3,5", "1", "3,5", ""},
		{"first", "0-7", "0", "1-7", ""},
		{"none", "0-7", "", "", ""},
		{"0/1-3", "0-7", "0", "1-3", ""},
		{"0/1,2,3", "0-7", "0", "1-3", ""},
		{"0-1/1", "0-7", "", "", "CPU 1 is in both sets"},
		{"0", "0-7", "", "", "want auto, first, none or LOAD/SERVER"},
		{"x/1", "0-7", "", "", "load generator: CPU list"},
		{"0/1-", "0-7", "", "", "servers: CPU list"},
		{"0/7", "0-1", "", "", `servers: CPU list "7": CPU 7 is not one this process may run on (0-1)`},
		{"99/1", "0-1", "", "", "load generator: CPU list \"99\": CPU 99"},
	}
	for _, tt := range tests {
		t.Run(tt.spec+" on "+tt.allowed, func(t *testing.T) {
			allowed, err := cpuset.Parse(tt.allowed)
			require.NoError(t, err)
			load, server, err := ParseCPUs(tt.spec, allowed)
			if tt.err != "" {
				assert.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.load, load)
			assert.Equal(t, tt.server, server)
		})
	}
}

func TestParseKeepalives(t *testing.T) {
	ks, err := ParseKeepalives("300, auto")
	require.NoError(t, err)
	assert.Equal(t, []results.Keepalive{300, results.KeepaliveAuto}, ks)
	for _, tc := range []struct{ in, err string }{
		{"300,lots", `"lots", want auto or a positive number of connections`},
		{"0", `"0", want auto or a positive number of connections`},
		{",", `no pools in ",", want auto or counts such as 300,auto`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseKeepalives(tc.in)
			require.Error(t, err)
			assert.Equal(t, tc.err, err.Error())
		})
	}
}

// TestParseOwn: -window and -lead take one duration for every topology
// and TOPOLOGY=D for a topology's own; a window in whole seconds, a lead
// from 0 to 1m.
func TestParseOwn(t *testing.T) {
	tops := []string{"standalone", "nginx-http", "nginx-fcgi-tcp"}
	windows, leads := ParseWindows, ParseLeads
	tests := []struct {
		flag  string
		parse func(string, []string) (time.Duration, map[string]time.Duration, error)
		in    string
		all   time.Duration
		own   map[string]time.Duration
		err   string
	}{
		{"-window", windows, "3s", 3 * time.Second, nil, ""},
		{"-window", windows, "3s,nginx-fcgi-tcp=6s", 3 * time.Second, map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second}, ""},
		{"-window", windows, "nginx-fcgi-tcp=6s, nginx-http=4s", DefaultWindow, map[string]time.Duration{"nginx-fcgi-tcp": 6 * time.Second, "nginx-http": 4 * time.Second}, ""},
		{"-window", windows, "1500ms", 0, nil, "want whole seconds"},
		{"-window", windows, "0", 0, nil, "want whole seconds from 1s"},
		{"-window", windows, "3s,nginx-fcgi-tcp=2500ms", 0, nil, "want whole seconds"},
		{"-window", windows, "2h", 0, nil, "want whole seconds from 1s to 1h0m0s"},
		{"-window", windows, "3s,4s", 0, nil, "one duration for every topology"},
		{"-window", windows, "3s,nginx-fcgi-unix=6s", 0, nil, `"nginx-fcgi-unix" is not a topology of the plan`},
		{"-lead", leads, "1s", time.Second, nil, ""},
		{"-lead", leads, "0", 0, nil, ""},
		{"-lead", leads, "1s,standalone=250ms", time.Second, map[string]time.Duration{"standalone": 250 * time.Millisecond}, ""},
		{"-lead", leads, "standalone=250ms", DefaultLead, map[string]time.Duration{"standalone": 250 * time.Millisecond}, ""},
		{"-lead", leads, "1s,2s", 0, nil, "one duration for every topology"},
		{"-lead", leads, "1s,nginx-fcgi-unix=2s", 0, nil, `"nginx-fcgi-unix" is not a topology of the plan`},
		{"-lead", leads, "2m", 0, nil, "want a duration from 0 to 1m"},
		{"-lead", leads, "standalone=fast", 0, nil, "want a duration from 0 to 1m"},
	}
	for _, tt := range tests {
		t.Run(tt.flag+" "+tt.in, func(t *testing.T) {
			all, own, err := tt.parse(tt.in, tops)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				assert.True(t, strings.HasPrefix(err.Error(), tt.flag+": "), "names the flag")
				assert.ErrorIs(t, err, ErrPlan)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.all, all)
			assert.Equal(t, tt.own, own)
		})
	}
	// What the plan makes of them.
	p := results.Paired{Lead: time.Second, Leads: map[string]time.Duration{"standalone": 250 * time.Millisecond}}
	assert.Equal(t, time.Second, p.LeadOf("nginx-http"))
	assert.Equal(t, 250*time.Millisecond, p.LeadOf("standalone"))
}

func TestParseList(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, ParseList(" a, ,b ,"))
	assert.Nil(t, ParseList(" , "))
}

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

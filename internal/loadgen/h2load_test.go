package loadgen

import (
	"context"
	"net/netip"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
	"github.com/topobench/topobench/internal/topology"
)

var netipAllow = netip.MustParseAddr("169.254.77.1")

// TestH2loadOptions: h2load's options for a cell come from the plan:
// HTTP/1.1 one request at a time without Streams, HTTP/2 with them.
func TestH2loadOptions(t *testing.T) {
	p := smallPlan("standalone")
	p.Loads = []results.Generator{results.LoadH2load}
	p.Connections = []int{30}
	g := &h2loadGen{plan: p, bin: "/usr/bin/h2load", where: apply([]Option{PinnedTo(cpuset.Of(1)), InNetns("tb-1-0-cli", netipAllow)})}
	c := p.Cells()[0]
	o := g.options(c, "http://169.254.77.1:8080/", p.Duration)
	assert.Equal(t, 30, o.Threads, "at most one thread a connection")
	assert.Equal(t, 30, o.Connections)
	assert.True(t, o.H1)
	assert.Equal(t, 1, o.Streams)
	assert.Equal(t, p.Timeout, o.Timeout)
	assert.Equal(t, "1", o.CPUs)
	assert.Equal(t, "tb-1-0-cli", o.NetNS)
	assert.Equal(t, netipAllow, o.Allow)
	require.NoError(t, o.Validate())

	p.Streams = 10
	g.plan = p
	o = g.options(c, "https://127.0.0.1:8443/", p.Duration)
	assert.False(t, o.H1)
	assert.Equal(t, 10, o.Streams)
	assert.Contains(t, o.Args(), "-m10")
}

// TestH2loadRefusesOpenLoop: h2load is closed loop for a duration.
func TestH2loadRefusesOpenLoop(t *testing.T) {
	g := &h2loadGen{plan: smallPlan("standalone"), bin: "/nonexistent/h2load"}
	for _, c := range []results.Cell{
		{Schedule: results.Schedule{Requests: 1000}},
		{Schedule: results.Schedule{Rate: 100}},
	} {
		run := results.Run{Cell: c, URL: "http://127.0.0.1:8080/"}
		_, err := g.Measure(context.Background(), c, time.Second, &run)
		require.ErrorContains(t, err, "h2load runs closed loop for a duration")
	}
}

// TestH2loadGenerator: the real h2load through the Generator against the
// real cmd/hello's HTTPS listener, over HTTP/2 and HTTP/1.1, a second
// each: requests answered, none failed, the streams in the record.
func TestH2loadGenerator(t *testing.T) {
	bin := testenv.HelloBin(t)
	if _, err := exec.LookPath("h2load"); err != nil {
		t.Fatalf("h2load not installed (apt-get install nghttp2-client): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pair, err := tlscert.Generate(t.TempDir(), tlscert.P256)
	require.NoError(t, err)
	l := topology.Layout{HTTP: testenv.FreeAddr(t)}
	https := testenv.FreeAddr(t)
	st, err := topology.Lookup(topology.Standalone)
	require.NoError(t, err)
	h, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: []topology.Topology{st}, GOMAXPROCS: 1, Grace: time.Second,
		ExtraArgs: []string{"-https=" + https, "-tls-cert=" + pair.Cert, "-tls-key=" + pair.Key}})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Stop()) }()

	for _, tc := range []struct {
		name     string
		streams  int
		protocol string
		record   int
	}{
		{"h2", 8, "h2", 8},
		{"h1", 0, "http/1.1", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := smallPlan("standalone")
			p.Loads, p.Connections, p.Streams = []results.Generator{results.LoadH2load}, []int{4}, tc.streams
			sess, err := NewH2load(p, "").Begin(ctx, false)
			require.NoError(t, err)
			defer func() { assert.NoError(t, sess.End()) }()
			c := results.Cell{Topology: "standalone", GOMAXPROCS: 1, Connections: 4, Load: results.LoadH2load, Rep: 1}
			url := "https://" + https + "/"
			require.NoError(t, sess.Open(ctx, "p", c, url))
			run := results.Run{Cell: c, URL: url}
			raw, err := sess.Window(ctx, "p", time.Second, &run)
			require.NoError(t, err, "%s", raw)
			require.NotNil(t, run.Figures)
			f := run.Figures
			assert.Positive(t, f.Requests)
			assert.Positive(t, f.ReqPerSec)
			assert.Zero(t, f.Errors.Total())
			assert.Equal(t, tc.protocol, f.Protocol)
			assert.Equal(t, tc.record, f.Streams)
			assert.Positive(t, f.Max)
			assert.Equal(t, "h2load", run.Command[0])
			require.NotNil(t, run.CPU)
			assert.Positive(t, run.CPU.Load.User+run.CPU.Load.System)
			assert.Contains(t, string(raw), "Application protocol: "+tc.protocol)
		})
	}
}

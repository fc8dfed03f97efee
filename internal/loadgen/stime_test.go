package loadgen

import (
	"context"
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

// TestStimeOptions: a cell's connections are s_time's processes, and the
// plan's TLS pins its version and cipher suite.
func TestStimeOptions(t *testing.T) {
	p := smallPlan("standalone-tls")
	p.Loads, p.Connections, p.Close = []results.Generator{results.LoadStime}, []int{8}, true
	p.TLS = &tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12}
	g := &stimeGen{plan: p, where: apply([]Option{PinnedTo(cpuset.Of(1)), InNetns("tb-1-0-cli", netipAllow)})}
	o := g.options(p.Cells()[0], "https://169.254.77.1:8443/", p.Duration)
	assert.Equal(t, 8, o.Procs)
	assert.Equal(t, p.Duration, o.Duration)
	assert.Equal(t, "1", o.CPUs)
	assert.Equal(t, "tb-1-0-cli", o.NetNS)
	assert.Equal(t, netipAllow, o.Allow)
	require.NoError(t, o.Validate())
	assert.Contains(t, o.Args(), "ECDHE-RSA-AES128-GCM-SHA256")
	assert.Contains(t, o.Args(), "-tls1_2")
}

// TestStimeRefusesOpenLoop: s_time is closed loop for a duration.
func TestStimeRefusesOpenLoop(t *testing.T) {
	g := &stimeGen{plan: smallPlan("standalone-tls"), bin: "/nonexistent/openssl"}
	for _, c := range []results.Cell{
		{Schedule: results.Schedule{Requests: 1000}},
		{Schedule: results.Schedule{Rate: 100}},
	} {
		run := results.Run{Cell: c, URL: "https://127.0.0.1:8443/"}
		_, err := g.Measure(context.Background(), c, time.Second, &run)
		require.ErrorContains(t, err, "s_time runs closed loop for a duration")
	}
}

// TestStimeGenerator: the real s_time through the Generator against the
// real cmd/hello's HTTPS listener, two processes for 2 s: handshakes
// made and recorded as the requests, the command and the CPU time kept.
func TestStimeGenerator(t *testing.T) {
	bin := testenv.HelloBin(t)
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl not installed (apt-get install openssl): %v", err)
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

	p := smallPlan("standalone-tls")
	p.Loads, p.Connections, p.Close, p.TLS = []results.Generator{results.LoadStime}, []int{2}, true, &tlscert.Settings{}
	sess, err := NewStime(p, "").Begin(ctx, false)
	require.NoError(t, err)
	defer func() { assert.NoError(t, sess.End()) }()
	c := results.Cell{Topology: "standalone-tls", GOMAXPROCS: 1, Connections: 2, Load: results.LoadStime, Rep: 1}
	url := "https://" + https + "/"
	require.NoError(t, sess.Open(ctx, "p", c, url))
	run := results.Run{Cell: c, URL: url}
	raw, err := sess.Window(ctx, "p", 2*time.Second, &run)
	require.NoError(t, err, "%s", raw)
	require.NotNil(t, run.Figures)
	f := run.Figures
	assert.Positive(t, f.Requests)
	assert.Equal(t, f.Requests, f.Handshakes)
	assert.Positive(t, f.HandshakesPerSec)
	assert.Equal(t, f.ReqPerSec, f.HandshakesPerSec)
	assert.Equal(t, []string{"openssl", "s_time", "-connect", https}, run.Command[:4])
	require.NotNil(t, run.CPU)
	assert.Positive(t, run.CPU.Load.User+run.CPU.Load.System)
	assert.Contains(t, string(raw), "bytes read per connection")
}

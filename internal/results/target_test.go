package results

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/topology"
)

func TestTargetFile(t *testing.T) {
	for _, tc := range []struct{ name, target, want string }{
		{"Go", TargetGo, TargetGo},
		{"a named target", "java-netty", "java-netty"},
		{"a program by path", "cmd:/usr/local/bin/my-server -listen {addr}", "cmd-my-server"},
		{"a relative program", "cmd:./srv.py --port {port}", "cmd-srv.py"},
		{"spaces in a quoted program", "cmd:'/opt/bin/my server' {addr}", "cmd-my_server"},
		{"unsafe characters", "cmd:/opt/bin/sr\\$v@1 {addr}", "cmd-sr_v_1"},
		{"leading dots and underscores trimmed", "cmd:./.hidden_ {unix}", "cmd-hidden"},
		// A name that does not split as a shell's words is no command
		// target's: it stays as it is (internal/target refuses it).
		{"an open quote", "cmd:'/opt/srv {addr}", "cmd:'/opt/srv {addr}"},
		{"no program", "cmd:", "cmd:"},
		{"the prefix elsewhere", "xcmd:/bin/srv", "xcmd:/bin/srv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, TargetFile(tc.target))
		})
	}
}

func TestCommandArgv(t *testing.T) {
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"cmd:/bin/srv -l {addr}", []string{"/bin/srv", "-l", "{addr}"}},
		{`cmd:/bin/srv -name "two words" {unix}`, []string{"/bin/srv", "-name", "two words", "{unix}"}},
		{"cmd:   ", nil},
		{"cmd:'unclosed", nil},
		{"erlang", nil},
		{"", nil},
	} {
		t.Run(tc.target, func(t *testing.T) {
			assert.Equal(t, tc.want, commandArgv(tc.target))
		})
	}
}

// TestAppliesCommandTarget: a command target is measured on the paths
// that end where it listens, by the placeholders its command names.
func TestAppliesCommandTarget(t *testing.T) {
	tcp := func(top topology.Topology) bool { return top.Backend == topology.HTTPTCP }
	unix := func(top topology.Topology) bool { return top.Backend == topology.HTTPUnix }
	for _, tc := range []struct {
		name, target string
		want         func(topology.Topology) bool
	}{
		{"{addr}: TCP", "cmd:/bin/srv -listen {addr}", tcp},
		{"{port}: TCP", "cmd:/bin/srv -port={port}", tcp},
		{"{unix}: a unix socket", "cmd:/bin/srv -socket {unix}", unix},
		{"both", "cmd:/bin/srv -listen {addr} -socket {unix}", func(top topology.Topology) bool { return tcp(top) || unix(top) }},
		{"a placeholder inside a word", "cmd:/bin/srv --listen=unix:{unix}", unix},
		{"neither: no path", "cmd:/bin/srv -listen 127.0.0.1:8080", func(topology.Topology) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, top := range topology.All() {
				assert.Equal(t, tc.want(top), Applies(tc.target, top), "%s", top.Name)
			}
		})
	}
}

// TestCommandTargetCell: a command target's cells are named by its
// file-safe name, in labels and file keys alike, and its Dims value is
// that name too, while the cell keeps the whole command.
func TestCommandTargetCell(t *testing.T) {
	c := Cell{Target: "cmd:/opt/bin/api-server -listen {addr}", Topology: "nginx-http", GOMAXPROCS: 2, Connections: 100, Rep: 3}
	assert.Equal(t, "cmd-api-server-g2-nginx-http-c100-r3", c.Key())
	assert.Equal(t, "target=cmd-api-server GOMAXPROCS=2 connections=100", c.Label())
	assert.Equal(t, "cmd:/opt/bin/api-server -listen {addr}", c.TargetName())
	dims := c.Dims()
	require.NotEmpty(t, dims)
	assert.Equal(t, Dim{"target", "target", "cmd-api-server", TargetGo, "cmd-api-server"}, dims[0])
	// Go, the usual target, is in no key or label.
	g := Cell{Topology: "standalone", GOMAXPROCS: 1, Rep: 1}
	assert.Equal(t, "g1-standalone-r1", g.Key())
	assert.Equal(t, "GOMAXPROCS=1", g.Label())
}

// TestPlanCellsCommandTarget: a plan with a command target lists its
// cells on the paths it serves only, Go's on all of them.
func TestPlanCellsCommandTarget(t *testing.T) {
	p := Plan{Targets: []string{TargetGo, "cmd:/bin/srv {unix}"}, Topologies: []string{"standalone", "nginx-http", "nginx-http-unix"},
		GOMAXPROCS: []int{1}, Connections: []int{100}, Reps: 1}
	assert.Equal(t, []string{"g1-standalone-c100-r1", "g1-nginx-http-c100-r1", "g1-nginx-http-unix-c100-r1",
		"cmd-srv-g1-nginx-http-unix-c100-r1"}, keys(p.Cells()))
}

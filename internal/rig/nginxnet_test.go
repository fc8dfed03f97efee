package rig

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/netstat"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/testenv"
)

// TestNetRecord: what the servers' namespace counted over a run: the
// upstream connects where they are nginx's, the load's accepts where the
// namespace is the servers' alone, nothing where a sample was not read.
func TestNetRecord(t *testing.T) {
	before := NetSample{netstat.Counters{ListenOverflows: 10, SyncookiesSent: 1, ActiveOpens: 100, PassiveOpens: 5100}, true}
	after := NetSample{netstat.Counters{ListenOverflows: 10, SyncookiesSent: 1, ActiveOpens: 182, PassiveOpens: 5202}, true}
	n := NetRecord(before, after, true, true)
	require.NotNil(t, n)
	assert.False(t, n.Overflowed())
	require.NotNil(t, n.UpstreamOpened)
	assert.Equal(t, int64(82), *n.UpstreamOpened)
	require.NotNil(t, n.Accepted)
	assert.Equal(t, int64(20), *n.Accepted, "the load's connects: what the namespace accepted less what it opened to itself")
	assert.Nil(t, NetRecord(before, after, false, true).UpstreamOpened)
	assert.Nil(t, NetRecord(before, after, true, false).Accepted, "a shared namespace's accepts are not the load's alone")
	assert.Nil(t, NetRecord(NetSample{}, after, true, true), "not read is not zero")
}

// TestNamespaceSysctls: the namespaces take the reference tuning whatever
// the host has, a somaxconn that holds nginx's backlog, and TIME_WAIT reuse
// on the veth; the host's readings are not changed.
func TestNamespaceSysctls(t *testing.T) {
	wanted, err := preflight.ParseSysctl(strings.NewReader("net.core.somaxconn = 65535\nnet.ipv4.ip_local_port_range = 1025 65535\nnet.ipv4.tcp_tw_reuse = 2\nvm.overcommit_memory = 1\n"), "sysctl.conf")
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		host      map[string]string
		wanted    []preflight.Setting
		backlog   int
		somaxconn string
	}{
		{"reference over a default host", map[string]string{"net.core.somaxconn": "4096", "net.ipv4.ip_local_port_range": "32768 60999", "net.ipv4.tcp_tw_reuse": "2", "net.core.rmem_max": "212992"}, wanted, 5000, "65535"},
		{"backlog above the reference", map[string]string{"net.core.somaxconn": "4096"}, wanted, 70000, "70000"},
		{"no reference", map[string]string{"net.core.somaxconn": "4096"}, nil, 5000, "5000"},
		{"nothing read", nil, nil, 511, "511"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := maps.Clone(tc.host)
			got := NamespaceSysctls(tc.host, tc.wanted, tc.backlog)
			assert.Equal(t, tc.somaxconn, got["net.core.somaxconn"])
			assert.Equal(t, "1", got["net.ipv4.tcp_tw_reuse"])
			if tc.wanted != nil {
				assert.Equal(t, "1025 65535", got["net.ipv4.ip_local_port_range"])
				assert.NotContains(t, got, "vm.overcommit_memory", "not a namespace's")
			}
			if v, ok := tc.host["net.core.rmem_max"]; ok {
				assert.Equal(t, v, got["net.core.rmem_max"], "what the reference does not name stays the host's")
			}
			assert.Equal(t, before, tc.host, "the host's readings are not changed")
		})
	}
}

// TestNamespacesGetSomaxconn: a new namespace starts with the kernel's
// somaxconn (4096), which would cap nginx's backlog for -c5000; the
// sweep copies the harness's into both.
func TestNamespacesGetSomaxconn(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	p, err := netns.Create(ctx, netns.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	read := func() string {
		out, err := exec.Command("ip", "netns", "exec", p.Server, "cat", "/proc/sys/net/core/somaxconn").Output()
		require.NoError(t, err)
		return strings.TrimSpace(string(out))
	}
	require.Equal(t, "4096", read(), "a new namespace's own")
	require.NoError(t, copySysctls(ctx, p.Server, results.ReadSysctls([]string{"net.core.somaxconn"})))
	host, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	require.NoError(t, err)
	assert.Equal(t, strings.TrimSpace(string(host)), read(), "the harness's")
	require.NoError(t, copySysctls(ctx, p.Server, map[string]string{"net.core.somaxconn": "8192"}))
	assert.Equal(t, "8192", read())
}

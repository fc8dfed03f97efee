package loadgen

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

func TestWindowServersCPU(t *testing.T) {
	const path = "/sys/fs/cgroup/cpuacct/g/cpuacct.usage"
	for _, tc := range []struct {
		name string
		rs   []load.CounterReading
		want time.Duration
		err  string
	}{
		{"v1", []load.CounterReading{{Path: path, Start: "1000000000", End: "1740000000"}}, 740 * time.Millisecond, ""},
		{"v2", []load.CounterReading{{Path: path, Start: "usage_usec 10\nuser_usec 5", End: "usage_usec 30\nuser_usec 5"}}, 20 * time.Microsecond, ""},
		{"unread", []load.CounterReading{{Path: path, Error: "no such file"}}, 0, "no such file"},
		{"missing", nil, 0, "did not read"},
		{"backwards", []load.CounterReading{{Path: path, Start: "20", End: "10"}}, 0, "went back"},
		{"garbage", []load.CounterReading{{Path: path, Start: "x", End: "10"}}, 0, "start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := windowServersCPU(tc.rs, path)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
		})
	}
}

// TestCountersFill: the servers' CPU time over a window from the
// session's readings: the group's total, and where the parts were read,
// nginx's and the backend's, each exact total divided between user and
// system time as the kernel's ticks divide it.
func TestCountersFill(t *testing.T) {
	rs := []load.CounterReading{
		{Path: "/g", Start: "0", End: "300000000"},
		{Path: "/g/n", Start: "0", End: "100000000"}, {Path: "/g/n/u", Start: "0", End: "30"}, {Path: "/g/n/s", Start: "0", End: "10"},
		{Path: "/g/s", Start: "0", End: "200000000"}, {Path: "/g/s/u", Start: "0", End: "0"}, {Path: "/g/s/s", Start: "0", End: "0"},
	}
	parts := Counters{Total: "/g", Nginx: [3]string{"/g/n", "/g/n/u", "/g/n/s"}, Server: [3]string{"/g/s", "/g/s/u", "/g/s/s"}}
	assert.Equal(t, []string{"/g", "/g/n", "/g/n/u", "/g/n/s", "/g/s", "/g/s/u", "/g/s/s"}, parts.Files())
	assert.Empty(t, Counters{}.Files())

	var cpu results.CPU
	require.NoError(t, parts.fill(rs, &cpu, time.Second))
	require.NotNil(t, cpu.Servers)
	assert.InDelta(t, 0.3, cpu.Servers.Seconds, 1e-9)
	assert.Equal(t, results.SpanWindow, cpu.Servers.Span)
	assert.Equal(t, time.Second, cpu.Servers.Window)
	assert.Equal(t, results.SpanWindow, cpu.PartsSpan)
	assert.InDelta(t, 0.075, cpu.Nginx.User, 1e-9)
	assert.InDelta(t, 0.025, cpu.Nginx.System, 1e-9)
	assert.InDelta(t, 0.2, cpu.Server.User, 1e-9, "no ticks: the total is user time")
	assert.Zero(t, cpu.Server.System)

	var total results.CPU
	require.NoError(t, Counters{Total: "/g"}.fill(rs, &total, time.Second))
	assert.Nil(t, total.Nginx, "no parts read")
	assert.Empty(t, total.PartsSpan)

	var none results.CPU
	require.NoError(t, Counters{}.fill(rs, &none, time.Second))
	assert.Nil(t, none.Servers, "no group: nothing from the session")
	require.ErrorContains(t, Counters{Total: "/missing"}.fill(rs, &none, time.Second), "did not read /missing")
}

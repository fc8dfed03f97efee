package netstat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/netstat"
	"github.com/topobench/topobench/internal/testenv"
)

func parseFile(t *testing.T, name string) map[string]int64 {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	defer f.Close()
	m, err := netstat.Parse(f)
	require.NoError(t, err)
	return m
}

// TestParseCaptured reads /proc/net/netstat and /proc/net/snmp as a 6.18
// kernel wrote them: the host's (no overflow), and a fresh namespace's
// after one 3 s wrk -t100 -c5000 run through nginx-http with nginx's
// default backlog of 511 (somaxconn 8192).
func TestParseCaptured(t *testing.T) {
	for _, tc := range []struct {
		dir  string
		want netstat.Counters
	}{
		{"", netstat.Counters{ActiveOpens: 1530, PassiveOpens: 1495}},
		{"storm", netstat.Counters{ListenOverflows: 4022, ListenDrops: 4022, SyncookiesSent: 965, ActiveOpens: 10435, PassiveOpens: 10435}},
	} {
		t.Run("captured"+tc.dir, func(t *testing.T) {
			ns := parseFile(t, filepath.Join(tc.dir, "netstat.txt"))
			snmp := parseFile(t, filepath.Join(tc.dir, "snmp.txt"))
			assert.Contains(t, ns, "IpExtInOctets", "the second pair of lines")
			assert.Equal(t, int64(-1), snmp["TcpMaxConn"], "the one signed counter")
			c, err := netstat.FromMaps(ns, snmp)
			require.NoError(t, err)
			assert.Equal(t, tc.want, c)
		})
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"no prefix", "TcpExt ListenOverflows\n", `line 1: no "Prefix:"`},
		{"values of another prefix", "TcpExt: A B\nIpExt: 1 2\n", `line 2: values for "IpExt" after the names of "TcpExt"`},
		{"short values", "TcpExt: A B\nTcpExt: 1\n", "line 2: 1 values for 2 names of TcpExt"},
		{"not a number", "TcpExt: A\nTcpExt: x\n", `line 2: TcpExtA: "x" is not a number`},
		{"names alone", "TcpExt: A B\n", "names of TcpExt without values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := netstat.Parse(strings.NewReader(tc.in))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
	_, err := netstat.FromMaps(map[string]int64{"TcpExtListenOverflows": 1})
	require.ErrorIs(t, err, netstat.ErrMissing)
}

func TestSub(t *testing.T) {
	a := netstat.Counters{ListenOverflows: 10, ListenDrops: 12, SyncookiesSent: 3, ActiveOpens: 100, PassiveOpens: 50}
	b := netstat.Counters{ListenOverflows: 4, ListenDrops: 5, SyncookiesSent: 1, ActiveOpens: 60, PassiveOpens: 20}
	assert.Equal(t, netstat.Counters{ListenOverflows: 6, ListenDrops: 7, SyncookiesSent: 2, ActiveOpens: 40, PassiveOpens: 30}, a.Sub(b))
}

// TestReadCountsAnOverflow fills a real listener's accept queue (backlog
// 0, nobody accepting) with a burst of connects and reads the overflows
// from /proc through this process's pid.
func TestReadCountsAnOverflow(t *testing.T) {
	if testing.Short() {
		t.Skip("opens sockets")
	}
	fsys := netstat.FS("/proc")
	before, err := fsys.Read(os.Getpid())
	require.NoError(t, err)
	addr, err := testenv.ListenStorm(0, 20)
	require.NoError(t, err)
	after, err := fsys.Read(os.Getpid())
	require.NoError(t, err)
	d := after.Sub(before)
	assert.Positive(t, d.ListenOverflows, "20 connects into a full queue at %s", addr)
	assert.GreaterOrEqual(t, d.ListenDrops, d.ListenOverflows)
	assert.GreaterOrEqual(t, d.ActiveOpens, int64(1))
}

package swarm

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/load"
)

// The testdata/ files are real output of the docker CLI 28.2 against
// Debian's engine 20.10 on the two-node test swarm; `go test -run
// TestSwarm -update` refreshes most of them (service-ps-{complete,fail,
// pend,noimg} and their task-inspect files were captured by hand with the
// commands in parse.go).

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseSwarmInfo(t *testing.T) {
	si, err := ParseSwarmInfo(open(t, "swarm-info.json"))
	require.NoError(t, err)
	assert.Equal(t, "active", si.LocalNodeState)
	assert.True(t, si.ControlAvailable)
	assert.NotEmpty(t, si.NodeID)
	assert.True(t, strings.HasPrefix(si.NodeAddr, "169.254."))

	si, err = ParseSwarmInfo(strings.NewReader(`{"NodeID":"","NodeAddr":"","LocalNodeState":"inactive","ControlAvailable":false,"Error":"","RemoteManagers":null}`))
	require.NoError(t, err)
	assert.Equal(t, "inactive", si.LocalNodeState)
	_, err = ParseSwarmInfo(strings.NewReader("Cannot connect"))
	assert.Error(t, err)
}

func TestParseNodeList(t *testing.T) {
	ns, err := ParseNodeList(open(t, "node-ls.jsonl"))
	require.NoError(t, err)
	require.Len(t, ns, 2)
	assert.True(t, ns[0].Self)
	assert.Equal(t, "Leader", ns[0].ManagerStatus)
	assert.False(t, ns[1].Self)
	assert.Empty(t, ns[1].ManagerStatus)
	for _, n := range ns {
		assert.Equal(t, "Ready", n.Status)
		assert.Equal(t, "Active", n.Availability)
		assert.Len(t, n.ID, 25)
	}
	// Older CLIs print Self as a string.
	ns, err = ParseNodeList(strings.NewReader(`{"ID":"a","Self":"true"}` + "\n\n" + `{"ID":"b","Self":"false"}`))
	require.NoError(t, err)
	assert.True(t, ns[0].Self)
	assert.False(t, ns[1].Self)
	_, err = ParseNodeList(strings.NewReader("ID HOSTNAME\n"))
	assert.ErrorContains(t, err, "line 1")
}

func TestParseNodeInspect(t *testing.T) {
	ns, err := ParseNodeInspect(open(t, "node-inspect.json"))
	require.NoError(t, err)
	require.Len(t, ns, 2)
	mgr, wrk := ns[0], ns[1]
	assert.True(t, mgr.Manager)
	assert.False(t, wrk.Manager)
	assert.Equal(t, []cluster.Role{cluster.RoleLoad}, mgr.Roles)
	assert.Equal(t, []cluster.Role{cluster.RoleServer}, wrk.Roles)
	assert.True(t, mgr.Ready && wrk.Ready)
	assert.Regexp(t, `^169\.254\.\d+\.1$`, mgr.Addr)
	assert.Regexp(t, `^169\.254\.\d+\.2$`, wrk.Addr)
	assert.Equal(t, "vm", wrk.Hostname)

	// A drained node is not ready; a manager reporting 0.0.0.0 is
	// reached at its ManagerStatus address.
	ns, err = ParseNodeInspect(strings.NewReader(`[{"ID":"x","Spec":{"Labels":{"topobench.role":"server,load,gpu"},"Role":"manager","Availability":"drain"},
		"Description":{"Hostname":"h"},"Status":{"State":"ready","Addr":"0.0.0.0"},"ManagerStatus":{"Leader":true,"Addr":"10.0.0.5:2377"}}]`))
	require.NoError(t, err)
	assert.False(t, ns[0].Ready)
	assert.Equal(t, "10.0.0.5", ns[0].Addr)
	assert.Equal(t, []cluster.Role{cluster.RoleServer, cluster.RoleLoad}, ns[0].Roles)
	_, err = ParseNodeInspect(strings.NewReader("[]\n"))
	assert.NoError(t, err)
	_, err = ParseNodeInspect(strings.NewReader("Error: No such node: x"))
	assert.Error(t, err)
}

func TestParseServicePS(t *testing.T) {
	for _, tc := range []struct {
		file, state, err, service string
		terminal, started         bool
	}{
		{"service-ps-complete.jsonl", "complete", "", "tbexp-job1", true, true},
		{"service-ps-fail.jsonl", "failed", "task: non-zero exit (2)", "tbexp-fail", true, true},
		{"service-ps-pend.jsonl", "pending", "no suitable node (scheduling constraints not satisfied on 2 nodes)", "tbexp-pend", false, false},
		{"service-ps-noimg.jsonl", "rejected", "No such image: topobench/nosuch:tag", "tbexp-noimg", true, true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			es, err := ParseServicePS(open(t, tc.file))
			require.NoError(t, err)
			require.Len(t, es, 1)
			e := es[0]
			assert.Equal(t, tc.state, e.State())
			assert.Equal(t, tc.err, e.Error)
			assert.Equal(t, tc.service, e.Service())
			assert.Equal(t, tc.terminal, Terminal(e.State()))
			assert.Equal(t, tc.started, Started(e.State()))
			assert.Len(t, e.ID, 25)
		})
	}
	es, err := ParseServicePS(open(t, "service-ps-report.jsonl"))
	require.NoError(t, err)
	require.Len(t, es, 2)
	assert.Equal(t, "tb-capture-job", es[0].Service())
	assert.Equal(t, "tb-capture-srv", es[1].Service())
	assert.Equal(t, "running", es[1].State())
	assert.True(t, Started(es[1].State()))
	assert.False(t, Terminal(es[1].State()))
}

func TestParseTaskInspect(t *testing.T) {
	for _, tc := range []struct {
		file, state, err string
		exit             int
	}{
		{"task-inspect-complete.json", "complete", "", 0},
		{"task-inspect-fail.json", "failed", "task: non-zero exit (2)", 2},
		{"task-inspect-pend.json", "pending", "no suitable node (scheduling constraints not satisfied on 2 nodes)", 0},
		{"task-inspect-noimg.json", "rejected", "No such image: topobench/nosuch:tag", 0},
		{"task-inspect-report.json", "complete", "", 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			ts, err := ParseTaskInspect(open(t, tc.file))
			require.NoError(t, err)
			require.Len(t, ts, 1)
			assert.Equal(t, tc.state, ts[0].State)
			assert.Equal(t, tc.err, ts[0].Err)
			assert.Equal(t, tc.exit, ts[0].ExitCode)
			assert.NotEmpty(t, ts[0].ServiceID)
			assert.False(t, ts[0].Timestamp.IsZero())
			if tc.state != "pending" {
				assert.NotEmpty(t, ts[0].NodeID)
			}
		})
	}
}

func TestParseServiceList(t *testing.T) {
	ls, err := ParseServiceList(open(t, "service-ls-capture.jsonl"))
	require.NoError(t, err)
	require.Len(t, ls, 2)
	assert.Equal(t, "tb-capture-job", ls[0].Name)
	assert.Equal(t, "replicated job", ls[0].Mode)
	assert.Equal(t, "replicated", ls[1].Mode)
	ls, err = ParseServiceList(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, ls)
}

func TestParseSystemTime(t *testing.T) {
	tm, err := ParseSystemTime(open(t, "system-time.json"))
	require.NoError(t, err)
	assert.Equal(t, 2026, tm.Year())
	assert.NotZero(t, tm.Nanosecond())
	_, err = ParseSystemTime(strings.NewReader(`"yesterday"`))
	assert.Error(t, err)
}

// TestLogsCarryReport: a job's report comes back through `docker service
// logs`, with or without the context prefix, exactly.
func TestLogsCarryReport(t *testing.T) {
	raw, err := load.ReadReport(open(t, "service-logs-report-raw.txt"))
	require.NoError(t, err)
	pre, err := load.ReadReport(open(t, "service-logs-report.txt"))
	require.NoError(t, err)
	assert.Equal(t, raw.Summary, pre.Summary)
	assert.True(t, raw.Histogram.Equals(pre.Histogram))
	assert.Equal(t, raw.Summary.Requests, raw.Histogram.TotalCount())
	assert.Positive(t, raw.Summary.Requests)
	assert.False(t, raw.Summary.StartAt.IsZero())
	assert.Less(t, raw.Summary.StartSkew(), time.Second)

	lines, err := ParseLogLines(open(t, "service-logs-report.txt"))
	require.NoError(t, err)
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l.Task, "tb-capture-job.0."), l.Task)
		assert.Equal(t, "vm", l.Node)
		assert.True(t, strings.HasPrefix(l.Text, "topobench-"), l.Text)
	}
	// --raw lines have no context.
	b, err := os.ReadFile(filepath.Join("testdata", "service-logs-report-raw.txt"))
	require.NoError(t, err)
	lines, err = ParseLogLines(bytes.NewReader(b))
	require.NoError(t, err)
	for _, l := range lines {
		assert.Empty(t, l.Task)
		assert.True(t, strings.HasPrefix(l.Text, "topobench-"))
	}
	// A failed job's log: stderr's one line, no report.
	_, err = load.ReadReport(open(t, "service-logs-fail-stderr.txt"))
	assert.ErrorIs(t, err, load.ErrNoReport)
}

package rig

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
)

// TestAccount checks the arithmetic of a run's CPU and noise on made-up
// samples of a 2-CPU machine over 10s (20s of CPU time).
func TestAccount(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	stat := func(busy, steal, idle float64) procstat.Stat {
		return procstat.Stat{All: procstat.CPUTimes{User: sec(busy), Steal: sec(steal), Idle: sec(idle)}}
	}
	t0 := time.Unix(1000, 0)
	before := Sample{at: t0, stat: stat(100, 10, 100),
		server: procstat.Times{User: sec(5)}, nginx: procstat.Times{User: sec(7)}, serverOK: true, nginxOK: true}
	tests := []struct {
		name        string
		busy, steal float64 // over the window
		flagged     string
	}{
		// ours: load 3 + server 6 + nginx 4 = 13s.
		{"quiet", 14, 0.5, ""},
		{"others", 17, 0, "others 20% > 10%"},
		{"steal", 13, 2, "steal 10% > 5%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := Sample{at: t0.Add(10 * time.Second), stat: stat(100+tt.busy, 10+tt.steal, 100+20-tt.busy-tt.steal),
				server: procstat.Times{User: sec(9), System: sec(2)}, nginx: procstat.Times{User: sec(10), System: sec(1)}, serverOK: true, nginxOK: true}
			run := results.Run{Figures: &results.Figures{Requests: 100000}, CPU: &results.CPU{Load: results.Usage{User: 1, System: 2}}}
			New(Config{Log: io.Discard}).Account(&run, before, after, cpuset.CPUSet{}, cpuset.CPUSet{})
			require.NotNil(t, run.Noise)
			assert.InDelta(t, 4, run.CPU.Server.User, 1e-9)
			assert.InDelta(t, 2, run.CPU.Server.System, 1e-9)
			assert.InDelta(t, 4, run.CPU.Nginx.Total(), 1e-9)
			assert.InDelta(t, 60, results.PerRequest(*run.CPU.Server, 100000), 1e-6, "6s over 100k requests")
			assert.InDelta(t, tt.busy, run.Noise.Busy, 1e-9)
			assert.InDelta(t, tt.busy-13, run.Noise.Others, 1e-9)
			assert.InDelta(t, tt.steal, run.Noise.Steal, 1e-9)
			assert.Equal(t, 10*time.Second, run.Noise.Window)
			assert.Equal(t, tt.flagged, run.Noise.Flagged)
		})
	}
}

// fakeCPU is a stack's CPU readings: a value, ErrNoServer, or a failure.
type fakeCPU struct {
	server, nginx       procstat.Times
	serverErr, nginxErr error
}

func (f fakeCPU) ServerCPU(context.Context) (procstat.Times, error) { return f.server, f.serverErr }
func (f fakeCPU) NginxCPU(context.Context) (procstat.Times, error)  { return f.nginx, f.nginxErr }

type fakeStat struct {
	stat procstat.Stat
	err  error
}

func (f fakeStat) Stat() (procstat.Stat, error) { return f.stat, f.err }

func TestTakeSample(t *testing.T) {
	agentDown := errors.New("nginx: asking http://nginx:7070 for CPU time: connection refused")
	for _, tt := range []struct {
		name                     string
		src                      fakeCPU
		stat                     fakeStat
		serverOK, nginxOK        bool
		serverErr, nginxErr, err error
	}{
		{"both measured", fakeCPU{server: procstat.Times{User: time.Second}, nginx: procstat.Times{System: time.Second}}, fakeStat{}, true, true, nil, nil, nil},
		{"no nginx in the stack is no failure", fakeCPU{nginxErr: stack.ErrNoServer}, fakeStat{}, true, false, nil, nil, nil},
		{"an agent that does not answer", fakeCPU{nginxErr: agentDown}, fakeStat{}, true, false, nil, agentDown, nil},
		{"no /proc/stat", fakeCPU{}, fakeStat{err: errors.New("no /proc")}, true, true, nil, nil, errors.New("no /proc")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sm := TakeSample(context.Background(), tt.stat, tt.src)
			assert.Equal(t, tt.serverOK, sm.serverOK)
			assert.Equal(t, tt.nginxOK, sm.nginxOK)
			assert.Equal(t, tt.serverErr, sm.serverErr)
			assert.Equal(t, tt.nginxErr, sm.nginxErr)
			assert.Equal(t, tt.err, sm.err)
			if tt.serverOK {
				assert.Equal(t, tt.src.server, sm.server)
			}
		})
	}
}

// TestAccountUnmeasuredServer: a server whose CPU time could not be read
// (an agent without /cpu) is not recorded as having used some, is said so
// on the log, and the rest of the run is still accounted.
func TestAccountUnmeasuredServer(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	t0 := time.Unix(1000, 0)
	before := Sample{at: t0, stat: procstat.Stat{All: procstat.CPUTimes{User: sec(100), Idle: sec(100)}},
		server: procstat.Times{User: sec(5)}, serverOK: true, nginxErr: errors.New("nginx: 404 Not Found")}
	after := Sample{at: t0.Add(10 * time.Second), stat: procstat.Stat{All: procstat.CPUTimes{User: sec(110), Idle: sec(110)}},
		server: procstat.Times{User: sec(8)}, serverOK: true, nginxErr: errors.New("nginx: 404 Not Found")}
	run := results.Run{Figures: &results.Figures{Requests: 1000}, CPU: &results.CPU{Load: results.Usage{User: 2}}}
	var log bytes.Buffer
	New(Config{Log: &log}).Account(&run, before, after, cpuset.CPUSet{}, cpuset.CPUSet{})
	assert.InDelta(t, 3, run.CPU.Server.User, 1e-9)
	assert.Nil(t, run.CPU.Nginx, "not measured: absent, not zero")
	assert.Contains(t, log.String(), "nginx CPU time not measured: nginx: 404 Not Found")
	require.NotNil(t, run.Noise)
	assert.InDelta(t, 5, run.Noise.Others, 1e-9, "busy 10 s less load 2 and server 3")

	t.Run("no /proc/stat: the servers still are", func(t *testing.T) {
		b, a := before, after
		b.err = errors.New("no /proc/stat")
		run := results.Run{Figures: &results.Figures{Requests: 1000}}
		log.Reset()
		New(Config{Log: &log}).Account(&run, b, a, cpuset.CPUSet{}, cpuset.CPUSet{})
		assert.InDelta(t, 3, run.CPU.Server.User, 1e-9)
		assert.Nil(t, run.Noise)
		assert.Contains(t, log.String(), "the machine's CPU time not measured")
	})
}

// TestSettleNeedsLocalServers: servers that are not processes of this
// harness (agents, or none) are not waited for: no settle record rather
// than a made-up one.
func TestSettleNeedsLocalServers(t *testing.T) {
	assert.Nil(t, New(Config{Log: io.Discard}).Settle(context.Background(), elsewhere{}))
}

// TestAccountWithoutALoadRecord: a generator that recorded no CPU time
// still gets the servers' accounted, the load counted as zero.
func TestAccountWithoutALoadRecord(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before := Sample{at: t0, serverOK: true, server: procstat.Times{User: time.Second}}
	after := Sample{at: t0.Add(time.Second), serverOK: true, server: procstat.Times{User: 3 * time.Second}}
	run := results.Run{}
	New(Config{Log: io.Discard}).Account(&run, before, after, cpuset.CPUSet{}, cpuset.CPUSet{})
	require.NotNil(t, run.CPU)
	assert.InDelta(t, 2, run.CPU.Server.User, 1e-9)
	assert.Zero(t, run.CPU.Load.Total())
	require.NotNil(t, run.Noise)
	assert.Equal(t, time.Second, run.Noise.Window)
}

// TestAccountLoadShare: the load generator's CPU time over the window, as
// a share of the CPUs it is pinned to; 90% or more is load-bound, said on
// the progress line; unpinned, no share.
func TestAccountLoadShare(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before := Sample{at: t0, stat: procstat.Stat{All: procstat.CPUTimes{Idle: 100 * time.Second}}}
	after := Sample{at: t0.Add(10 * time.Second), stat: procstat.Stat{All: procstat.CPUTimes{User: 10 * time.Second, Idle: 110 * time.Second}}}
	for _, tt := range []struct {
		name  string
		cpus  cpuset.CPUSet
		load  float64 // s of CPU over the 10 s window
		share float64
		bound bool
	}{
		{"one CPU, 9.5 s", cpuset.Of(0), 9.5, 0.95, true},
		{"one CPU, 5 s", cpuset.Of(0), 5, 0.5, false},
		{"two CPUs, 9.5 s", cpuset.Of(0, 1), 9.5, 0.475, false},
		{"unpinned", cpuset.CPUSet{}, 9.5, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := results.Run{Figures: &results.Figures{Requests: 1000}, CPU: &results.CPU{Load: results.Usage{User: tt.load}}}
			New(Config{Log: io.Discard}).Account(&run, before, after, cpuset.CPUSet{}, tt.cpus)
			assert.InDelta(t, tt.share, run.LoadShare, 1e-9)
			assert.Equal(t, tt.bound, run.LoadBound())
			assert.Equal(t, tt.bound, strings.Contains(run.LoadUse(), "used 95% of its CPUs"), run.LoadUse())
		})
	}
}

// TestAccountOneSpan: a quiet machine's paired window is not flagged.
// The samples span the session's whole command (a 1 s lead, the measured
// second, a drain: 2.16 s on 2 CPUs); the servers used 1.6 s of it by
// their group's counter and the load 0.9 s, 0.52 s of it in the measured
// second. With the load's measured second alone the 0.38 s of its lead
// and drain would count as others' (11%, flagged); over the one span the
// others are 0.1 s (2%). The servers' time over the measured window, as
// the session read it, is kept with its utilization.
func TestAccountOneSpan(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	stat := func(busy, idle float64) procstat.Stat {
		return procstat.Stat{All: procstat.CPUTimes{User: sec(busy), Idle: sec(idle)}}
	}
	t0 := time.Unix(1000, 0)
	span := sec(2.16)
	before := Sample{at: t0, stat: stat(100, 100), group: sec(50), groupOK: true}
	after := Sample{at: t0.Add(span), stat: stat(102.6, 100+4.32-2.6), group: sec(51.6), groupOK: true}
	s := New(Config{Log: io.Discard})
	servers := cpuset.Of(1)
	for _, tc := range []struct {
		name    string
		call    float64
		others  float64
		flagged string
	}{
		{name: "over one span", call: 0.9, others: 0.1},
		{name: "the measured second alone", call: 0, others: 0.48, flagged: "others 11% > 10%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := results.Run{Figures: &results.Figures{Requests: 14000}, CPU: &results.CPU{
				Load: results.Usage{User: 0.4, System: 0.12}, LoadCall: tc.call,
				Servers: &results.GroupCPU{Seconds: 0.74, Span: results.SpanWindow, Window: time.Second},
			}}
			s.Account(&run, before, after, servers, cpuset.CPUSet{})
			require.NotNil(t, run.Noise)
			assert.InDelta(t, tc.others, run.Noise.Others, 1e-6)
			assert.Equal(t, tc.flagged, run.Noise.Flagged)
			g := run.CPU.Servers
			assert.Equal(t, results.SpanWindow, g.Span, "the session's reading of the measured window stands")
			assert.InDelta(t, 0.74, g.Seconds, 1e-9)
			assert.Equal(t, 1, g.CPUs)
			assert.InDelta(t, 0.74, g.Utilization, 1e-9)
			assert.InDelta(t, 52.857, g.PerRequest(run.Figures.Requests), 1e-3)
		})
	}
	// Without a session's reading, the group's time over the samples is
	// the run's.
	run := results.Run{Figures: &results.Figures{Requests: 14000}, CPU: &results.CPU{Load: results.Usage{User: 0.9}}}
	s.Account(&run, before, after, servers, cpuset.CPUSet{})
	require.NotNil(t, run.CPU.Servers)
	assert.Equal(t, results.SpanRun, run.CPU.Servers.Span)
	assert.InDelta(t, 1.6, run.CPU.Servers.Seconds, 1e-9)
	assert.Equal(t, span, run.CPU.Servers.Window)
	assert.InDelta(t, 0.7407, run.CPU.Servers.Utilization, 1e-9)
	assert.Empty(t, run.Noise.Flagged)
}

// elsewhere are servers that are no processes of this harness (an
// agent's): no pids, no CPU time.
type elsewhere struct{ fakeCPU }

func (elsewhere) String() string { return "elsewhere" }
func (elsewhere) Parity(context.Context, time.Duration) ([]parity.Result, map[string]error) {
	return nil, nil
}
func (elsewhere) Alive() error   { return nil }
func (elsewhere) Stop() error    { return nil }
func (elsewhere) ServerPid() int { return 0 }
func (elsewhere) NginxPid() int  { return 0 }

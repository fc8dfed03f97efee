package rig

import (
	"fmt"

	"github.com/topobench/topobench/internal/netstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// This file sizes nginx for the plan (its listen backlog, worker
// connections and upstream pools: internal/nginxconf does the sums, the
// stack renders them) and reads what the servers' network namespace
// counted over each measured run (internal/netstat).

const netfs = netstat.FS("/proc")

// netPid is a process in the servers' network namespace; 0 when the
// servers are not processes of this harness.
func netPid(st Servers) int {
	if pid := st.NginxPid(); pid > 0 {
		return pid
	}
	return st.ServerPid()
}

// NetSample is the servers' namespace's counters at one moment; ok is
// false when they could not be read.
type NetSample struct {
	c  netstat.Counters
	ok bool
}

// ReadNet reads the counters of st's network namespace.
func (r *Rig) ReadNet(st Servers) NetSample {
	pid := netPid(st)
	if pid <= 0 {
		return NetSample{}
	}
	c, err := netfs.Read(pid)
	if err != nil {
		fmt.Fprintf(r.Log, "warning: %v\n", err)
		return NetSample{}
	}
	return NetSample{c, true}
}

// NetRecord is what the servers' namespace counted between two samples
// of a cell's measured run; nil when either was not read. ownNS says the
// namespace is the servers' alone (-isolate netns): every connection it
// accepts then came from the load, but those its own processes opened
// to each other (nginx's upstream ones), which it counts both ways.
func NetRecord(before, after NetSample, countsUpstream, ownNS bool) *results.Net {
	if !before.ok || !after.ok {
		return nil
	}
	d := after.c.Sub(before.c)
	n := &results.Net{ListenOverflows: d.ListenOverflows, SyncookiesSent: d.SyncookiesSent}
	if countsUpstream {
		n.UpstreamOpened = new(d.ActiveOpens)
	}
	if ownNS {
		n.Accepted = new(d.PassiveOpens - d.ActiveOpens)
	}
	return n
}

// CountsUpstream reports whether the servers' TCP connects over a run
// are nginx's upstream connections of topology t, listening as l says:
// in a namespace of the run's own, where nginx is the one process that
// connects, to a server on TCP.
func (r *Rig) CountsUpstream(t topology.Topology, l topology.Layout) bool {
	if !r.Isolated() || !t.ViaNginx() {
		return false
	}
	network, _, ok := l.BackendAddr(t)
	return ok && network == "tcp"
}

package rig

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
)

// Noise thresholds: a run is flagged when the hypervisor stole more than
// maxSteal of the machine's CPU time in its window (every CPU counted), or
// when busy time not charged to the run's processes exceeded maxOthers.
// That busy time includes other programs and interrupt work the kernel
// charges to no process, some of it the run's own packets, so a quiet
// machine still shows a few percent; 10% is a tenth of a CPU on each of
// the machine's CPUs.
const (
	maxSteal  = 0.05
	maxOthers = 0.10
)

// settleMax bounds the wait for idle servers before a cell.
const settleMax = 10 * time.Second

// ProcFS is where the machine's and the processes' times are read.
const ProcFS = procstat.FS("/proc")

// Settle waits, bounded, until the servers are idle (a previous cell's
// backlog worked off) and records how long that took and their memory.
// nil when the servers are not processes of this harness.
//
// The servers are not restarted between cells of one GOMAXPROCS value:
// what a cell leaves them holding costs the next cell no CPU, and a
// restart would add a cold start to every cell.
func (r *Rig) Settle(ctx context.Context, st Servers) *results.Settle {
	var pids []int
	for _, pid := range []int{st.ServerPid(), st.NginxPid()} {
		if pid > 0 {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil
	}
	res, err := ProcFS.WaitIdle(ctx, pids, procstat.IdleOptions{Max: settleMax})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(r.Log, "warning: waiting for idle servers: %v\n", err)
		}
		return nil
	}
	out := &results.Settle{Waited: res.Waited, Settled: res.Idle, CPUShare: res.Share}
	if pid := st.ServerPid(); pid > 0 {
		if t, err := ProcFS.Tree(pid); err == nil {
			out.ServerRSS = t.RSS()
		}
	}
	if pid := st.NginxPid(); pid > 0 {
		if t, err := ProcFS.Tree(pid); err == nil {
			out.NginxRSS = t.RSS()
		}
	}
	return out
}

// Sample is the CPU time of the servers and of the machine at one moment.
// A server's time is measured (serverOK, nginxOK) when the stack has that
// server and its time could be read, here from /proc or from the procd
// agent that runs it in another container.
type Sample struct {
	at                time.Time
	stat              procstat.Stat
	server, nginx     procstat.Times
	serverOK, nginxOK bool
	// group is the servers' control group's CPU time (groupOK when read).
	group   time.Duration
	groupOK bool
	// Beside is a duet's other side's group's CPU time: the run's own
	// too as the noise counts it, not its servers'.
	Beside time.Duration
	// err is why the machine's time could not be read; serverErr and
	// nginxErr why a server's could not (not ErrNoServer: a server the
	// stack does not have is not a failure).
	err, serverErr, nginxErr error
}

// CPUSource is where a sample's server times come from: *stack.Stack.
type CPUSource interface {
	ServerCPU(ctx context.Context) (procstat.Times, error)
	NginxCPU(ctx context.Context) (procstat.Times, error)
}

// groupSource is a CPUSource whose servers are in an accounting group:
// a *stack.Stack started with Config.Account.
type groupSource interface {
	ServersCPU(ctx context.Context) (time.Duration, error)
}

// StatFS reads the machine's times; ProcFS, or a fake in tests.
type StatFS interface{ Stat() (procstat.Stat, error) }

// TakeSample reads the machine's times from fsys and the servers' from st.
func TakeSample(ctx context.Context, fsys StatFS, st CPUSource) Sample {
	sm := Sample{at: time.Now()}
	sm.stat, sm.err = fsys.Stat()
	read := func(f func(context.Context) (procstat.Times, error), t *procstat.Times, ok *bool, errp *error) {
		v, err := f(ctx)
		switch {
		case err == nil:
			*t, *ok = v, true
		case !errors.Is(err, stack.ErrNoServer):
			*errp = err
		}
	}
	read(st.ServerCPU, &sm.server, &sm.serverOK, &sm.serverErr)
	read(st.NginxCPU, &sm.nginx, &sm.nginxOK, &sm.nginxErr)
	if g, ok := st.(groupSource); ok {
		// Without a group (stack.ErrNoAccount) /proc's figures stand.
		d, err := g.ServersCPU(ctx)
		sm.group, sm.groupOK = d, err == nil
	}
	return sm
}

// Account fills in the CPU time each process group used over the measured
// window, and what the rest of the machine did meanwhile. The load
// generator's time comes from its rusage (the generator sets run.CPU.Load).
// A server whose time was not measured at both ends is absent from the
// record (nil), and said so.
//
// The noise is accounted over one span, the samples': the machine's busy
// time, the servers' (their group's counter where they have one, else
// /proc) and the load's over the same (run.CPU.LoadCall for a session
// window, whose lead and drain lie inside the samples; else its run's).
// The servers' group time over the measured window exactly (a session
// reads it, run.CPU.Servers) is the cost per request; where no session
// read it, the samples' span is. server and load are the CPUs the
// servers and the load were pinned to (empty: not pinned).
func (r *Rig) Account(run *results.Run, before, after Sample, server, load cpuset.CPUSet) {
	if run.CPU == nil {
		run.CPU = &results.CPU{}
	}
	var ours time.Duration
	for _, part := range []struct {
		name       string
		b, a       procstat.Times
		bOK, aOK   bool
		bErr, aErr error
		into       **results.Usage
	}{
		{"server", before.server, after.server, before.serverOK, after.serverOK, before.serverErr, after.serverErr, &run.CPU.Server},
		{"nginx", before.nginx, after.nginx, before.nginxOK, after.nginxOK, before.nginxErr, after.nginxErr, &run.CPU.Nginx},
	} {
		if err := firstErr(part.bErr, part.aErr); err != nil {
			fmt.Fprintf(r.Log, "warning: %s: %s CPU time not measured: %v\n", run.Cell, part.name, err)
		}
		if !part.bOK || !part.aOK {
			continue
		}
		d := part.a.Sub(part.b)
		ours += d.Total()
		if run.CPU.PartsSpan != results.SpanWindow {
			// The parts' own counters over the window, where read, are
			// exact; /proc's ticks span the samples.
			*part.into = new(usage(d))
		}
	}
	if before.groupOK && after.groupOK {
		d := after.group - before.group
		ours = d
		if run.CPU.Servers == nil {
			run.CPU.Servers = &results.GroupCPU{Seconds: d.Seconds(), Span: results.SpanRun, Window: after.at.Sub(before.at)}
		}
	}
	ours += after.Beside - before.Beside
	if g := run.CPU.Servers; g != nil {
		g.CPUs = serverCPUs(server)
		if g.CPUs > 0 && g.Window > 0 {
			g.Utilization = math.Round(1e4*g.Seconds/(g.Window.Seconds()*float64(g.CPUs))) / 1e4
		}
	}
	if before.err != nil || after.err != nil {
		fmt.Fprintf(r.Log, "warning: %s: the machine's CPU time not measured: %v\n", run.Cell, firstErr(before.err, after.err))
		return
	}
	loadSec := run.CPU.Load.Total()
	if run.CPU.LoadCall > 0 {
		loadSec = run.CPU.LoadCall
	}
	loadT := time.Duration(loadSec * float64(time.Second))
	delta := after.stat.Sub(before.stat).All
	n := procstat.MeasureNoise(delta, loadT+ours)
	run.Noise = &results.Noise{
		Busy:   delta.Busy().Seconds(),
		Steal:  n.Steal.Seconds(),
		Others: n.Others.Seconds(),
		Window: after.at.Sub(before.at),
	}
	var flags []string
	if n.StealShare() > maxSteal {
		flags = append(flags, fmt.Sprintf("steal %.0f%% > %.0f%%", 100*n.StealShare(), 100*maxSteal))
	}
	if n.OthersShare() > maxOthers {
		flags = append(flags, fmt.Sprintf("others %.0f%% > %.0f%%", 100*n.OthersShare(), 100*maxOthers))
	}
	run.Noise.Flagged = strings.Join(flags, ", ")
	run.Noise.Speed = r.speedOf(server, load, before.at, after.at)
	// The rule: loadcap.go.
	run.LoadShare, run.LoadQuota = loadShare(loadT.Seconds(), run.Noise.Window, load.Len(), r.LoadQuota())
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// usage converts CPU times to a record's seconds.
func usage(t procstat.Times) results.Usage {
	return results.Usage{User: t.User.Seconds(), System: t.System.Seconds()}
}

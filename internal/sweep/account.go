package sweep

import (
	"context"
	"fmt"
	"strings"
	"time"

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

const procfs = procstat.FS("/proc")

// settle waits, bounded, until the servers are idle (a previous cell's
// backlog worked off) and records how long that took and their memory.
// nil when the servers are not processes of this harness.
//
// The servers are not restarted between cells of one GOMAXPROCS value. In
// two default sweeps (108 runs) net/http/fcgi grew cmd/hello to 889 MB,
// yet every server settled within 1.4 s and cmd/hello used at most 0.04 s
// of CPU during the 30 s cells it does not serve (nginx-return,
// nginx-static): its memory costs the next cell no CPU. A restart would
// instead add a cold start to every cell.
func (s *sweep) settle(ctx context.Context, st *stack.Stack) *results.Settle {
	var pids []int
	for _, pid := range []int{st.ServerPid(), st.NginxPid()} {
		if pid > 0 {
			pids = append(pids, pid)
		}
	}
	if len(pids) == 0 {
		return nil
	}
	res, err := procfs.WaitIdle(ctx, pids, procstat.IdleOptions{Max: settleMax})
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(s.Log, "warning: waiting for idle servers: %v\n", err)
		}
		return nil
	}
	out := &results.Settle{Waited: res.Waited, Settled: res.Idle, CPUShare: res.Share}
	if pid := st.ServerPid(); pid > 0 {
		if t, err := procfs.Tree(pid); err == nil {
			out.ServerRSS = t.RSS()
		}
	}
	if pid := st.NginxPid(); pid > 0 {
		if t, err := procfs.Tree(pid); err == nil {
			out.NginxRSS = t.RSS()
		}
	}
	return out
}

// sample is the CPU time of the servers and of the machine at one moment.
type sample struct {
	at            time.Time
	stat          procstat.Stat
	server, nginx procstat.Times
	err           error
}

func takeSample(st *stack.Stack) sample {
	sm := sample{at: time.Now()}
	var err error
	if sm.stat, err = procfs.Stat(); err != nil {
		sm.err = err
		return sm
	}
	if pid := st.ServerPid(); pid > 0 {
		t, err := procfs.Tree(pid)
		if err != nil {
			sm.err = fmt.Errorf("server: %w", err)
			return sm
		}
		sm.server = t.CPU()
	}
	if pid := st.NginxPid(); pid > 0 {
		t, err := procfs.Tree(pid)
		if err != nil {
			sm.err = fmt.Errorf("nginx: %w", err)
			return sm
		}
		sm.nginx = t.CPU()
	}
	return sm
}

// account fills in the CPU time each process group used over the measured
// window, and what the rest of the machine did meanwhile. The load
// generator's time comes from its rusage (the generator sets run.CPU.Load).
func (s *sweep) account(run *results.Run, before, after sample) {
	if before.err != nil || after.err != nil {
		fmt.Fprintf(s.Log, "warning: %s: CPU time not measured: %v\n", run.Cell, firstErr(before.err, after.err))
		return
	}
	if run.CPU == nil {
		run.CPU = &results.CPU{}
	}
	server, nginx := after.server.Sub(before.server), after.nginx.Sub(before.nginx)
	run.CPU.Server, run.CPU.Nginx = usage(server), usage(nginx)
	load := time.Duration((run.CPU.Load.Total()) * float64(time.Second))
	delta := after.stat.Sub(before.stat).All
	n := procstat.MeasureNoise(delta, load+server.Total()+nginx.Total())
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

// cpuNote is what a cell's progress line adds about settling, CPU per
// request and noise.
func cpuNote(run results.Run) string {
	var parts []string
	if st := run.Settle; st != nil && !st.Settled {
		parts = append(parts, fmt.Sprintf("NOT SETTLED: servers at %.0f%% of a CPU after %s", 100*st.CPUShare, roundDur(st.Waited)))
	}
	if f := run.Figures; run.CPU != nil && f != nil {
		n := f.Requests
		parts = append(parts, fmt.Sprintf("cpu/req: load %.1fus nginx %.1fus server %.1fus",
			results.PerRequest(run.CPU.Load, n), results.PerRequest(run.CPU.Nginx, n), results.PerRequest(run.CPU.Server, n)))
	}
	if run.Noise != nil && run.Noise.Flagged != "" {
		parts = append(parts, "NOISY: "+run.Noise.Flagged)
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, "; ")
}

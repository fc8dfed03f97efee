// Package rig brings up and closes what a sweep's runs stand in, around
// the measurement: the network namespaces of -isolate netns, the
// servers' accounting groups and a duet's weight groups with the counter
// files a load session reads, the speed probes, the load's CPU quota,
// the start and stop of a block's servers (one stack, or a paired
// block's two sides), nginx's network counters, and the cluster's
// servers and load. A Rig holds them for one sweep; the sweep calls its
// methods in the order of a run: prepare, start and stop each block's
// servers, sample around each measurement, close.
package rig

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/stack"
)

// Servers are a block's running servers as the sweep uses them: a
// *stack.Stack, the cluster's, or a paired block's two sides.
type Servers interface {
	fmt.Stringer
	// Parity checks every topology's answer; refused says why each
	// failing one must not be measured.
	Parity(ctx context.Context, timeout time.Duration) (rs []parity.Result, refused map[string]error)
	// Alive reports a server that exited, with its stderr tail.
	Alive() error
	Stop() error
	// ServerPid and NginxPid are processes of this harness to wait for
	// idle; 0 for none.
	ServerPid() int
	NginxPid() int
	CPUSource
}

// StartFunc starts a block's servers: StartStack, the cluster's, a fake
// in tests.
type StartFunc func(context.Context, stack.Config) (Servers, error)

// StartStack starts the servers here (stack.Start).
func StartStack(ctx context.Context, cfg stack.Config) (Servers, error) {
	st, err := stack.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// Config is what a Rig takes of the sweep.
type Config struct {
	// Dir is the results directory.
	Dir string
	// Progress and Log are the sweep's; Warn prints a warning about the
	// run's set-up and keeps it for the record.
	Progress, Log io.Writer
	Warn          func(format string, args ...any)
	// Start starts a block's servers; StartStack when nil. On a cluster
	// PrepareCluster replaces it.
	Start StartFunc
	// LoadCgroup is the control group the load generator runs in, nil
	// for none (loadcap.go).
	LoadCgroup *cgroup.Group
}

// Rig is what one sweep brought up. A nil *Rig has no namespaces,
// groups, probes or cluster.
type Rig struct {
	Config
	// pair is the run's network namespaces under -isolate netns, and
	// nsSysctls the network settings they were given.
	pair      *netns.Pair
	nsSysctls map[string]string
	// acct is where the servers' accounting groups go, nil where the
	// kernel cannot; group is the current block's (groups.go).
	acct  *cgroup.Hierarchy
	group *cgroup.Group
	// parts are nginx's and the backend's groups inside group, where
	// the servers' time is split; nil otherwise.
	parts [2]*cgroup.Group
	// standaloneCounters are the counter files of the current block's
	// standalone side, where it has one (sides.go).
	standaloneCounters loadgen.Counters
	// weights is where a duet's weight groups go (cpu controller), nil
	// for other designs.
	weights *cgroup.Hierarchy
	// probes are the speed probes under -speed-probe (speedprobe.go).
	probes *speedProbes
	// cl is the cluster's part of a run on one (cluster.go).
	cl *clusterRun
	// notedRunning says the note on a running service's CPU was printed
	// (running.go).
	notedRunning bool
}

// New is a rig with nothing up yet.
func New(c Config) *Rig {
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Warn == nil {
		log := c.Log
		c.Warn = func(format string, args ...any) { fmt.Fprintf(log, "warning: "+format+"\n", args...) }
	}
	if c.Start == nil {
		c.Start = StartStack
	}
	return &Rig{Config: c}
}

// StartServers starts a block's servers with cfg, in an accounting group
// of their own where the kernel can (cfg.Account and the parts set
// here); on an error the group goes. A running service's block has no
// group (running.go).
func (r *Rig) StartServers(ctx context.Context, cfg stack.Config) (Servers, error) {
	if runningService(cfg) {
		// Its processes stay in their owner's groups: a group of nginx
		// alone would pass for the servers'; /proc has both.
		r.noteRunning(cfg)
		return r.Start(ctx, cfg)
	}
	cfg.Account = r.newServersGroup()
	cfg.NginxPart, cfg.ServerPart = r.parts[0], r.parts[1]
	st, err := r.Start(ctx, cfg)
	if err != nil {
		r.removeServersGroup()
		return nil, err
	}
	return st, nil
}

// Stop stops a block's servers and removes their groups.
func (r *Rig) Stop(st Servers) {
	if err := st.Stop(); err != nil {
		r.Warn("%v", err)
	}
	r.removeServersGroup()
}

package rig

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/topology"
)

// Standalone's own process. A block of the paired designs can run
// standalone's server as a process of its own (results.Paired.Own, the
// duet always): the topology side is the block's servers, every
// topology's nginx and its own cmd/hello; the standalone side is a
// second cmd/hello (or target) serving standalone alone, in an
// accounting group of its own. So each path is measured as it would be
// deployed, a service in a process of its own: in one process,
// standalone's kept connections and a backend's (net/http/fcgi keeps a
// 64 KiB record buffer for each of nginx's) share one heap, and each
// one's collections scan the other's. The A/A then compares the two
// sides' standalone servers, its roles swapped from one half of its
// pairs to the other. A duet also gives each side a weight group of
// equal CPU weight (the sweep's duet).

// TwoSides is a block's standalone side beside its topology side, and
// the groups of both.
type TwoSides struct {
	// Servers are the topology side: every topology of the block.
	Servers
	// Standalone is standalone's own cmd/hello; Layout is where it
	// listens.
	Standalone Servers
	Layout     topology.Layout
	// Counters are each side's counter files, standalone's first; empty
	// where a side has none.
	Counters [2]loadgen.Counters
	// groups are the standalone side's accounting and weight groups and
	// the topology side's weight group, removed when the block stops.
	groups []*cgroup.Group
}

func (d *TwoSides) String() string {
	return fmt.Sprintf("standalone side: %s; topology side: %s", d.Standalone, d.Servers)
}

func (d *TwoSides) Alive() error {
	return errors.Join(d.Servers.Alive(), d.Standalone.Alive())
}

// Stop stops both sides, then removes the groups they were in.
func (d *TwoSides) Stop() error {
	err := errors.Join(d.Servers.Stop(), d.Standalone.Stop())
	for _, g := range d.groups {
		err = errors.Join(err, g.Remove(5*time.Second))
	}
	return err
}

// poolUser is a stack that readies nginx's upstream pools for a
// topology's load (*stack.Stack).
type poolUser interface {
	UsePool(ctx context.Context, t topology.Topology) (reloaded bool, err error)
}

// UsePool is the topology side's (stack.Stack.UsePool).
func (d *TwoSides) UsePool(ctx context.Context, t topology.Topology) (bool, error) {
	if pu, ok := d.Servers.(poolUser); ok {
		return pu.UsePool(ctx, t)
	}
	return false, nil
}

// standaloneGroupPrefix names the standalone side's groups, beside
// serversGroupPrefix of the topology side's.
const standaloneGroupPrefix = "topobench-standalone-"

// StartSides starts the standalone side of a block whose topology side
// st runs already, and returns the block's servers as both. cfg is the
// standalone side's stack: standalone alone, at the block's GOMAXPROCS,
// target and CPUs, with the block's layout, which StartSides moves to
// sockets and a port of the side's own, in the namespaces and groups of
// the rig. weighted gives each side a group of the cpu controller of
// equal weight (the duet). On an error both sides are stopped, the
// topology side by stop.
func (r *Rig) StartSides(ctx context.Context, cfg stack.Config, st Servers, weighted bool, stop func(Servers)) (*TwoSides, error) {
	if weighted && r.weights == nil {
		stop(st)
		return nil, plan.Errorf(plan.Design, "duet: the servers' two sides need the cpu controller's groups")
	}
	d := &TwoSides{Servers: st}
	// On failure both sides stop, then their groups go.
	fail := func(err error) (*TwoSides, error) {
		if d.Standalone != nil {
			_ = d.Standalone.Stop()
		}
		stop(st)
		for _, g := range d.groups {
			_ = g.Remove(5 * time.Second)
		}
		return nil, err
	}
	name := fmt.Sprint(standaloneGroupPrefix, os.Getpid())
	if r.acct != nil {
		g, err := cgroup.NewAccount(*r.acct, name)
		if err != nil {
			return fail(fmt.Errorf("standalone's accounting group: %w", err))
		}
		cfg.Account = g
		d.groups = append(d.groups, g)
	}
	if weighted {
		var err error
		if cfg.Weight, err = r.weighSides(d, cfg.Account, name); err != nil {
			return fail(err)
		}
	}
	var err error
	if cfg.Layout, err = r.standaloneLayout(cfg.Layout); err != nil {
		return fail(err)
	}
	cfg.Dir, cfg.NetNS, cfg.ClientNetNS = filepath.Join(r.Dir, "standalone-side"), r.ServerNS(), r.ClientNS()
	a, err := r.Start(ctx, cfg)
	if err != nil {
		return fail(fmt.Errorf("starting standalone's side: %w", err))
	}
	d.Standalone, d.Layout = a, cfg.Layout
	top := cfg.Topologies[0]
	if _, refused := a.Parity(ctx, 5*time.Second); refused[top.Name] != nil {
		return fail(fmt.Errorf("standalone's side: parity check: %w", refused[top.Name]))
	}
	d.Counters = [2]loadgen.Counters{r.aloneCounters(cfg.Account), r.topologyCounters()}
	r.standaloneCounters = d.Counters[0]
	if weighted {
		fmt.Fprintf(r.Progress, "duet: standalone's side %s; each side in a group of CPU weight %s on the servers' CPUs\n", a, weightNote(cfg.Weight))
	} else {
		fmt.Fprintf(r.Progress, "standalone's side: %s, a process of its own\n", a)
	}
	return d, nil
}

// standaloneLayout is where the standalone side listens: the block's
// layout l with sockets under sock-standalone and a port of its own.
func (r *Rig) standaloneLayout(l topology.Layout) (topology.Layout, error) {
	sock, err := filepath.Abs(filepath.Join(r.Dir, "sock-standalone"))
	if err != nil {
		return l, err
	}
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return l, fmt.Errorf("creating socket directory: %w", err)
	}
	l.FCGIUnix, l.FastUnix, l.HTTPUnix = filepath.Join(sock, "fcgi.sock"), filepath.Join(sock, "fast.sock"), filepath.Join(sock, "http.sock")
	if l.HTTP, err = standalonePort(l.HTTP, 18080); err != nil {
		return l, err
	}
	if l.HTTPS != "" {
		if l.HTTPS, err = standalonePort(l.HTTPS, 18443); err != nil {
			return l, err
		}
	}
	return l, nil
}

// weighSides gives a duet's two sides groups of equal CPU weight: the
// standalone side's (its accounting group acct where the cpu controller
// shares its hierarchy, else a group named name), which it returns, and
// the topology side's, whose running servers move into it.
func (r *Rig) weighSides(d *TwoSides, acct *cgroup.Group, name string) (*cgroup.Group, error) {
	weight := acct
	if acct == nil || r.acct.Root != r.weights.Root {
		g, err := cgroup.NewWeighted(*r.weights, name)
		if err != nil {
			return nil, fmt.Errorf("standalone's weighted group: %w", err)
		}
		weight = g
		d.groups = append(d.groups, g)
	} else if err := acct.SetDefaultWeight(); err != nil {
		return nil, err
	}
	// The topology side's servers move into a weight group of their
	// own, unless their accounting group is in the cpu hierarchy too;
	// what nginx forks later (a reload's workers) is born there.
	tw, err := r.topologyWeight()
	if err != nil {
		return nil, err
	}
	if tw != nil {
		if tw != r.group {
			d.groups = append(d.groups, tw)
		}
		for _, pid := range []int{d.Servers.ServerPid(), d.Servers.NginxPid()} {
			if err := joinTree(tw, pid); err != nil {
				return nil, fmt.Errorf("placing the topology side's servers in their weight group: %w", err)
			}
		}
	}
	return weight, nil
}

// weightNote is a group's CPU weight for the progress line.
func weightNote(g *cgroup.Group) string {
	w, err := g.Weight()
	if err != nil {
		return "(unread: " + err.Error() + ")"
	}
	return fmt.Sprint(w)
}

// joinTree moves process pid and its descendants into group g; nothing
// for pid 0 (no such server).
func joinTree(g *cgroup.Group, pid int) error {
	if pid <= 0 {
		return nil
	}
	t, err := ProcFS.Tree(pid)
	if err != nil {
		return err
	}
	for _, p := range t.Procs {
		if err := g.Join(p.Pid); err != nil {
			return err
		}
	}
	return nil
}

// standalonePort is where the standalone side listens: the first port
// from "from" that is free here, on addr's host. It is below the
// ephemeral range on purpose: a port the kernel hands out can be the
// local end of one of the thousands of connections the other side's
// servers hold in their namespace, or of one in TIME_WAIT there.
func standalonePort(addr string, from int) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("the servers' address %q: %w", addr, err)
	}
	for port := from; port < from+100; port++ {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("the standalone side: no free port from %d to %d on %s", from, from+99, host)
}

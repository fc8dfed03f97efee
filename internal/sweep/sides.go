package sweep

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/loadgen"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
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
// equal CPU weight (duet.go).

// twoSides is a block's standalone side beside its topology side, and
// the groups of both.
type twoSides struct {
	// servers are the topology side: every topology of the block.
	servers
	// standalone is standalone's own cmd/hello; url is where it listens.
	standalone servers
	url        string
	// groups are the standalone side's accounting and weight groups and
	// the topology side's weight group, removed when the block stops.
	groups []*cgroup.Group
	// counters are each side's counter files, standalone's first; empty
	// where a side has none.
	counters [2]loadgen.Counters
}

func (d *twoSides) String() string {
	return fmt.Sprintf("standalone side: %s; topology side: %s", d.standalone, d.servers)
}

func (d *twoSides) Alive() error {
	return errors.Join(d.servers.Alive(), d.standalone.Alive())
}

// Stop stops both sides, then removes the groups they were in.
func (d *twoSides) Stop() error {
	err := errors.Join(d.servers.Stop(), d.standalone.Stop())
	for _, g := range d.groups {
		err = errors.Join(err, g.Remove(5*time.Second))
	}
	return err
}

// UsePool is the topology side's (stack.Stack.UsePool).
func (d *twoSides) UsePool(ctx context.Context, t topology.Topology) (bool, error) {
	if pu, ok := d.servers.(poolUser); ok {
		return pu.UsePool(ctx, t)
	}
	return false, nil
}

// side is the servers that serve pool: standalone's own process for
// standalone's pool, where it has one, else the block's (the topology
// side).
func (pb *pairedBlock) side(pool string) servers {
	if d, ok := pb.st.(*twoSides); ok && pool == analysis.Standalone {
		return d.standalone
	}
	return pb.st
}

// urlOf is where pool's load goes, for cell c: standalone's own pool to
// the standalone side, where it has one.
func (s *sweep) urlOf(pb *pairedBlock, pool string, c Cell) string {
	if d, ok := pb.st.(*twoSides); ok && pool == analysis.Standalone {
		return loadgen.WithSchedule(d.url, c.Schedule)
	}
	return s.url(c)
}

// standaloneGroupPrefix names the standalone side's groups, beside
// serversGroupPrefix of the topology side's.
const standaloneGroupPrefix = "topobench-standalone-"

// startSides starts the standalone side of a block whose topology side
// st runs already, and returns the block's servers as both; weighted
// gives each side a group of the cpu controller of equal weight (the
// duet). On an error both sides are stopped.
func (s *sweep) startSides(ctx context.Context, b Block, st servers, weighted bool) (*twoSides, error) {
	if weighted && s.weights == nil {
		s.stopBlock(st)
		return nil, errors.New("-design duet: the servers' two sides need the cpu controller's groups")
	}
	d := &twoSides{servers: st}
	// On failure both sides stop, then their groups go.
	fail := func(err error) (*twoSides, error) {
		if d.standalone != nil {
			_ = d.standalone.Stop()
		}
		s.stopBlock(st)
		for _, g := range d.groups {
			_ = g.Remove(5 * time.Second)
		}
		return nil, err
	}
	name := fmt.Sprint(standaloneGroupPrefix, os.Getpid())
	var acct *cgroup.Group
	if s.acct != nil {
		g, err := cgroup.NewAccount(*s.acct, name)
		if err != nil {
			return fail(fmt.Errorf("standalone's accounting group: %w", err))
		}
		acct = g
		d.groups = append(d.groups, g)
	}
	var weight *cgroup.Group
	if weighted {
		var err error
		if weight, err = s.weighSides(d, acct, name); err != nil {
			return fail(err)
		}
	}
	sock, err := filepath.Abs(filepath.Join(s.Dir, "sock-standalone"))
	if err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(sock, 0o755); err != nil {
		return fail(fmt.Errorf("creating socket directory: %w", err))
	}
	l := s.layout
	l.FCGIUnix, l.FastUnix, l.HTTPUnix = filepath.Join(sock, "fcgi.sock"), filepath.Join(sock, "fast.sock"), filepath.Join(sock, "http.sock")
	if l.HTTP, err = standalonePort(s.layout.HTTP); err != nil {
		return fail(err)
	}
	top := s.res.Topology(analysis.Standalone)
	a, err := s.start(ctx, stack.Config{
		Dir: filepath.Join(s.Dir, "standalone-side"), Layout: l, Topologies: []topology.Topology{top},
		GOMAXPROCS: b.GOMAXPROCS, HelloBin: s.HelloBin, CPUs: s.res.ServerCPUs,
		NetNS: s.serverNS(), ClientNetNS: s.clientNS(),
		Target: b.Target, Program: s.programs[b.Target], PoolThreads: target.DefaultPoolThreads,
		Path: s.plan.Path, Connections: s.plan.mostConnections(),
		Account: acct, Weight: weight,
	})
	if err != nil {
		return fail(fmt.Errorf("starting standalone's side: %w", err))
	}
	d.standalone = a
	d.url = withPath(l.URL(top), s.plan.Path)
	if _, refused := a.Parity(ctx, 5*time.Second); refused[top.Name] != nil {
		return fail(fmt.Errorf("standalone's side: parity check: %w", refused[top.Name]))
	}
	d.counters = [2]loadgen.Counters{s.aloneCounters(acct), s.topologyCounters()}
	s.standaloneCounters = d.counters[0]
	if weighted {
		fmt.Fprintf(s.Progress, "duet: standalone's side %s; each side in a group of CPU weight %s on the servers' CPUs\n", a, weightNote(weight))
	} else {
		fmt.Fprintf(s.Progress, "standalone's side: %s, a process of its own\n", a)
	}
	return d, nil
}

// weighSides gives a duet's two sides groups of equal CPU weight: the
// standalone side's (its accounting group acct where the cpu controller
// shares its hierarchy, else a group named name), which it returns, and
// the topology side's, whose running servers move into it.
func (s *sweep) weighSides(d *twoSides, acct *cgroup.Group, name string) (*cgroup.Group, error) {
	weight := acct
	if acct == nil || s.acct.Root != s.weights.Root {
		g, err := cgroup.NewWeighted(*s.weights, name)
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
	tw, err := s.topologyWeight()
	if err != nil {
		return nil, err
	}
	if tw != nil {
		if tw != s.group {
			d.groups = append(d.groups, tw)
		}
		for _, pid := range []int{d.servers.ServerPid(), d.servers.NginxPid()} {
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
	t, err := procfs.Tree(pid)
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
// from 18080 that is free here, on http's host. It is below the
// ephemeral range on purpose: a port the kernel hands out can be the
// local end of one of the thousands of connections the other side's
// servers hold in their namespace, or of one in TIME_WAIT there.
func standalonePort(http string) (string, error) {
	host, _, err := net.SplitHostPort(http)
	if err != nil {
		return "", fmt.Errorf("the servers' address %q: %w", http, err)
	}
	for port := 18080; port < 18180; port++ {
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			continue
		}
		ln.Close()
		return addr, nil
	}
	return "", fmt.Errorf("the standalone side: no free port from 18080 to 18179 on %s", host)
}

// Package netns gives a run two network hosts of its own: a server network
// namespace (cmd/hello, nginx) and a client namespace (the load generator),
// joined by a veth pair whose addresses exist only inside the two
// namespaces, so load crosses a real network interface instead of the
// harness's loopback and can reach nothing else. Loopback is up in both, so
// nginx's upstream hop inside the server namespace stays on loopback, as on
// a real host.
//
// Namespaces are named tb-<pid>-<n>-srv and tb-<pid>-<n>-cli after the
// process that created them. Close removes a pair; Cleanup removes the pairs
// of processes that died without closing theirs (a killed harness), so the
// next run cleans up after it. Creating namespaces needs root (or
// CAP_SYS_ADMIN and CAP_NET_ADMIN) and the ip command of iproute2.
//
// Children are started inside a namespace with proc.Options{NetNS: name}.
package netns

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/proc"
)

// Prefix starts the name of every namespace this package creates.
const Prefix = "tb-"

// The veth pair: an IPv4 link-local /30 (RFC 3927), so the addresses mean
// "this link only" and are never forwarded; they exist only inside the two
// namespaces, which have no other interface but loopback.
const (
	ServerAddr = "169.254.77.1"
	ClientAddr = "169.254.77.2"
	prefixBits = 30
	// Interface names inside the namespaces (at most 15 bytes). The veth
	// is created directly in the namespaces, so these never meet the
	// names of the harness's own interfaces.
	ServerIf = "tb-srv0"
	ClientIf = "tb-cli0"
)

// runDir is where ip netns keeps its named namespaces.
const runDir = "/run/netns"

// ErrNoNetem is returned by Create when a link delay was asked for and the
// kernel has no netem queueing discipline (CONFIG_NET_SCH_NETEM).
var ErrNoNetem = errors.New("link delay needs tc netem, and this kernel lacks sch_netem")

// ErrLeftProcesses is returned by Close when processes were still running
// inside a namespace; they are killed, and the caller should have stopped
// them first.
var ErrLeftProcesses = errors.New("processes left inside the namespace")

// Options shape the pair.
type Options struct {
	// Delay, if set, holds every packet this long on each side of the
	// veth (tc netem), so a round trip takes twice Delay.
	Delay time.Duration
}

// Pair is a created pair of namespaces.
type Pair struct {
	// Server and Client are the namespaces' names, for
	// proc.Options.NetNS and "ip netns exec".
	Server, Client string
	// ServerAddr and ClientAddr are the two ends of the veth.
	ServerAddr, ClientAddr netip.Addr
	// Delay is the one-way delay set with netem on each side (zero when
	// none).
	Delay time.Duration
	// Commands are the ip and tc commands that built the pair, for the
	// record of a run.
	Commands [][]string
	closed   bool
}

// Possible says whether this process can create namespaces, and if not,
// why: compare's default -isolate and the preflight's verdict follow it.
func Possible() (ok bool, why string) {
	if os.Geteuid() != 0 {
		return false, "creating network namespaces needs root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return false, "creating network namespaces needs the ip command (iproute2)"
	}
	return true, ""
}

// Create makes a server and a client namespace, joins them with a veth
// pair, and brings loopback and the veth up in both. On error nothing is
// left behind.
func Create(ctx context.Context, opt Options) (*Pair, error) {
	if opt.Delay < 0 {
		return nil, fmt.Errorf("link delay %s: want zero or more", opt.Delay)
	}
	p := &Pair{
		ServerAddr: netip.MustParseAddr(ServerAddr),
		ClientAddr: netip.MustParseAddr(ClientAddr),
		Delay:      opt.Delay,
	}
	if err := p.reserve(ctx); err != nil {
		return nil, err
	}
	if err := p.build(ctx, opt); err != nil {
		// The build failed: remove the namespaces (and with them the veth).
		return nil, errors.Join(err, p.Close())
	}
	return p, nil
}

// reserve adds the two namespaces under the first free sequence number of
// this process.
func (p *Pair) reserve(ctx context.Context) error {
	pid := os.Getpid()
	for n := 0; n < 1000; n++ {
		srv, cli := Name(pid, n, "srv"), Name(pid, n, "cli")
		if exists(srv) || exists(cli) {
			continue
		}
		if err := p.ip(ctx, "netns", "add", srv); err != nil {
			if exists(srv) {
				continue // taken by someone else in this process meanwhile
			}
			return fmt.Errorf("creating network namespace %s: %w", srv, err)
		}
		p.Server = srv
		if err := p.ip(ctx, "netns", "add", cli); err != nil {
			return errors.Join(fmt.Errorf("creating network namespace %s: %w", cli, err), p.Close())
		}
		p.Client = cli
		return nil
	}
	return fmt.Errorf("creating network namespaces: tb-%d-0..999 are all taken", pid)
}

func (p *Pair) build(ctx context.Context, opt Options) error {
	steps := [][]string{
		{"link", "add", ServerIf, "netns", p.Server, "type", "veth", "peer", "name", ClientIf, "netns", p.Client},
		{"-n", p.Server, "addr", "add", ServerAddr + "/" + strconv.Itoa(prefixBits), "dev", ServerIf},
		{"-n", p.Client, "addr", "add", ClientAddr + "/" + strconv.Itoa(prefixBits), "dev", ClientIf},
		{"-n", p.Server, "link", "set", "lo", "up"},
		{"-n", p.Client, "link", "set", "lo", "up"},
		{"-n", p.Server, "link", "set", ServerIf, "up"},
		{"-n", p.Client, "link", "set", ClientIf, "up"},
	}
	for _, s := range steps {
		if err := p.ip(ctx, s...); err != nil {
			return fmt.Errorf("setting up the veth between %s and %s: %w", p.Server, p.Client, err)
		}
	}
	if opt.Delay > 0 {
		// tc takes microseconds as "100us".
		d := strconv.FormatInt(opt.Delay.Microseconds(), 10) + "us"
		for _, side := range [][2]string{{p.Server, ServerIf}, {p.Client, ClientIf}} {
			if err := p.tc(ctx, "-n", side[0], "qdisc", "add", "dev", side[1], "root", "netem", "delay", d); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close stops whatever still runs inside the namespaces (with SIGKILL,
// reported as ErrLeftProcesses) and removes them; the veth goes with them.
// Closing twice is a no-op.
func (p *Pair) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	// Close also runs on an interrupted context; removal must still happen.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	for _, name := range []string{p.Server, p.Client} {
		if name == "" {
			continue
		}
		if err := remove(ctx, name); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// remove kills the processes inside the namespace and deletes it. A
// namespace that is already gone is not an error.
func remove(ctx context.Context, name string) error {
	var errs []error
	pids, err := Pids(ctx, name)
	if err != nil && exists(name) {
		errs = append(errs, err)
	}
	// ip netns pids reads each process's main thread: the harness itself
	// shows up when its main thread was left inside (the runtime keeps a
	// locked main thread instead of ending it). Never kill ourselves.
	if i := slices.Index(pids, os.Getpid()); i >= 0 {
		pids = slices.Delete(pids, i, i+1)
		errs = append(errs, fmt.Errorf("network namespace %s: this process's main thread is still inside", name))
	}
	if len(pids) > 0 {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		errs = append(errs, fmt.Errorf("network namespace %s: %w (killed pids %v)", name, ErrLeftProcesses, pids))
	}
	if err := run(ctx, "ip", "netns", "delete", name); err != nil && exists(name) {
		errs = append(errs, fmt.Errorf("removing network namespace %s: %w", name, err))
	}
	return errors.Join(errs...)
}

// Pids lists the processes running inside the named namespace.
func Pids(ctx context.Context, name string) ([]int, error) {
	var out bytes.Buffer
	if err := runOut(ctx, &out, "ip", "netns", "pids", name); err != nil {
		return nil, fmt.Errorf("listing processes in network namespace %s: %w", name, err)
	}
	var pids []int
	for _, f := range strings.Fields(out.String()) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("listing processes in network namespace %s: bad pid %q", name, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// Name is the name of namespace n of process pid; role is "srv" or "cli".
func Name(pid, n int, role string) string {
	return fmt.Sprintf("%s%d-%d-%s", Prefix, pid, n, role)
}

// ParseName returns the owner pid of a namespace named by Name; ok is false
// for any other name.
func ParseName(name string) (pid int, ok bool) {
	rest, found := strings.CutPrefix(name, Prefix)
	if !found {
		return 0, false
	}
	parts := strings.Split(rest, "-")
	if len(parts) != 3 || (parts[2] != "srv" && parts[2] != "cli") {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[0])
	if err != nil || pid <= 0 || strconv.Itoa(pid) != parts[0] {
		return 0, false
	}
	if n, err := strconv.Atoi(parts[1]); err != nil || n < 0 || strconv.Itoa(n) != parts[1] {
		return 0, false
	}
	return pid, true
}

// ParseList reads the output of "ip netns list" ("name (id: 3)" or just
// "name" per line) and returns the names.
func ParseList(r io.Reader) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) > 1 && !strings.HasPrefix(f[1], "(id:") {
			return nil, fmt.Errorf("ip netns list: line %d: unexpected %q", line, sc.Text())
		}
		names = append(names, f[0])
	}
	return names, sc.Err()
}

// List returns the names of the namespaces ip netns knows.
func List(ctx context.Context) ([]string, error) {
	var out bytes.Buffer
	if err := runOut(ctx, &out, "ip", "netns", "list"); err != nil {
		return nil, fmt.Errorf("listing network namespaces: %w", err)
	}
	return ParseList(&out)
}

// Cleanup removes the namespaces this package created for processes that
// no longer exist, killing anything still running inside them, and returns
// their names. Namespaces of live processes are left alone, whoever owns
// them.
func Cleanup(ctx context.Context) ([]string, error) {
	names, err := List(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, name := range names {
		pid, ok := ParseName(name)
		if !ok || alive(pid) {
			continue
		}
		err := remove(ctx, name)
		// Processes left in a leftover are expected: that is why it is
		// cleaned up.
		if err != nil && !errors.Is(err, ErrLeftProcesses) {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, name)
	}
	return removed, errors.Join(errs...)
}

// alive reports whether a process with this pid exists. A pid reused by an
// unrelated process keeps a leftover until that process exits: the safe
// mistake.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func exists(name string) bool {
	_, err := os.Stat(filepath.Join(runDir, name))
	return err == nil
}

func (p *Pair) ip(ctx context.Context, args ...string) error {
	p.Commands = append(p.Commands, append([]string{"ip"}, args...))
	return run(ctx, "ip", args...)
}

func (p *Pair) tc(ctx context.Context, args ...string) error {
	p.Commands = append(p.Commands, append([]string{"tc"}, args...))
	err := run(ctx, "tc", args...)
	if err == nil {
		return nil
	}
	// tc says "Specified qdisc kind is unknown." when the kernel has no
	// such discipline; its output is the only place that fact shows.
	if strings.Contains(err.Error(), "qdisc kind is unknown") {
		return fmt.Errorf("%w: %v", ErrNoNetem, err)
	}
	return fmt.Errorf("setting link delay: %w", err)
}

func run(ctx context.Context, name string, args ...string) error {
	return runOut(ctx, nil, name, args...)
}

func runOut(ctx context.Context, stdout io.Writer, name string, args ...string) error {
	p, err := proc.Start(ctx, name, args, proc.Options{Stdout: stdout, Grace: 2 * time.Second})
	if err != nil {
		return err
	}
	if err := p.Wait(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(append([]string{name}, args...), " "), err)
	}
	return nil
}

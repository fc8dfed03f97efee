package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Accounting. A group can also just count the CPU time of its processes,
// uncapped: the kernel charges every nanosecond a member runs (scheduler
// time, not 10 ms ticks) to the group, so two readings of the counter
// give a group's CPU time over exactly the span between them. The counter
// is cgroup v1's cpuacct.usage (ns, in the cpuacct controller's
// hierarchy, which may be mounted apart from cpu's) or cgroup v2's
// cpu.stat usage_usec, which every v2 group has whether or not the cpu
// controller is enabled.

// ErrNoAccounting says the machine has no CPU accounting this package can
// use.
var ErrNoAccounting = errors.New("no cgroup CPU accounting")

// FindAccounting locates CPU accounting under /sys/fs/cgroup: cgroup2
// mounted there, else a cgroup v1 hierarchy with the cpuacct controller
// (alone or as cpu,cpuacct), else the unified (cgroup2) hierarchy of a
// hybrid machine at /sys/fs/cgroup/unified. The error says what was found
// instead.
func FindAccounting() (Hierarchy, error) { return findAccounting("/sys/fs/cgroup") }

func findAccounting(base string) (Hierarchy, error) {
	t, err := fsType(base)
	if err != nil {
		return Hierarchy{}, fmt.Errorf("%w: %v", ErrNoAccounting, err)
	}
	if t == cgroup2Magic {
		return Hierarchy{Root: base, V2: true}, nil
	}
	for _, name := range []string{"cpuacct", "cpu,cpuacct", "cpuacct,cpu"} {
		dir := filepath.Join(base, name)
		if t, err := fsType(dir); err == nil && t == cgroup1Magic {
			if _, err := os.Stat(filepath.Join(dir, "cpuacct.usage")); err == nil {
				return Hierarchy{Root: dir}, nil
			}
		}
	}
	dir := filepath.Join(base, "unified")
	if t, err := fsType(dir); err == nil && t == cgroup2Magic {
		return Hierarchy{Root: dir, V2: true}, nil
	}
	return Hierarchy{}, fmt.Errorf("%w: %s is not cgroup2 and has no cgroup v1 cpuacct hierarchy nor a unified one", ErrNoAccounting, base)
}

// NewAccount creates the group name at the root of h, with no quota, to
// count its members' CPU time (Usage). An empty group of that name left
// behind is removed first. The caller removes it.
func NewAccount(h Hierarchy, name string) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup name %q: want one path element", name)
	}
	g := &Group{Dir: filepath.Join(h.Root, name), V2: h.V2}
	err := os.Mkdir(g.Dir, 0o755)
	if errors.Is(err, os.ErrExist) {
		if err := g.Remove(time.Second); err != nil {
			return nil, err
		}
		err = os.Mkdir(g.Dir, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("creating cgroup: %w", err)
	}
	return g, nil
}

// UsageFile is the file that holds the group's CPU time counter: v1
// cpuacct.usage, v2 cpu.stat (ParseUsage reads either).
func (g *Group) UsageFile() string {
	if g.V2 {
		return filepath.Join(g.Dir, "cpu.stat")
	}
	return filepath.Join(g.Dir, "cpuacct.usage")
}

// Usage is the CPU time the group's members have used since it was
// created (what a member used before it joined stays with its old group).
func (g *Group) Usage() (time.Duration, error) {
	f, err := os.Open(g.UsageFile())
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return ParseUsage(f)
}

// ParseUsage reads a group's CPU time counter: v1 cpuacct.usage (one
// number, nanoseconds) or v2 cpu.stat (its usage_usec line).
func ParseUsage(r io.Reader) (time.Duration, error) {
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if len(lines) == 1 && !strings.Contains(lines[0], " ") {
		ns, err := strconv.ParseInt(lines[0], 10, 64)
		if err != nil || ns < 0 {
			return 0, fmt.Errorf("cpuacct.usage: %q is not a count of nanoseconds", lines[0])
		}
		return time.Duration(ns), nil
	}
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "usage_usec "); ok {
			us, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || us < 0 {
				return 0, fmt.Errorf("cpu.stat: usage_usec %q is not a count of microseconds", v)
			}
			return time.Duration(us) * time.Microsecond, nil
		}
	}
	return 0, errors.New("cpu usage: neither a cpuacct.usage count nor a cpu.stat with usage_usec")
}

// Package cgroup caps the CPU time of a group of processes with the
// kernel's control groups, and reads the cap a process runs under.
//
// A Group is a control group of its own in the cpu controller's hierarchy:
// cgroup v2 (/sys/fs/cgroup mounted as cgroup2 with the cpu controller), or
// the cgroup v1 cpu hierarchy of a hybrid machine (/sys/fs/cgroup/cpu), as
// Find locates them. New creates one at the hierarchy's root with a quota
// of CPUs per period (v2 cpu.max, v1 cpu.cfs_quota_us and
// cpu.cfs_period_us), Join moves a process into it (the whole process:
// every thread, and what it starts later), Stat reads how often the kernel
// throttled it, and Remove deletes it once it is empty. Creating groups
// needs root (or a delegated hierarchy).
//
// Limit is the other direction: the tightest quota on a process's own
// group and its ancestors, the CPUs it can use at most, whoever set it (a
// container's --cpus, systemd's CPUQuota=, a Group).
//
// A group can also only count its members' CPU time (account.go):
// FindAccounting locates v1 cpuacct or v2, NewAccount creates an uncapped
// group there, Usage reads its counter (v1 cpuacct.usage, v2 cpu.stat
// usage_usec), in scheduler nanoseconds rather than /proc's 10 ms ticks.
//
// The parsers (ParseProcCgroup, ParseCPUMax, ParseStat, ParseUsage) are
// pure functions over the kernel's text.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Filesystem magic numbers (statfs f_type).
const (
	cgroup2Magic = 0x63677270
	cgroup1Magic = 0x27e0eb
)

// Hierarchy is where the cpu controller is mounted.
type Hierarchy struct {
	// Root is the mount point, e.g. /sys/fs/cgroup or /sys/fs/cgroup/cpu.
	Root string
	// V2 is true for the unified hierarchy (cpu.max), false for v1
	// (cpu.cfs_quota_us).
	V2 bool
}

// ErrNoCPUController says the machine has no cpu controller this package
// can use.
var ErrNoCPUController = errors.New("no cgroup cpu controller")

// Find locates the cpu controller under /sys/fs/cgroup: cgroup2 with
// "cpu" among its controllers, else a cgroup v1 hierarchy with the cpu
// controller (mounted alone or as cpu,cpuacct). The error says what was
// found instead.
func Find() (Hierarchy, error) { return find("/sys/fs/cgroup") }

func find(base string) (Hierarchy, error) {
	var why []string
	switch t, err := fsType(base); {
	case err != nil:
		return Hierarchy{}, fmt.Errorf("%w: %v", ErrNoCPUController, err)
	case t == cgroup2Magic:
		b, err := os.ReadFile(filepath.Join(base, "cgroup.controllers"))
		if err != nil {
			return Hierarchy{}, fmt.Errorf("%w: %v", ErrNoCPUController, err)
		}
		if hasWord(string(b), "cpu") {
			return Hierarchy{Root: base, V2: true}, nil
		}
		why = append(why, fmt.Sprintf("%s is cgroup2 without the cpu controller (controllers: %q)", base, strings.TrimSpace(string(b))))
	default:
		why = append(why, fmt.Sprintf("%s is not cgroup2", base))
	}
	for _, name := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
		dir := filepath.Join(base, name)
		if t, err := fsType(dir); err == nil && t == cgroup1Magic {
			if _, err := os.Stat(filepath.Join(dir, "cpu.cfs_quota_us")); err == nil {
				return Hierarchy{Root: dir}, nil
			}
		}
	}
	why = append(why, "and has no cgroup v1 cpu hierarchy")
	return Hierarchy{}, fmt.Errorf("%w: %s", ErrNoCPUController, strings.Join(why, " "))
}

func fsType(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Type), nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// Period is the quota's accounting period New sets (the kernel's default).
const Period = 100 * time.Millisecond

// Group is a control group this package created.
type Group struct {
	// Dir is the group's directory.
	Dir string
	// V2 says which interface its files are.
	V2 bool
	// CPUs is its quota in CPUs (quota ÷ period); 0 for an accounting
	// group (NewAccount), which has none.
	CPUs float64
}

// New creates the group name at the root of h, capped at cpus CPUs (0.2 is
// a fifth of one CPU; at least 0.01). On cgroup v2 it first enables the
// cpu controller for the root's children. The caller removes it.
func New(h Hierarchy, name string, cpus float64) (*Group, error) {
	if !(cpus >= 0.01) || math.IsInf(cpus, 1) {
		return nil, fmt.Errorf("cgroup %s: a quota of %g CPUs, want at least 0.01", name, cpus)
	}
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup name %q: want one path element", name)
	}
	if h.V2 {
		// The root is exempt from "no processes in an inner group", so
		// enabling the controller there always works for root.
		if err := write(filepath.Join(h.Root, "cgroup.subtree_control"), "+cpu"); err != nil {
			return nil, fmt.Errorf("enabling the cpu controller: %w", err)
		}
	}
	g := &Group{Dir: filepath.Join(h.Root, name), V2: h.V2, CPUs: cpus}
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating cgroup: %w", err)
	}
	quota := int64(math.Round(cpus * float64(Period/time.Microsecond)))
	period := int64(Period / time.Microsecond)
	var err error
	if g.V2 {
		err = write(filepath.Join(g.Dir, "cpu.max"), fmt.Sprintf("%d %d", quota, period))
	} else {
		// The period first: the quota is checked against it.
		err = write(filepath.Join(g.Dir, "cpu.cfs_period_us"), strconv.FormatInt(period, 10))
		if err == nil {
			err = write(filepath.Join(g.Dir, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10))
		}
	}
	if err != nil {
		_ = os.Remove(g.Dir)
		return nil, fmt.Errorf("capping cgroup %s at %g CPUs: %w", g.Dir, cpus, err)
	}
	return g, nil
}

func write(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(v)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %q to %s: %w", v, path, err)
	}
	return nil
}

// Join moves the process pid, every thread of it, into the group; what it
// starts afterwards is born there.
func (g *Group) Join(pid int) error {
	if err := write(filepath.Join(g.Dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
		return fmt.Errorf("moving process %d into cgroup: %w", pid, err)
	}
	return nil
}

// Procs lists the processes in the group.
func (g *Group) Procs() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs"))
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s/cgroup.procs: %q is not a pid", g.Dir, f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// Stat reads the group's throttling counters.
func (g *Group) Stat() (Stat, error) {
	f, err := os.Open(filepath.Join(g.Dir, "cpu.stat"))
	if err != nil {
		return Stat{}, err
	}
	defer f.Close()
	return ParseStat(f)
}

// Remove deletes the group, waiting up to wait for processes that are
// exiting to leave it; a group that still has processes after that is
// left, and the error names them.
func (g *Group) Remove(wait time.Duration) error {
	if err := removeParts(g.Dir, wait); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		err := os.Remove(g.Dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			pids, _ := g.Procs()
			return fmt.Errorf("removing cgroup %s (processes %v): %w", g.Dir, pids, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stat is the kernel's throttling counters of a group (cpu.stat).
type Stat struct {
	// Periods is how many enforcement periods had runnable tasks,
	// Throttled in how many of them the group ran out of quota, and
	// ThrottledTime how long its tasks waited for the next period in all.
	Periods, Throttled int64
	ThrottledTime      time.Duration
}

// Sub is s less an earlier reading.
func (s Stat) Sub(earlier Stat) Stat {
	return Stat{Periods: s.Periods - earlier.Periods, Throttled: s.Throttled - earlier.Throttled, ThrottledTime: s.ThrottledTime - earlier.ThrottledTime}
}

// ParseStat reads cpu.stat, v2 (throttled_usec) or v1 (throttled_time,
// in nanoseconds). A group without a quota has no throttling lines in v2:
// the zero Stat.
func ParseStat(r io.Reader) (Stat, error) {
	var s Stat
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Stat{}, fmt.Errorf("cpu.stat: %s: %q is not a number", k, v)
		}
		switch k {
		case "nr_periods":
			s.Periods = n
		case "nr_throttled":
			s.Throttled = n
		case "throttled_usec":
			s.ThrottledTime = time.Duration(n) * time.Microsecond
		case "throttled_time":
			s.ThrottledTime = time.Duration(n)
		}
	}
	return s, sc.Err()
}

// ParseCPUMax reads a v2 cpu.max ("max 100000" or "20000 100000") as CPUs
// (quota ÷ period); ok is false for no limit.
func ParseCPUMax(r io.Reader) (cpus float64, ok bool, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, false, err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, false, fmt.Errorf("cpu.max: %q, want QUOTA PERIOD", strings.TrimSpace(string(b)))
	}
	if f[0] == "max" {
		return 0, false, nil
	}
	return quotaCPUs(f[0], f[1])
}

// quotaCPUs is quota ÷ period, both in µs; a negative quota (v1's -1) is
// no limit.
func quotaCPUs(quota, period string) (float64, bool, error) {
	q, err := strconv.ParseInt(strings.TrimSpace(quota), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("cpu quota %q is not a number", quota)
	}
	p, err := strconv.ParseInt(strings.TrimSpace(period), 10, 64)
	if err != nil || p <= 0 {
		return 0, false, fmt.Errorf("cpu period %q is not a positive number", period)
	}
	if q < 0 {
		return 0, false, nil
	}
	return float64(q) / float64(p), true, nil
}

// ParseProcCgroup reads /proc/PID/cgroup and returns the process's group
// in the cpu controller's hierarchy: the v1 line that lists cpu among its
// controllers when there is one (a hybrid machine), else the v2 line
// ("0::/path"); v2 is false for a v1 path.
func ParseProcCgroup(r io.Reader) (path string, v2 bool, err error) {
	var unified string
	var haveUnified bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && ctrls == "" {
			unified, haveUnified = p, true
			continue
		}
		for _, c := range strings.Split(ctrls, ",") {
			if c == "cpu" {
				return p, false, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", false, err
	}
	if !haveUnified {
		return "", false, errors.New("/proc/PID/cgroup: no cpu controller line and no cgroup2 line")
	}
	return unified, true, nil
}

// Limit is the CPUs the process pid can use at most under the quotas of
// its group and every ancestor in h (the tightest); ok is false when none
// has a quota. A group outside what h's mount shows (another cgroup
// namespace) is read from the mount's root only.
func Limit(h Hierarchy, pid int) (cpus float64, ok bool, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	path, v2, err := ParseProcCgroup(f)
	if err != nil {
		return 0, false, err
	}
	if v2 != h.V2 {
		return 0, false, fmt.Errorf("process %d: its cpu group is cgroup v%d, the hierarchy at %s is not", pid, map[bool]int{true: 2, false: 1}[v2], h.Root)
	}
	return limitAlong(h, path)
}

// limitAlong walks from the group at path up to h's root.
func limitAlong(h Hierarchy, path string) (float64, bool, error) {
	dir := filepath.Join(h.Root, filepath.Clean("/"+path))
	if _, err := os.Stat(dir); err != nil {
		dir = h.Root
	}
	best, found := math.Inf(1), false
	for {
		cpus, ok, err := groupQuota(h, dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, false, err
		}
		if ok && cpus < best {
			best, found = cpus, true
		}
		if dir == h.Root || len(dir) <= len(h.Root) {
			break
		}
		dir = filepath.Dir(dir)
	}
	if !found {
		return 0, false, nil
	}
	return best, true, nil
}

// groupQuota reads one group's own quota (the v2 root has no cpu.max).
func groupQuota(h Hierarchy, dir string) (float64, bool, error) {
	if h.V2 {
		f, err := os.Open(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return 0, false, err
		}
		defer f.Close()
		return ParseCPUMax(f)
	}
	q, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	if err != nil {
		return 0, false, err
	}
	p, err := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil {
		return 0, false, err
	}
	return quotaCPUs(string(q), string(p))
}

// RemoveStale removes the empty groups at h's root named prefix followed
// by the pid of a process that no longer runs: what a harness that was
// killed before its Remove left behind. Groups of live processes, and
// groups that still hold processes, stay.
func RemoveStale(h Hierarchy, prefix string) error {
	entries, err := os.ReadDir(h.Root)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(rest)
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // still running
		}
		dir := filepath.Join(h.Root, e.Name())
		if err := removeParts(dir, 0); err != nil && !errors.Is(err, syscall.EBUSY) {
			errs = append(errs, err)
			continue
		}
		if err := os.Remove(dir); err != nil && !errors.Is(err, syscall.EBUSY) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

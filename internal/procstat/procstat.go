// Package procstat reads what Linux's /proc says about the CPU time and
// memory of processes and of the machine, so a run can state how much CPU
// each of its processes spent (wrk, the nginx master and workers, cmd/hello)
// and how much the rest of the machine took meanwhile:
//
//	/proc/PID/stat     a process's user and system time, parent, start time
//	/proc/PID/status   its resident set size
//	/proc/stat         the machine's time per CPU: busy, idle, steal
//	/proc/net/tcp, tcp6, unix and /proc/PID/fd
//	                   which process listens where (ListenerPid), for a
//	                   server the harness did not start
//
// A caller takes a Tree (a process and all its descendants) and a Stat (the
// machine) before and after a run, and subtracts. The parsers are pure
// functions over io.Reader; FS reads a live /proc.
package procstat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// UserHZ is the unit of every time in /proc: clock ticks per second. The
// kernel reports in USER_HZ, which is 100 on every architecture Linux
// supports today (sysconf(_SC_CLK_TCK)), whatever HZ it was built with.
const UserHZ = 100

// Ticks converts a count of clock ticks to a duration.
func Ticks(n uint64) time.Duration {
	return time.Duration(n) * (time.Second / UserHZ)
}

// Times is CPU time spent in user and in kernel mode.
type Times struct {
	User, System time.Duration
}

// Total is user plus system time.
func (t Times) Total() time.Duration { return t.User + t.System }

// Add returns t + u.
func (t Times) Add(u Times) Times { return Times{t.User + u.User, t.System + u.System} }

// Sub returns t - u.
func (t Times) Sub(u Times) Times { return Times{t.User - u.User, t.System - u.System} }

// Process is one line of /proc/PID/stat, the fields a run needs.
type Process struct {
	Pid  int
	Comm string
	// State is R, S, D, Z and so on.
	State byte
	PPid  int
	// Self is the time the process (all its threads) ran; Children is the
	// time of the children it has waited for, theirs included.
	Self, Children Times
	// Start is when the process started, in ticks since boot: with Pid it
	// identifies the process even if the pid is reused.
	Start uint64
	// Threads is the number of threads.
	Threads int
	// RSS is the resident set size in bytes, from /proc/PID/status
	// (zero when only the stat file was read).
	RSS int64
}

// CPU is the time of the process and of the children it waited for: the
// part of a process tree's time that stays with this process.
func (p Process) CPU() Times { return p.Self.Add(p.Children) }

// ParseProcess parses /proc/PID/stat. The command name is in parentheses
// and may itself hold spaces and parentheses, so the fields are counted
// from the last ')'.
func ParseProcess(r io.Reader) (Process, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Process{}, err
	}
	s := strings.TrimSpace(string(b))
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return Process{}, fmt.Errorf("no (comm) in %q", clip(s))
	}
	var p Process
	if p.Pid, err = strconv.Atoi(strings.TrimSpace(s[:open])); err != nil {
		return Process{}, fmt.Errorf("pid: %w", err)
	}
	p.Comm = s[open+1 : close]
	// f[0] is field 3 (state) in proc(5)'s numbering.
	f := strings.Fields(s[close+1:])
	if len(f) < 20 {
		return Process{}, fmt.Errorf("process %d: %d fields after comm, want at least 20", p.Pid, len(f))
	}
	field := func(n int) (uint64, error) {
		v, err := strconv.ParseUint(f[n-3], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("process %d: field %d: %w", p.Pid, n, err)
		}
		return v, nil
	}
	var v [23]uint64
	for _, n := range []int{4, 14, 15, 16, 17, 20, 22} {
		if n == 16 || n == 17 {
			// cutime and cstime are signed in the kernel's format
			// but never negative in practice.
			i, err := strconv.ParseInt(f[n-3], 10, 64)
			if err != nil || i < 0 {
				return Process{}, fmt.Errorf("process %d: field %d: bad value %q", p.Pid, n, f[n-3])
			}
			v[n] = uint64(i)
			continue
		}
		if v[n], err = field(n); err != nil {
			return Process{}, err
		}
	}
	if len(f[0]) != 1 {
		return Process{}, fmt.Errorf("process %d: bad state %q", p.Pid, f[0])
	}
	p.State = f[0][0]
	p.PPid = int(v[4])
	p.Self = Times{Ticks(v[14]), Ticks(v[15])}
	p.Children = Times{Ticks(v[16]), Ticks(v[17])}
	p.Threads = int(v[20])
	p.Start = v[22]
	return p, nil
}

// Status is what a run needs from /proc/PID/status.
type Status struct {
	Name string
	// RSS and PeakRSS (VmRSS and VmHWM) are in bytes; zero for a zombie
	// or a kernel thread, which have no memory.
	RSS, PeakRSS int64
	Threads      int
}

// ParseStatus parses /proc/PID/status.
func ParseStatus(r io.Reader) (Status, error) {
	var s Status
	sc := bufio.NewScanner(r)
	seenName := false
	for line := 1; sc.Scan(); line++ {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			return s, fmt.Errorf("line %d: no colon in %q", line, clip(sc.Text()))
		}
		v = strings.TrimSpace(v)
		var err error
		switch k {
		case "Name":
			s.Name, seenName = v, true
		case "VmRSS":
			s.RSS, err = parseKB(v)
		case "VmHWM":
			s.PeakRSS, err = parseKB(v)
		case "Threads":
			s.Threads, err = strconv.Atoi(v)
		}
		if err != nil {
			return s, fmt.Errorf("line %d: %s: %w", line, k, err)
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	if !seenName {
		return s, errors.New("no Name line")
	}
	return s, nil
}

func parseKB(v string) (int64, error) {
	n, unit, _ := strings.Cut(v, " ")
	if strings.TrimSpace(unit) != "kB" {
		return 0, fmt.Errorf("unit %q, want kB", unit)
	}
	i, err := strconv.ParseInt(n, 10, 64)
	return i << 10, err
}

// CPUTimes is one cpu line of /proc/stat.
type CPUTimes struct {
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal time.Duration
	// Guest time is already counted in User (and GuestNice in Nice).
	Guest, GuestNice time.Duration
}

// Busy is the time the CPU ran something: user, nice, system and interrupt
// handling. Idle, I/O wait and steal (time the hypervisor gave to another
// guest) are not busy.
func (c CPUTimes) Busy() time.Duration {
	return c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ
}

// Total is all the time the line accounts for.
func (c CPUTimes) Total() time.Duration {
	return c.Busy() + c.Idle + c.IOWait + c.Steal
}

// Sub returns c - d, field by field.
func (c CPUTimes) Sub(d CPUTimes) CPUTimes {
	return CPUTimes{
		c.User - d.User, c.Nice - d.Nice, c.System - d.System, c.Idle - d.Idle,
		c.IOWait - d.IOWait, c.IRQ - d.IRQ, c.SoftIRQ - d.SoftIRQ, c.Steal - d.Steal,
		c.Guest - d.Guest, c.GuestNice - d.GuestNice,
	}
}

// Stat is the CPU part of /proc/stat: the sum over all CPUs and each CPU.
type Stat struct {
	All CPUTimes
	// CPU maps a CPU number to its line; offline CPUs have none.
	CPU map[int]CPUTimes
}

// Sub returns s - t for the machine and every CPU present in both.
func (s Stat) Sub(t Stat) Stat {
	d := Stat{All: s.All.Sub(t.All), CPU: map[int]CPUTimes{}}
	for n, c := range s.CPU {
		if o, ok := t.CPU[n]; ok {
			d.CPU[n] = c.Sub(o)
		}
	}
	return d
}

// ParseStat parses the cpu lines of /proc/stat.
func ParseStat(r io.Reader) (Stat, error) {
	st := Stat{CPU: map[int]CPUTimes{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20) // the intr line is long
	seenAll := false
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		// Kernels before 2.6.33 had fewer columns; missing ones are zero.
		if len(f) < 8 {
			return st, fmt.Errorf("line %d: %d cpu columns, want at least 7", line, len(f)-1)
		}
		var v [10]time.Duration
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			n, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return st, fmt.Errorf("line %d: column %d: %w", line, i+1, err)
			}
			v[i] = Ticks(n)
		}
		c := CPUTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]}
		if f[0] == "cpu" {
			st.All, seenAll = c, true
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			return st, fmt.Errorf("line %d: bad cpu name %q", line, f[0])
		}
		st.CPU[n] = c
	}
	if err := sc.Err(); err != nil {
		return st, err
	}
	if !seenAll {
		return st, errors.New("no cpu line")
	}
	return st, nil
}

// Noise is how much of the machine a run did not have for itself.
type Noise struct {
	// Capacity is the CPU time the machine had: elapsed time on every
	// CPU, as /proc/stat counts it.
	Capacity time.Duration
	// Steal is the time the hypervisor ran something else on our CPUs.
	Steal time.Duration
	// Others is the busy time not spent by the run's processes: other
	// processes, and interrupt handling the kernel did not charge to a
	// process (some of it the run's own network traffic).
	Others time.Duration
}

// StealShare and OthersShare are Steal and Others as fractions of
// Capacity.
func (n Noise) StealShare() float64  { return share(n.Steal, n.Capacity) }
func (n Noise) OthersShare() float64 { return share(n.Others, n.Capacity) }

func share(d, of time.Duration) float64 {
	if of <= 0 {
		return 0
	}
	return float64(d) / float64(of)
}

// MeasureNoise compares the machine's time over an interval (delta, the
// difference of two Stats) with the CPU time the run's own processes spent
// in it (ours).
func MeasureNoise(delta CPUTimes, ours time.Duration) Noise {
	others := delta.Busy() - ours
	if others < 0 {
		// Process and machine times are sampled at slightly different
		// instants and rounded to ticks.
		others = 0
	}
	return Noise{Capacity: delta.Total(), Steal: delta.Steal, Others: others}
}

// Tree is a process and its descendants at one moment.
type Tree struct {
	Root int
	// Procs holds the root first, then its descendants.
	Procs []Process
}

// CPU is the time the tree has spent: every member's own time and the time
// of the children each has waited for. A worker that exits and is reaped
// during a run moves from Self to its parent's Children, so the difference
// of two Trees counts it once.
func (t Tree) CPU() Times {
	var sum Times
	for _, p := range t.Procs {
		sum = sum.Add(p.CPU())
	}
	return sum
}

// RSS is the sum of the members' resident sets (shared pages counted once
// per process).
func (t Tree) RSS() int64 {
	var sum int64
	for _, p := range t.Procs {
		sum += p.RSS
	}
	return sum
}

// FS reads a live /proc mounted at its path ("/proc").
type FS string

// Process reads /proc/PID/stat and /proc/PID/status of pid.
func (fsys FS) Process(pid int) (Process, error) {
	dir := filepath.Join(string(fsys), strconv.Itoa(pid))
	p, err := parseFile(filepath.Join(dir, "stat"), ParseProcess)
	if err != nil {
		return p, err
	}
	s, err := parseFile(filepath.Join(dir, "status"), ParseStatus)
	if err != nil {
		return p, err
	}
	p.RSS = s.RSS
	return p, nil
}

// Stat reads /proc/stat.
func (fsys FS) Stat() (Stat, error) {
	return parseFile(filepath.Join(string(fsys), "stat"), ParseStat)
}

// Tree reads pid and all its descendants. Processes that exit while it
// reads are left out; the root's exit is an error wrapping fs.ErrNotExist.
func (fsys FS) Tree(pid int) (Tree, error) {
	root, err := fsys.Process(pid)
	if err != nil {
		return Tree{}, fmt.Errorf("process %d: %w", pid, err)
	}
	entries, err := os.ReadDir(string(fsys))
	if err != nil {
		return Tree{}, err
	}
	children := map[int][]Process{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		p, err := parseFile(filepath.Join(string(fsys), e.Name(), "stat"), ParseProcess)
		if gone(err) {
			continue
		}
		if err != nil {
			return Tree{}, err
		}
		children[p.PPid] = append(children[p.PPid], p)
	}
	t := Tree{Root: pid, Procs: []Process{root}}
	for i := 0; i < len(t.Procs); i++ {
		for _, c := range children[t.Procs[i].Pid] {
			s, err := parseFile(filepath.Join(string(fsys), strconv.Itoa(c.Pid), "status"), ParseStatus)
			if gone(err) {
				continue
			}
			if err != nil {
				return Tree{}, err
			}
			c.RSS = s.RSS
			t.Procs = append(t.Procs, c)
		}
	}
	return t, nil
}

// gone reports an error from reading a process that has just exited.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

func parseFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return v, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Over sums the lines of the given CPUs, e.g. the servers' CPU set, to
// see the steal and the other load on those CPUs alone. CPUs the Stat has
// no line for count as zero.
func (s Stat) Over(cpus []int) CPUTimes {
	var sum CPUTimes
	for _, n := range cpus {
		c := s.CPU[n]
		sum = CPUTimes{
			sum.User + c.User, sum.Nice + c.Nice, sum.System + c.System, sum.Idle + c.Idle,
			sum.IOWait + c.IOWait, sum.IRQ + c.IRQ, sum.SoftIRQ + c.SoftIRQ, sum.Steal + c.Steal,
			sum.Guest + c.Guest, sum.GuestNice + c.GuestNice,
		}
	}
	return sum
}

// IdleOptions say when processes count as idle.
type IdleOptions struct {
	// Share is the CPU use, as a fraction of one CPU, below which the
	// processes count as idle (0.05 if zero).
	Share float64
	// Window is how long they must stay below Share (500ms if zero).
	Window time.Duration
	// Max bounds the wait (10s if zero).
	Max time.Duration
}

// Settling is the outcome of WaitIdle.
type Settling struct {
	// Idle is false when Max passed first.
	Idle bool
	// Waited is how long WaitIdle took.
	Waited time.Duration
	// Share is the processes' CPU use over the last full window, as a
	// fraction of one CPU.
	Share float64
}

// WaitIdle waits until the process trees rooted at pids have used less
// than opt.Share of a CPU over opt.Window, or opt.Max has passed: a server
// still working off the previous cell's backlog is not idle. A tree whose
// root has exited counts as idle.
func (fsys FS) WaitIdle(ctx context.Context, pids []int, opt IdleOptions) (Settling, error) {
	if opt.Share == 0 {
		opt.Share = 0.05
	}
	if opt.Window == 0 {
		opt.Window = 500 * time.Millisecond
	}
	if opt.Max == 0 {
		opt.Max = 10 * time.Second
	}
	type sample struct {
		at  time.Time
		cpu time.Duration
		// runnable: a thread waits for a CPU. A server starved by a busy
		// machine uses little CPU without being idle.
		runnable bool
	}
	read := func() (sample, error) {
		s := sample{at: time.Now()}
		for _, pid := range pids {
			t, err := fsys.Tree(pid)
			if gone(err) {
				continue
			}
			if err != nil {
				return s, err
			}
			s.cpu += t.CPU().Total()
			for _, p := range t.Procs {
				s.runnable = s.runnable || fsys.runnable(p.Pid)
			}
		}
		return s, nil
	}
	start := time.Now()
	first, err := read()
	if err != nil {
		return Settling{}, err
	}
	samples := []sample{first}
	tick := time.NewTicker(opt.Window / 5)
	defer tick.Stop()
	var res Settling
	for {
		select {
		case <-ctx.Done():
			res.Waited = time.Since(start)
			return res, context.Cause(ctx)
		case <-tick.C:
		}
		now, err := read()
		if err != nil {
			return res, err
		}
		samples = append(samples, now)
		// The oldest sample at least a window back.
		i := len(samples) - 1
		for i > 0 && now.at.Sub(samples[i].at) < opt.Window {
			i--
		}
		if span := now.at.Sub(samples[i].at); span >= opt.Window {
			samples = samples[i:]
			res.Share = float64(now.cpu-samples[0].cpu) / float64(span)
			if res.Share < opt.Share && !now.runnable {
				res.Idle, res.Waited = true, time.Since(start)
				return res, nil
			}
		}
		if time.Since(start) >= opt.Max {
			res.Waited = time.Since(start)
			return res, nil
		}
	}
}

// runnable reports whether a thread of the process is running or waiting
// for a CPU (state R in /proc/PID/task/TID/stat).
func (fsys FS) runnable(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join(string(fsys), strconv.Itoa(pid), "task", "*", "stat"))
	for _, t := range tasks {
		p, err := parseFile(t, ParseProcess)
		if err == nil && p.State == 'R' {
			return true
		}
	}
	return false
}

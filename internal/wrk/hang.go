package wrk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrHung matches (errors.Is) the error Run returns when wrk ran well past
// its duration and Run stopped it. wrk stops its threads on a 100ms timer
// once the duration is over, so an overrun is not load: it is wrk stuck,
// or starved of CPU. The error is a *HangError carrying what wrk was doing.
var ErrHung = errors.New("wrk hung")

// HangError is a wrk run that did not finish in time: Limit after it
// started its clock (Started), or Limit after it was started when it never
// printed its header. It matches ErrHung and, as before it had a type,
// context.DeadlineExceeded.
type HangError struct {
	URL     string
	Limit   time.Duration
	Started bool
	// Threads counts wrk's threads by the state letter /proc gives them
	// (R running or runnable, S sleeping, D in uninterruptible wait, T
	// stopped) when the limit passed.
	Threads map[string]int
	// State is wrk's state then (ProcessState), before it was stopped; Run
	// also appends it to the raw output.
	State string
}

func (e *HangError) Error() string {
	what := "did not finish within " + e.Limit.String() + " of starting its clock"
	if !e.Started {
		what = "did not start its clock within " + e.Limit.String()
	}
	total := 0
	for _, n := range e.Threads {
		total += n
	}
	why := ""
	switch r := e.Threads["R"]; {
	case total == 0:
	case e.Threads["T"] > 0:
		why = fmt.Sprintf("; %d of %d threads stopped", e.Threads["T"], total)
	case 2*r > total:
		why = fmt.Sprintf("; %d of %d threads runnable: short of CPU, not blocked", r, total)
	default:
		why = fmt.Sprintf("; %d of %d threads waiting", total-r, total)
	}
	return fmt.Sprintf("wrk against %s %s: stopped as hung%s (state in the raw output)", e.URL, what, why)
}

// Is makes errors.Is(err, ErrHung) and errors.Is(err,
// context.DeadlineExceeded) true.
func (e *HangError) Is(target error) bool {
	return target == ErrHung || target == context.DeadlineExceeded
}

// hangMarker starts the state Run appends to the raw output of a hung run;
// Parse ignores what follows the report, and a hung wrk printed none.
const hangMarker = "--- wrk hung: state at the deadline ---"

// ProcessState describes what a process and its threads are doing, from
// /proc: per thread its state, CPU time, last CPU, wait channel, current
// system call and kernel stack (when readable), then its TCP sockets by
// state with their send and receive queues, the busiest listed. It is
// best-effort: what cannot be read is named, not fatal.
func ProcessState(pid int) string {
	s, _ := processState(pid)
	return s
}

// processState is ProcessState and the count of threads by state.
func processState(pid int) (string, map[string]int) {
	var b strings.Builder
	dir := fmt.Sprintf("/proc/%d", pid)
	fmt.Fprintf(&b, "pid %d at %s", pid, time.Now().UTC().Format(time.RFC3339Nano))
	if cmd, err := os.ReadFile(dir + "/cmdline"); err == nil {
		fmt.Fprintf(&b, ": %s", strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	b.WriteString("\n")
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil {
		fmt.Fprintf(&b, "threads: %v\n", err)
		return b.String(), nil
	}
	states := map[string]int{}
	b.WriteString("threads: tid state utime+stime(ticks) cpu wchan syscall\n")
	var stacks strings.Builder
	for _, t := range tasks {
		td := filepath.Join(dir, "task", t.Name())
		st := taskStat(td)
		if st.state == "?" {
			continue // exited while we looked
		}
		states[st.state]++
		wchan := readTrim(td + "/wchan")
		sys := syscallName(readTrim(td + "/syscall"))
		fmt.Fprintf(&b, "  %s %s %d %s %s %s\n", t.Name(), st.state, st.ticks, st.cpu, orDash(wchan), orDash(sys))
		if stack := readTrim(td + "/stack"); stack != "" {
			fmt.Fprintf(&stacks, "  %s:\n%s\n", t.Name(), indent(stack, "    "))
		}
	}
	fmt.Fprintf(&b, "thread states: %s\n", countList(states))
	if stacks.Len() > 0 {
		b.WriteString("kernel stacks:\n")
		b.WriteString(stacks.String())
	}
	b.WriteString(socketState(pid))
	return b.String(), states
}

type stat struct {
	state string // R, S, D, T, Z ...
	ticks int64  // utime + stime
	cpu   string // the CPU it last ran on
}

func taskStat(dir string) stat {
	raw := readTrim(dir + "/stat")
	// The command name is in parentheses and may hold spaces.
	i := strings.LastIndexByte(raw, ')')
	if i < 0 {
		return stat{state: "?"}
	}
	f := strings.Fields(raw[i+1:])
	// f[0] is field 3 (state); utime, stime are fields 14, 15; processor 39.
	s := stat{state: "?", cpu: "?"}
	if len(f) > 0 {
		s.state = f[0]
	}
	if len(f) > 12 {
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		s.ticks = u + k
	}
	if len(f) > 36 {
		s.cpu = f[36]
	}
	return s
}

// tcpStates are the kernel's TCP state numbers (include/net/tcp_states.h).
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1",
	"05": "FIN_WAIT2", "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT",
	"09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

type sock struct {
	local, remote, state string
	txq, rxq             int64
}

// socketState lists pid's TCP sockets from /proc/PID/net/tcp{,6} (its
// network namespace), matched by inode to its descriptors: what ss -tanp
// shows as Send-Q and Recv-Q.
func socketState(pid int) string {
	dir := fmt.Sprintf("/proc/%d", pid)
	fds, err := os.ReadDir(dir + "/fd")
	if err != nil {
		return fmt.Sprintf("sockets: %v\n", err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var socks []sock
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(dir, "net", table))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local rem st tx_queue:rx_queue tr:when retrnsmt uid timeout inode
			f := strings.Fields(sc.Text())
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			tx, rx, _ := strings.Cut(f[4], ":")
			s := sock{local: hexAddr(f[1]), remote: hexAddr(f[2]), state: tcpStates[f[3]]}
			if s.state == "" {
				s.state = f[3]
			}
			s.txq, _ = strconv.ParseInt(tx, 16, 64)
			s.rxq, _ = strconv.ParseInt(rx, 16, 64)
			socks = append(socks, s)
		}
		f.Close()
	}
	var b strings.Builder
	states := map[string]int{}
	var txq, rxq int64
	for _, s := range socks {
		states[s.state]++
		txq += s.txq
		rxq += s.rxq
	}
	fmt.Fprintf(&b, "tcp sockets (%d of %d descriptors): %s; Send-Q total %d, Recv-Q total %d\n",
		len(socks), len(fds), countList(states), txq, rxq)
	// The busiest first: a stuck peer shows as queued bytes.
	slices.SortStableFunc(socks, func(a, b sock) int { return int((b.txq + b.rxq) - (a.txq + a.rxq)) })
	const show = 20
	for i, s := range socks {
		if i == show {
			fmt.Fprintf(&b, "  ... %d more\n", len(socks)-show)
			break
		}
		fmt.Fprintf(&b, "  %-11s Send-Q %-7d Recv-Q %-7d %s -> %s\n", s.state, s.txq, s.rxq, s.local, s.remote)
	}
	return b.String()
}

// hexAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080"
// (IPv4; IPv6 addresses stay as the kernel prints them).
func hexAddr(s string) string {
	host, port, ok := strings.Cut(s, ":")
	p, err := strconv.ParseUint(port, 16, 16)
	if !ok || err != nil {
		return s
	}
	if len(host) == 8 {
		v, err := strconv.ParseUint(host, 16, 32)
		if err == nil {
			// Little-endian words, as on the machines this runs on.
			return fmt.Sprintf("%d.%d.%d.%d:%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24, p)
		}
	}
	return fmt.Sprintf("[%s]:%d", host, p)
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func orDash(s string) string {
	if s == "" || s == "0" {
		return "-"
	}
	return s
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// syscallName shortens /proc/PID/task/TID/syscall ("232 0x3 ..." or
// "running") to the call, named for the common ones on amd64.
func syscallName(s string) string {
	nr, _, _ := strings.Cut(s, " ")
	if runtime.GOARCH != "amd64" {
		return nr
	}
	names := map[string]string{
		"0": "read", "1": "write", "3": "close", "7": "poll", "35": "nanosleep", "41": "socket",
		"42": "connect", "56": "clone", "202": "futex", "230": "clock_nanosleep",
		"232": "epoll_wait", "281": "epoll_pwait", "435": "clone3",
	}
	if n, ok := names[nr]; ok {
		return nr + "(" + n + ")"
	}
	return nr
}

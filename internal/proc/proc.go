// Package proc runs the child processes of a benchmark — cmd/hello, nginx,
// wrk — so that none outlives its parent: each is started with
// exec.CommandContext, stopped with a graceful signal before a kill, always
// waited for, and keeps the tail of its stderr for error messages.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/procstat"
)

// Options tune how a child is run.
type Options struct {
	// Stop is the signal that asks the child to finish (SIGTERM if zero).
	Stop syscall.Signal
	// Grace is how long the child has after Stop before it is killed
	// (5s if zero).
	Grace time.Duration
	// Stdin is the child's standard input, if set (a load session reads
	// its commands there).
	Stdin io.Reader
	// Stdout receives the child's standard output, if set.
	Stdout io.Writer
	// Stderr receives a copy of the child's standard error, if set; the
	// tail is always kept for Tail.
	Stderr io.Writer
	// Env is added to the parent's environment.
	Env []string
	// Dir is the working directory.
	Dir string
	// DeathSignal is sent to the child if the parent dies without stopping
	// it (Linux only; SIGKILL if zero). Children that fork workers want a
	// signal that makes them take their workers down.
	DeathSignal syscall.Signal
	// NetNS runs the child inside the named network namespace (with
	// "ip netns exec NetNS"); empty runs it in the harness's own.
	NetNS string
	// CPUs pins the child and everything it forks to a CPU list (with
	// "taskset -c CPUs", e.g. "0" or "1-3,5"); empty leaves it unpinned.
	CPUs string
	// Group starts the child in a process group of its own, sends the stop
	// signal (and the kill after the grace period) to the whole group, and
	// kills what is left of the group once the child has exited: a command
	// that forks (a shell script, a server with workers) leaves nothing
	// running.
	Group bool
	// Cgroup, when set, receives the child's pid the moment it has
	// started (a *cgroup.Group's Join): the wrappers and the program they
	// exec are one process, so the program and every thread it makes run
	// in that group. A failed Join stops the child and fails Start.
	Cgroup Joiner
}

// Joiner moves a process into a control group (internal/cgroup.Group).
type Joiner interface{ Join(pid int) error }

// Command is the command line Start runs for name and args under opt: the
// program itself, wrapped in "ip netns exec" and "taskset -c" when opt asks
// for them. Both wrappers exec the program in place, so the child's pid is
// the program's own and signals reach it directly.
func Command(name string, args []string, opt Options) []string {
	argv := append([]string{name}, args...)
	if opt.CPUs != "" {
		argv = append([]string{"taskset", "-c", opt.CPUs}, argv...)
	}
	if opt.NetNS != "" {
		argv = append([]string{"ip", "netns", "exec", opt.NetNS}, argv...)
	}
	return argv
}

// Proc is a running child.
type Proc struct {
	Name string
	// Args is the complete command line that was started, wrappers
	// included (see Command).
	Args  []string
	group bool
	cmd   *exec.Cmd
	tail  *Tail
	done  chan struct{}
	err   error
}

// Start launches name with args (see Command for how opt wraps them).
// Cancelling ctx stops the child gracefully.
func Start(ctx context.Context, name string, args []string, opt Options) (*Proc, error) {
	if err := checkCPUs(opt.CPUs); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if opt.Stop == 0 {
		opt.Stop = syscall.SIGTERM
	}
	if opt.Grace == 0 {
		opt.Grace = 5 * time.Second
	}
	argv := Command(name, args, opt)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Cancel = func() error { return signal(cmd, opt.Group, opt.Stop) }
	cmd.WaitDelay = opt.Grace
	cmd.Dir = opt.Dir
	if len(opt.Env) > 0 {
		cmd.Env = append(os.Environ(), opt.Env...)
	}
	tail := NewTail(8 << 10)
	cmd.Stdin = opt.Stdin
	cmd.Stdout = opt.Stdout
	if opt.Stderr != nil {
		cmd.Stderr = io.MultiWriter(tail, opt.Stderr)
	} else {
		cmd.Stderr = tail
	}
	if opt.DeathSignal == 0 {
		opt.DeathSignal = syscall.SIGKILL
	}
	setDeathSignal(cmd, opt.DeathSignal)
	if opt.Group {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Setpgid = true
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if opt.Cgroup != nil {
		if err := opt.Cgroup.Join(cmd.Process.Pid); err != nil {
			_ = signal(cmd, opt.Group, syscall.SIGKILL)
			_ = cmd.Wait()
			return nil, fmt.Errorf("starting %s: %w", name, err)
		}
	}
	p := &Proc{Name: name, Args: argv, group: opt.Group, cmd: cmd, tail: tail, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		if p.group {
			// The child is gone; whatever it forked goes with it.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		close(p.done)
	}()
	return p, nil
}

// signal sends sig to the child, or to its whole process group.
func signal(cmd *exec.Cmd, group bool, sig syscall.Signal) error {
	if group {
		return syscall.Kill(-cmd.Process.Pid, sig)
	}
	return cmd.Process.Signal(sig)
}

// checkCPUs rejects a CPU list taskset would misread, so a typo fails with
// the list named rather than as taskset's usage text.
func checkCPUs(list string) error {
	if list == "" {
		return nil
	}
	_, err := cpuset.Parse(list)
	return err
}

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the child has exited and been waited for.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Exited reports whether the child has already exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the child and returns its exit error with the tail of its
// stderr attached.
func (p *Proc) Wait() error {
	<-p.done
	return p.annotate(p.err)
}

// CPU is the user and system time the child used, itself and the children
// it waited for, as its rusage says once it has exited; zero before then.
// With the wrappers of Command it is the program's own time (they exec it
// in place) plus the few milliseconds the wrappers spent before the exec.
func (p *Proc) CPU() procstat.Times {
	if !p.Exited() || p.cmd.ProcessState == nil {
		return procstat.Times{}
	}
	return procstat.Times{User: p.cmd.ProcessState.UserTime(), System: p.cmd.ProcessState.SystemTime()}
}

// Signal sends sig to the child if it is still running.
func (p *Proc) Signal(sig os.Signal) error {
	if p.Exited() {
		return nil
	}
	if s, ok := sig.(syscall.Signal); ok && p.group {
		return signal(p.cmd, true, s)
	}
	return p.cmd.Process.Signal(sig)
}

// Stop asks the child to exit with its stop signal and waits; after the
// grace period it is killed. An exit caused by the stop signal is not an
// error.
func (p *Proc) Stop(sig syscall.Signal, grace time.Duration) error {
	if !p.Exited() {
		_ = signal(p.cmd, p.group, sig)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = signal(p.cmd, p.group, syscall.SIGKILL)
			<-p.done
			return fmt.Errorf("%s did not exit within %s of %s; killed%s", p.Name, grace, sig, p.tailSuffix())
		}
	}
	err := p.err
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == sig {
			return nil
		}
	}
	return p.annotate(err)
}

// Tail returns the last bytes the child wrote to stderr.
func (p *Proc) Tail() string { return p.tail.String() }

func (p *Proc) annotate(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w%s", p.Name, err, p.tailSuffix())
}

func (p *Proc) tailSuffix() string {
	t := strings.TrimSpace(p.tail.String())
	if t == "" {
		return ""
	}
	return "\n" + Indent(LastLines(t, 10), "    ")
}

// LastLines returns the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Indent prefixes every line of s.
func Indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}

// Tail is an io.Writer that keeps only the last max bytes written.
type Tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

// NewTail returns a Tail keeping max bytes.
func NewTail(max int) *Tail { return &Tail{max: max} }

func (t *Tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.Clone(t.buf))
}

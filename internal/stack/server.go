package stack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/procstat"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/target"
)

// Server is one running server of a stack: cmd/hello (hellorun.Server),
// another target (target.Server, and any kind internal/target adds), nginx,
// or either of them run by a procd agent elsewhere. Each is started by its
// own package, which returns only once a real request has been answered;
// from then on the stack treats them alike.
type Server interface {
	// Name is what messages call it: "cmd/hello", "java-netty", "nginx".
	Name() string
	// Pid is the root of its process tree, whose CPU time and memory the
	// sweep reads from /proc; 0 when it runs elsewhere (an agent).
	Pid() int
	// Exited reports whether it has exited, on its own or by Stop.
	Exited() bool
	// Tail is the last of what it wrote to stderr (or its error log),
	// for the error that reports its exit.
	Tail() string
	// Stop stops it gracefully, killing it after a grace period, and says
	// what did not stop cleanly. Calling it again returns the same.
	Stop() error
}

// Both child types satisfy Server directly.
var (
	_ Server = (*hellorun.Server)(nil)
	_ Server = (*target.Server)(nil)
)

// exitErr is the error Alive reports for a server that exited: its name
// and the tail of its stderr, indented below.
func exitErr(s Server) error {
	err := fmt.Errorf("%s exited", s.Name())
	if t := strings.TrimSpace(s.Tail()); t != "" {
		err = fmt.Errorf("%w\n%s", err, proc.Indent(proc.LastLines(t, 10), "    "))
	}
	return err
}

// nginxServer adapts nginx.Server, whose stderr is nearly always empty:
// what it says goes to its error log.
type nginxServer struct{ *nginx.Server }

func (nginxServer) Name() string { return "nginx" }

func (n nginxServer) Exited() bool {
	select {
	case <-n.Done():
		return true
	default:
		return false
	}
}

func (n nginxServer) Tail() string { return nginx.LogTail(n.Dir(), 10) }

// agentTimeout bounds one request to a procd agent.
const agentTimeout = 5 * time.Second

// agentServer is a server a procd agent (cmd/procd) runs in another
// container: it has no pid here, and its state is the agent's status.
type agentServer struct {
	name   string
	client *supervise.Client
	mu     sync.Mutex
	last   string // the agent's last error, or why it could not be asked
	stop   sync.Once
	err    error
}

func (a *agentServer) Name() string { return a.name }
func (a *agentServer) Pid() int     { return 0 }

// Exited asks the agent; an agent that does not answer counts as exited,
// since nothing can be measured through it.
func (a *agentServer) Exited() bool {
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	st, err := a.client.Status(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		a.last = fmt.Sprintf("asking its agent %s: %v", a.client.URL, err)
		return true
	case !st.Running:
		a.last = st.Error
		return true
	}
	return false
}

func (a *agentServer) Tail() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

func (a *agentServer) Stop() error {
	a.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := a.client.Stop(ctx); err != nil {
			a.err = fmt.Errorf("stopping %s via %s: %w", a.name, a.client.URL, err)
		}
	})
	return a.err
}

// stopAll stops servers in order and joins what did not stop cleanly.
func stopAll(ss ...Server) error {
	var errs []error
	for _, s := range ss {
		if s != nil {
			errs = append(errs, s.Stop())
		}
	}
	return errors.Join(errs...)
}

// CPU is the CPU time of the program the agent runs (its process tree,
// as the agent's /proc has it): the harness in another container cannot
// read it itself.
func (a *agentServer) CPU(ctx context.Context) (procstat.Times, error) {
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	c, err := a.client.CPU(ctx)
	if err != nil {
		return procstat.Times{}, fmt.Errorf("%s: %w", a.name, err)
	}
	return c.Times(), nil
}

// ErrNoServer is the CPU error for a server the stack does not have (no
// topology needed it): nothing to measure, as opposed to a failure.
var ErrNoServer = errors.New("no such server in this stack")

// procfs is where the CPU time of the servers started here is read.
const procfs = procstat.FS("/proc")

// cpuOf reads a server's CPU time so far: from /proc for a process of
// this harness, from its agent for one that runs elsewhere.
func cpuOf(ctx context.Context, srv Server) (procstat.Times, error) {
	if srv == nil {
		return procstat.Times{}, ErrNoServer
	}
	if r, ok := srv.(*target.Service); ok {
		return runningCPU(ctx, r)
	}
	if a, ok := srv.(interface {
		CPU(context.Context) (procstat.Times, error)
	}); ok {
		return a.CPU(ctx)
	}
	t, err := procfs.Tree(srv.Pid())
	if err != nil {
		return procstat.Times{}, fmt.Errorf("%s: %w", srv.Name(), err)
	}
	return t.CPU(), nil
}

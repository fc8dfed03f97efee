// Package swarm is the Docker Swarm cluster.Cluster: the one place
// topobench talks to a swarm.
//
// It drives the docker CLI (exec.CommandContext) rather than the engine
// API over its socket: the CLI is already what the container set-up
// needs (compose/), it negotiates the API version with old engines
// (Debian bookworm's 20.10), reaches other nodes' engines at ssh:// and
// tcp:// addresses, and adds no Go module; its outputs are read by the
// pure parsers of parse.go, tested against captured real output.
//
// Servers are replicated services of one replica pinned with
// node.id==ID; jobs are replicated-job services of one task each, one
// service per job, pinned the same way, so each job's log is its own
// service's (`docker service logs --raw`). Both use the node's own
// network (--network host) and never restart. Every service carries the
// label topobench.run=RUN and a name starting tb-RUN-; Cleanup removes
// them. Images go to other nodes as `docker save | docker -H ENGINE
// load`, which needs the nodes' engine addresses (Config.Engines); no
// registry is involved, and the services are created with
// --no-resolve-image so that no engine asks one.
package swarm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/cluster"
)

// RunLabel marks every service a Swarm creates, with its run's ID.
const RunLabel = "topobench.run"

// Config says how to reach the swarm.
type Config struct {
	// Docker is the docker CLI (default "docker" on PATH).
	Docker string
	// Host is the manager's engine, as DOCKER_HOST takes it (empty: the
	// CLI's default). The harness talks to the swarm through it.
	Host string
	// Engines maps a node's ID or hostname to its engine's address
	// (unix://, tcp://, ssh://user@host), for placing images on it and
	// reading its clock. The manager's is Host.
	Engines map[string]string
	// Run is the run's ID in service names and labels (default random).
	Run string
	// Poll is how often task states are read (default 200ms).
	Poll time.Duration
}

// Swarm is a cluster.Cluster on a Docker Swarm.
type Swarm struct {
	cfg  Config
	self string // the manager's node ID

	mu       sync.Mutex
	services []string // created and not yet removed, in order
}

var _ cluster.Cluster = (*Swarm)(nil)

// Open checks that Host is a swarm manager: a missing CLI, an engine that
// does not answer, or one in no swarm or only a worker is refused with
// one line (cluster.ErrNoCluster).
func Open(ctx context.Context, cfg Config) (*Swarm, error) {
	if cfg.Docker == "" {
		cfg.Docker = "docker"
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 200 * time.Millisecond
	}
	if cfg.Run == "" {
		b := make([]byte, 4)
		rand.Read(b)
		cfg.Run = hex.EncodeToString(b)
	}
	if _, err := exec.LookPath(cfg.Docker); err != nil {
		return nil, fmt.Errorf("%w: no docker CLI (%v)", cluster.ErrNoCluster, err)
	}
	s := &Swarm{cfg: cfg}
	out, err := s.docker(ctx, cfg.Host, nil, "info", "--format", "{{json .Swarm}}")
	if err != nil {
		return nil, fmt.Errorf("%w: no Docker engine answers%s: %v", cluster.ErrNoCluster, s.at(cfg.Host), err)
	}
	si, err := ParseSwarmInfo(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	switch {
	case si.LocalNodeState != "active":
		return nil, fmt.Errorf("%w: the engine%s is in no swarm (state %q; docker swarm init, or join one)", cluster.ErrNoCluster, s.at(cfg.Host), si.LocalNodeState)
	case !si.ControlAvailable:
		return nil, fmt.Errorf("%w: the engine%s is a swarm worker; run the harness on a manager", cluster.ErrNoCluster, s.at(cfg.Host))
	}
	s.self = si.NodeID
	return s, nil
}

// Run is the run's ID, in every service's name and RunLabel.
func (s *Swarm) Run() string { return s.cfg.Run }

func (s *Swarm) at(host string) string {
	if host == "" {
		return ""
	}
	return " at " + host
}

// docker runs the CLI against host (empty: Config.Host's default) and
// returns its stdout; an error carries the tail of its stderr.
func (s *Swarm) docker(ctx context.Context, host string, stdin io.Reader, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := s.command(ctx, host, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			// Stopped by us: the interruption is the cause, not its exit.
			err = ctx.Err()
		}
		return stdout.Bytes(), fmt.Errorf("docker %s: %w%s", args[0], err, tail(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

func (s *Swarm) command(ctx context.Context, host string, args ...string) *exec.Cmd {
	if host != "" {
		args = append([]string{"-H", host}, args...)
	}
	cmd := exec.CommandContext(ctx, s.cfg.Docker, args...)
	// The CLI removes nothing on SIGTERM that it would not on exit.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// tail is the last lines of a child's stderr, for an error.
func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return ": " + strings.Join(lines, " / ")
}

// Nodes lists the swarm's nodes.
func (s *Swarm) Nodes(ctx context.Context) ([]cluster.Node, error) {
	out, err := s.docker(ctx, s.cfg.Host, nil, "node", "ls", "--format", "{{json .}}")
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	ls, err := ParseNodeList(bytes.NewReader(out))
	if err != nil {
		return nil, err
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("listing nodes: %w: the swarm has none", cluster.ErrNoCluster)
	}
	args := []string{"node", "inspect"}
	for _, n := range ls {
		args = append(args, n.ID)
	}
	out, err = s.docker(ctx, s.cfg.Host, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("inspecting nodes: %w", err)
	}
	return ParseNodeInspect(bytes.NewReader(out))
}

// engine is the engine address of node, and whether it is known.
func (s *Swarm) engine(n cluster.Node) (string, bool) {
	if n.ID == s.self {
		return s.cfg.Host, true
	}
	if h, ok := s.cfg.Engines[n.ID]; ok {
		return h, true
	}
	h, ok := s.cfg.Engines[n.Hostname]
	return h, ok && n.Hostname != ""
}

// PlaceImage loads image from the manager's engine into each node's that
// lacks it.
func (s *Swarm) PlaceImage(ctx context.Context, image string, nodes []cluster.Node) error {
	if _, err := s.docker(ctx, s.cfg.Host, nil, "image", "inspect", "--format", "{{.Id}}", image); err != nil {
		return fmt.Errorf("%w: %s is not on the manager's engine: %v", cluster.ErrImage, image, err)
	}
	for _, n := range nodes {
		host, ok := s.engine(n)
		if !ok {
			return fmt.Errorf("%w: no engine address for node %s to load %s into (swarm.Config.Engines)", cluster.ErrImage, n, image)
		}
		if host == s.cfg.Host {
			continue
		}
		if _, err := s.docker(ctx, host, nil, "image", "inspect", "--format", "{{.Id}}", image); err == nil {
			continue
		}
		if err := s.copyImage(ctx, image, host); err != nil {
			return fmt.Errorf("%w: %s on node %s: %v", cluster.ErrImage, image, n, err)
		}
	}
	return nil
}

// copyImage runs docker save on the manager into docker load at host.
func (s *Swarm) copyImage(ctx context.Context, image, host string) error {
	save := s.command(ctx, s.cfg.Host, "save", image)
	load := s.command(ctx, host, "load", "-q")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	var saveErr, loadErr bytes.Buffer
	save.Stderr, load.Stderr, load.Stdin = &saveErr, &loadErr, pipe
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save: %w", err)
	}
	lerr := load.Run()
	if lerr != nil {
		save.Process.Kill()
	}
	serr := save.Wait()
	if ctx.Err() != nil && (lerr != nil || serr != nil) {
		return ctx.Err()
	}
	switch {
	case serr != nil && lerr == nil:
		return fmt.Errorf("docker save: %w%s", serr, tail(saveErr.Bytes()))
	case lerr != nil:
		return fmt.Errorf("docker load: %w%s", lerr, tail(loadErr.Bytes()))
	}
	return nil
}

// name is a service's name in this run.
func (s *Swarm) name(n string) string { return "tb-" + s.cfg.Run + "-" + n }

// create makes a service and remembers it for Cleanup.
func (s *Swarm) create(ctx context.Context, name, image, node string, cmd, env []string, job bool) error {
	if image == "" || node == "" || len(cmd) == 0 {
		return fmt.Errorf("service %s: image, node and command are required", name)
	}
	args := []string{"service", "create", "--detach", "--quiet", "--no-resolve-image",
		"--name", s.name(name), "--label", RunLabel + "=" + s.cfg.Run,
		"--constraint", "node.id==" + node, "--network", "host",
		"--restart-condition", "none", "--entrypoint", cmd[0]}
	if job {
		args = append(args, "--mode", "replicated-job")
	}
	for _, e := range env {
		args = append(args, "--env", e)
	}
	args = append(append(args, image), cmd[1:]...)
	s.mu.Lock()
	s.services = append(s.services, s.name(name))
	s.mu.Unlock()
	if _, err := s.docker(ctx, s.cfg.Host, nil, args...); err != nil {
		return fmt.Errorf("creating service %s: %w", s.name(name), err)
	}
	return nil
}

// remove removes services and forgets them. `docker service rm` fails
// for any name already gone but removes the others, so what counts is
// whether the swarm still lists one of them afterwards.
func (s *Swarm) remove(ctx context.Context, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	_, rmErr := s.docker(ctx, s.cfg.Host, nil, append([]string{"service", "rm"}, names...)...)
	left, err := s.Services(ctx)
	if err != nil {
		return fmt.Errorf("removing services: %w", err)
	}
	var still []string
	for _, e := range left {
		if slices.Contains(names, e.Name) {
			still = append(still, e.Name)
		}
	}
	s.mu.Lock()
	s.services = slices.DeleteFunc(s.services, func(n string) bool { return !slices.Contains(still, n) && slices.Contains(names, n) })
	s.mu.Unlock()
	if len(still) > 0 {
		return fmt.Errorf("removing services %s: %v", strings.Join(still, ", "), rmErr)
	}
	return nil
}

// ps reads the tasks of services.
func (s *Swarm) ps(ctx context.Context, services ...string) ([]PSEntry, error) {
	out, err := s.docker(ctx, s.cfg.Host, nil, append([]string{"service", "ps", "--no-trunc", "--format", "{{json .}}"}, services...)...)
	if err != nil {
		return nil, fmt.Errorf("reading tasks: %w", err)
	}
	return ParseServicePS(bytes.NewReader(out))
}

// StartServer creates the server's service and waits until its task runs
// and sv.Ready succeeds, or the task ends (an error with the end of its
// log; the service is removed).
func (s *Swarm) StartServer(ctx context.Context, sv cluster.Server) error {
	if err := s.create(ctx, sv.Name, sv.Image, sv.Node, sv.Cmd, sv.Env, false); err != nil {
		return err
	}
	name := s.name(sv.Name)
	for {
		ts, err := s.ps(ctx, name)
		if err != nil {
			return err
		}
		for _, t := range ts {
			switch st := t.State(); {
			case st == "running":
				if sv.Ready == nil || sv.Ready(ctx) == nil {
					return nil
				}
			case Terminal(st):
				var logs bytes.Buffer
				cmd := s.command(ctx, s.cfg.Host, "service", "logs", "--raw", name)
				cmd.Stdout, cmd.Stderr = &logs, &logs
				cmd.Run()
				err := fmt.Errorf("server %s on node %s: task %s%s%s", name, sv.Node, st, errText(t.Error), tail(logs.Bytes()))
				return errors.Join(err, s.remove(context.WithoutCancel(ctx), name))
			}
		}
		if err := sleep(ctx, s.cfg.Poll); err != nil {
			err = fmt.Errorf("server %s not running: %w", name, err)
			return errors.Join(err, s.remove(context.WithoutCancel(ctx), name))
		}
	}
}

func errText(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// StopServer scales the server to nothing, which waits until its
// container has stopped (and freed its ports), then removes it.
func (s *Swarm) StopServer(ctx context.Context, name string) error {
	full := s.name(name)
	if _, err := s.docker(ctx, s.cfg.Host, nil, "service", "scale", "--detach=false", full+"=0"); err != nil {
		return fmt.Errorf("stopping server %s: %w", full, err)
	}
	return s.remove(ctx, full)
}

// RunJobs creates a job service per job, waits until every one has ended
// (or one has failed: the others are then stopped, and their outputs say
// so), then collects their logs and removes them.
func (s *Swarm) RunJobs(ctx context.Context, jobs []cluster.Job, startBy time.Time) (outs []cluster.JobOutput, err error) {
	names := make([]string, len(jobs))
	defer func() {
		// Jobs that ended leave stopped containers; interrupted or late
		// ones still run. Either way the run is over for them.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		var created []string
		for _, n := range names {
			if n != "" {
				created = append(created, n)
			}
		}
		if rerr := s.remove(rctx, created...); rerr != nil && err == nil {
			err = rerr
		}
	}()
	for i, j := range jobs {
		if err := s.create(ctx, j.Name, j.Image, j.Node, j.Cmd, j.Env, true); err != nil {
			return nil, err
		}
		names[i] = s.name(j.Name)
	}
	byService, err := s.awaitJobs(ctx, jobs, names, startBy)
	if err != nil {
		return nil, err
	}
	return s.collectJobs(ctx, jobs, names, byService)
}

// awaitJobs polls the jobs' tasks, by service name, until every one has
// ended or one has failed; a job not started by startBy fails them all.
func (s *Swarm) awaitJobs(ctx context.Context, jobs []cluster.Job, names []string, startBy time.Time) (map[string]PSEntry, error) {
	byService := map[string]PSEntry{}
	for {
		ts, err := s.ps(ctx, names...)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			byService[t.Service()] = t
		}
		done, failed, late := 0, false, []string{}
		for i, n := range names {
			t, ok := byService[n]
			st := t.State()
			if ok && Terminal(st) {
				done++
				failed = failed || st != "complete"
			}
			if !time.Now().Before(startBy) && (!ok || !Started(st)) {
				state := "not scheduled"
				if ok {
					state = st + errText(t.Error)
				}
				late = append(late, fmt.Sprintf("%s on node %s: %s", jobs[i].Name, jobs[i].Node, state))
			}
		}
		if len(late) > 0 {
			return nil, fmt.Errorf("%w by %s: %s", cluster.ErrNotStarted, startBy.Format(time.RFC3339Nano), strings.Join(late, "; "))
		}
		// One failed job spoils the run: the others are stopped rather
		// than waited for.
		if done == len(names) || failed {
			return byService, nil
		}
		if err := sleep(ctx, s.cfg.Poll); err != nil {
			return nil, fmt.Errorf("waiting for jobs: %w", err)
		}
	}
}

// collectJobs reads each job's exit code, from its task's inspect
// output, and its logs; a job that failed or was stopped for another's
// failure has an Err, as has the run.
func (s *Swarm) collectJobs(ctx context.Context, jobs []cluster.Job, names []string, byService map[string]PSEntry) ([]cluster.JobOutput, error) {
	byID, failedJobs, err := s.inspectJobs(ctx, jobs, names, byService)
	if err != nil {
		return nil, err
	}
	outs := make([]cluster.JobOutput, len(jobs))
	var errs []error
	for i, n := range names {
		o := &outs[i]
		o.Job = jobs[i]
		t := byID[byService[n].ID]
		o.ExitCode = t.ExitCode
		var stdout, stderr bytes.Buffer
		cmd := s.command(ctx, s.cfg.Host, "service", "logs", "--raw", n)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		lerr := cmd.Run()
		if lerr != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("collecting job logs: %w", ctx.Err())
		}
		o.Stdout, o.Stderr = stdout.Bytes(), stderr.Bytes()
		switch {
		case !Terminal(t.State):
			o.Err = fmt.Errorf("%w: %s on node %s: stopped (%s) because %s failed", cluster.ErrJobFailed, jobs[i].Name, jobs[i].Node, t.State, strings.Join(failedJobs, ", "))
		case t.State != "complete":
			o.Err = fmt.Errorf("%w: %s on node %s: task %s%s, exit %d%s", cluster.ErrJobFailed, jobs[i].Name, jobs[i].Node, t.State, errText(t.Err), t.ExitCode, tail(o.Stderr))
		case lerr != nil:
			o.Err = fmt.Errorf("collecting the log of %s: %w%s", jobs[i].Name, lerr, tail(o.Stderr))
		}
		if o.Err != nil {
			errs = append(errs, o.Err)
		}
	}
	return outs, errors.Join(errs...)
}

// inspectJobs reads the jobs' tasks by id (exit codes are in their
// inspect output), and names the jobs that failed.
func (s *Swarm) inspectJobs(ctx context.Context, jobs []cluster.Job, names []string, byService map[string]PSEntry) (map[string]Task, []string, error) {
	args := []string{"inspect", "--type", "task"}
	var failedJobs []string
	for i, n := range names {
		args = append(args, byService[n].ID)
		if st := byService[n].State(); Terminal(st) && st != "complete" {
			failedJobs = append(failedJobs, jobs[i].Name)
		}
	}
	out, err := s.docker(ctx, s.cfg.Host, nil, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("inspecting job tasks: %w", err)
	}
	tasks, err := ParseTaskInspect(bytes.NewReader(out))
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	return byID, failedJobs, nil
}

// Clock reads the node engine's clock five times and keeps the exchange
// with the shortest round trip: the offset is its reading minus the
// midpoint of the round trip, within half the round trip.
func (s *Swarm) Clock(ctx context.Context, n cluster.Node) (cluster.Clock, error) {
	host, ok := s.engine(n)
	if !ok {
		return cluster.Clock{}, fmt.Errorf("reading the clock of node %s: no engine address (swarm.Config.Engines)", n)
	}
	best := cluster.Clock{}
	for range 5 {
		t0 := time.Now()
		out, err := s.docker(ctx, host, nil, "info", "--format", "{{json .SystemTime}}")
		t2 := time.Now()
		if err != nil {
			return cluster.Clock{}, fmt.Errorf("reading the clock of node %s: %w", n, err)
		}
		t1, err := ParseSystemTime(bytes.NewReader(out))
		if err != nil {
			return cluster.Clock{}, err
		}
		rtt := t2.Sub(t0)
		if !best.Known || rtt/2 < best.Uncertainty {
			mid := t0.Add(rtt / 2)
			best = cluster.Clock{Offset: t1.Sub(mid.Round(0)), Uncertainty: rtt / 2, Known: true}
		}
	}
	return best, nil
}

// Services lists the services this run created that the swarm still has.
func (s *Swarm) Services(ctx context.Context) ([]ServiceListEntry, error) {
	out, err := s.docker(ctx, s.cfg.Host, nil, "service", "ls", "--filter", "label="+RunLabel+"="+s.cfg.Run, "--format", "{{json .}}")
	if err != nil {
		return nil, fmt.Errorf("listing services: %w", err)
	}
	return ParseServiceList(bytes.NewReader(out))
}

// Cleanup removes every service of this run: those it remembers and any
// the swarm lists with the run's label.
func (s *Swarm) Cleanup(ctx context.Context) error {
	s.mu.Lock()
	names := slices.Clone(s.services)
	s.mu.Unlock()
	if ls, err := s.Services(ctx); err == nil {
		for _, e := range ls {
			if !slices.Contains(names, e.Name) {
				names = append(names, e.Name)
			}
		}
	}
	return s.remove(ctx, names...)
}

// Package swarmtest builds a real two-node Docker Swarm on one machine for
// tests, and takes it down again.
//
// The manager is the host's engine (started as compose/prepare.sh starts
// it when none answers: containerd and dockerd in the background, without
// a bridge or firewall rules, logging to /var/log/{containerd,dockerd}.log,
// left running as a service would be). The worker is a second containerd
// and dockerd started with `nsenter --net` inside a network namespace of
// their own, so that containers with host networking on the worker live in
// that namespace (`ip netns exec` cannot start dockerd: it remounts /sys
// and the engine finds no devices cgroup). The namespace is joined to the
// host by a veth pair on a link-local /30 (169.254.X.1 on the host,
// .2 in the namespace); the manager listens and advertises on .1 only, the
// worker on .2, and the swarm's ingress network is removed, so nothing of
// the swarm listens beyond that link.
//
// The test image is cheap: swarm.BuildImage, a `docker import` of a tar
// holding the static (CGO_ENABLED=0) cmd/hello and cmd/topobench from this
// checkout, in /usr/local/bin. It is on the manager only; placing it on
// the worker is the code under test's job.
//
// Teardown, registered with t.Cleanup as each piece comes up and run even
// when the test fails: the worker leaves the swarm, the manager leaves it
// (--force), a docker_gwbridge network the swarm made on the host is
// removed, the worker's dockerd and containerd are stopped, its mounts
// undone, the namespace, veth and directories removed, and the image
// deleted. A host engine already in a swarm is refused: leaving it would
// destroy someone's swarm. What a killed test left (its PID is in the
// manager node's label topobench.swarmtest, the namespace's name, the
// directory's owner file and the image's tag) is taken down by the next
// New once that PID is gone. One swarm test at a time uses the host
// engine: New and LockHost hold a lock (LockPath) that test binaries of
// other packages, which go test runs in parallel, wait for.
package swarmtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/topobench/topobench/internal/cluster/swarm"
)

// Swarm is a running two-node swarm.
type Swarm struct {
	// Worker is the worker engine's address (-H); the manager's is the
	// CLI's default.
	Worker string
	// ManagerID and WorkerID are the nodes' swarm IDs.
	ManagerID, WorkerID string
	// ManagerAddr is the host end of the veth; WorkerAddr the namespace's,
	// where servers with host networking on the worker listen.
	ManagerAddr, WorkerAddr string
	// Namespace is the worker's network namespace (/run/netns/NAME).
	Namespace string
	// Image holds /usr/local/bin/hello and /usr/local/bin/topobench.
	Image string
	// Dir holds the worker's state and the engines' logs.
	Dir string
	// Timings of bringing it up: swarm init, the worker's join, the
	// image build (go build and docker import), and all of it.
	Init, Join, Build, Up time.Duration

	workerDown bool // StopWorker ran: the worker cannot leave the swarm
}

// Engines is the engine address map swarm.Config.Engines wants.
func (s *Swarm) Engines() map[string]string {
	return map[string]string{s.WorkerID: s.Worker}
}

func run(ctx context.Context, stdin string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// New brings the swarm up; the test's cleanup takes it down. It skips
// under -short, without root, and when the host engine cannot be started
// (saying why); missing programs fail the test, naming the installer.
func New(t *testing.T) *Swarm {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a two-node Docker Swarm; skipped under -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("a second Docker engine in a network namespace needs root")
	}
	for _, p := range []string{"docker", "dockerd", "containerd", "nsenter", "ip", "go"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s not found: .ci/install-tools --tests installs what the swarm tests need", p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	began := time.Now()
	HostEngine(t)
	LockHost(t)
	reapLeftovers(t, ctx)
	if state, err := run(ctx, "", "docker", "info", "--format", "{{.Swarm.LocalNodeState}}"); err != nil {
		t.Fatalf("reading the host engine's swarm state: %v", err)
	} else if state != "inactive" {
		t.Fatalf("the host engine's swarm state is %q: this test makes the host engine a manager and leaves the swarm afterwards, which would destroy that swarm", state)
	}
	_, err := run(ctx, "", "docker", "network", "inspect", "docker_gwbridge")
	hadGWBridge := err == nil

	pid := os.Getpid()
	s := &Swarm{Namespace: fmt.Sprintf("tbsw-%d", pid)}
	net := 200 + pid%50
	s.ManagerAddr, s.WorkerAddr = fmt.Sprintf("169.254.%d.1", net), fmt.Sprintf("169.254.%d.2", net)
	s.Dir, err = os.MkdirTemp("", "tbsw")
	if err != nil {
		t.Fatal(err)
	}
	// Whose it is, for a later run to reap if this one is killed.
	if err := os.WriteFile(filepath.Join(s.Dir, "owner"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	s.link(t, ctx, pid)
	s.startWorker(t, ctx)
	// Before the swarm, so that its removal comes after the swarm's.
	tb := time.Now()
	s.buildImage(t, ctx, pid)
	s.Build = time.Since(tb)
	token := s.initManager(t, ctx, pid, hadGWBridge)
	s.joinWorker(t, ctx, token)

	s.Up = time.Since(began)
	t.Logf("swarm up in %v (image build %v, swarm init %v, join %v): manager %s at %s, worker %s at %s (%s)",
		s.Up.Round(time.Millisecond), s.Build.Round(time.Millisecond), s.Init.Round(time.Millisecond), s.Join.Round(time.Millisecond),
		s.ManagerID, s.ManagerAddr, s.WorkerID, s.WorkerAddr, s.Worker)
	return s
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// link makes the worker's network namespace and the veth between it and
// the host, with the cleanups of both and of s.Dir, registered first to
// run last: the directory, then the namespace.
func (s *Swarm) link(t *testing.T, ctx context.Context, pid int) {
	t.Helper()
	hostIf, nsIf := fmt.Sprintf("tbsw%dh", pid), fmt.Sprintf("tbsw%dn", pid)
	ip := func(args ...string) error { _, err := run(ctx, "", "ip", args...); return err }
	t.Cleanup(func() {
		unmountUnder(t, s.Dir)
		if err := os.RemoveAll(s.Dir); err != nil {
			t.Errorf("removing %s: %v", s.Dir, err)
		}
	})
	must(t, ip("netns", "add", s.Namespace))
	t.Cleanup(func() {
		ctx := context.Background()
		// Anything still in the namespace is the worker's (a container
		// shim its engine did not stop): ours to end, by its ID.
		if pids, err := run(ctx, "", "ip", "netns", "pids", s.Namespace); err == nil && pids != "" {
			for _, f := range strings.Fields(pids) {
				var p int
				if _, err := fmt.Sscan(f, &p); err == nil && p > 1 {
					t.Logf("ending process %d left in %s", p, s.Namespace)
					syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		if _, err := run(ctx, "", "ip", "netns", "del", s.Namespace); err != nil {
			t.Errorf("removing the namespace: %v", err)
		}
		// The host end goes with the namespace's end unless something
		// still holds the namespace.
		if _, err := run(ctx, "", "ip", "link", "show", hostIf); err == nil {
			run(ctx, "", "ip", "link", "del", hostIf)
		}
	})
	must(t, ip("link", "add", hostIf, "type", "veth", "peer", "name", nsIf))
	must(t, ip("link", "set", nsIf, "netns", s.Namespace))
	must(t, ip("addr", "add", s.ManagerAddr+"/30", "dev", hostIf))
	must(t, ip("link", "set", hostIf, "up"))
	must(t, ip("-n", s.Namespace, "addr", "add", s.WorkerAddr+"/30", "dev", nsIf))
	must(t, ip("-n", s.Namespace, "link", "set", nsIf, "up"))
	must(t, ip("-n", s.Namespace, "link", "set", "lo", "up"))
}

// initManager makes the host engine the swarm's manager, on the host end
// only, labelled as this run's, and returns the worker's join token.
func (s *Swarm) initManager(t *testing.T, ctx context.Context, pid int, hadGWBridge bool) string {
	t.Helper()
	t0 := time.Now()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := run(ctx, "", "docker", "swarm", "leave", "--force"); err != nil {
			t.Errorf("the host engine leaving the swarm: %v", err)
		}
		if !hadGWBridge {
			if _, err := run(ctx, "", "docker", "network", "inspect", "docker_gwbridge"); err == nil {
				if _, err := run(ctx, "", "docker", "network", "rm", "docker_gwbridge"); err != nil {
					t.Errorf("removing docker_gwbridge: %v", err)
				}
			}
		}
	})
	_, err := run(ctx, "", "docker", "swarm", "init", "--advertise-addr", s.ManagerAddr, "--listen-addr", s.ManagerAddr+":2377")
	must(t, err)
	s.Init = time.Since(t0)
	owner := strconv.Itoa(pid)
	if !hadGWBridge {
		owner += ",gwbridge"
	}
	s.ManagerID, err = run(ctx, "", "docker", "info", "--format", "{{.Swarm.NodeID}}")
	must(t, err)
	_, err = run(ctx, "", "docker", "node", "update", "--label-add", ownerLabel+"="+owner, s.ManagerID)
	must(t, err)
	// The routing mesh would open a VXLAN port on every address; host
	// networking needs none of it.
	_, err = run(ctx, "y\n", "docker", "network", "rm", "ingress")
	must(t, err)
	token, err := run(ctx, "", "docker", "swarm", "join-token", "-q", "worker")
	must(t, err)
	return token
}

// joinWorker joins the worker's engine to the swarm, on its end of the
// veth, and waits until the manager sees it ready.
func (s *Swarm) joinWorker(t *testing.T, ctx context.Context, token string) {
	t.Helper()
	t1 := time.Now()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if s.workerDown {
			return
		}
		if _, err := run(ctx, "", "docker", "-H", s.Worker, "swarm", "leave", "--force"); err != nil {
			t.Errorf("the worker leaving the swarm: %v", err)
		}
	})
	_, err := run(ctx, "", "docker", "-H", s.Worker, "swarm", "join", "--token", token,
		"--advertise-addr", s.WorkerAddr, "--listen-addr", s.WorkerAddr+":2377", s.ManagerAddr+":2377")
	must(t, err)
	s.Join = time.Since(t1)
	s.WorkerID, err = run(ctx, "", "docker", "-H", s.Worker, "info", "--format", "{{.Swarm.NodeID}}")
	must(t, err)
	for {
		st, err := run(ctx, "", "docker", "node", "inspect", "--format", "{{.Status.State}}", s.WorkerID)
		if err == nil && st == "ready" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the worker never became ready: %v %s", err, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// HostEngine starts containerd and dockerd on the host when no engine
// answers, as compose/prepare.sh does, and leaves them running. It skips
// under -short, without root, and when the engine cannot start.
func HostEngine(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Docker engine; skipped under -short")
	}
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("docker not found: .ci/install-tools --tests installs what the swarm tests need")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := run(ctx, "", "docker", "info"); err == nil {
		return
	}
	if os.Getenv("DOCKER_HOST") != "" {
		t.Skipf("no Docker engine answers at DOCKER_HOST=%s", os.Getenv("DOCKER_HOST"))
	}
	if os.Geteuid() != 0 {
		t.Skip("no Docker engine answers, and starting one needs root")
	}
	start := func(name, sock string, args ...string) {
		logf := "/var/log/" + name + ".log"
		f, err := os.OpenFile(logf, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Skipf("cannot start %s: %v", name, err)
		}
		defer f.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdout, cmd.Stderr = f, f
		// Its own session: the daemon outlives the test, as a service.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Skipf("cannot start %s: %v", name, err)
		}
		go cmd.Wait()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
				t.Logf("started %s on the host (log: %s); it keeps running", name, logf)
				return
			}
		}
		t.Skipf("the Docker engine cannot start here: %s made no %s within 30s; %s", name, sock, tailFile(logf))
	}
	if _, err := run(ctx, "", "ctr", "version"); err != nil {
		start("containerd", "/run/containerd/containerd.sock")
	}
	start("dockerd", "/var/run/docker.sock", "--containerd=/run/containerd/containerd.sock",
		"--bridge=none", "--iptables=false", "--ip-forward=false")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := run(ctx, "", "docker", "info"); err == nil {
			return
		}
	}
	t.Skipf("the Docker engine cannot start here: dockerd does not answer; %s", tailFile("/var/log/dockerd.log"))
}

func tailFile(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return path + ": " + strings.Join(lines, " / ")
}

// LockPath is the lock a swarm test holds while it reads or changes the
// host engine's swarm state (LockHost).
const LockPath = "/run/topobench-swarmtest.lock"

// lockPath is LockPath but in LockHost's own test.
var lockPath = LockPath

// hostLock is this test binary's hold on LockPath: the tests holding it
// and the open file (flock locks belong to an open file, so a second
// open in this process would wait for the first).
var hostLock struct {
	sync.Mutex
	n int
	f *os.File
}

// LockHost waits, up to 15 minutes, until no other test binary holds the
// host engine's swarm, and holds it until t's cleanups end (New takes it
// too). go test runs packages' test binaries in parallel, and two swarm
// tests making the one host engine a manager at once would find it in a
// swarm, or take down each other's.
func LockHost(t *testing.T) {
	t.Helper()
	hostLock.Lock()
	defer hostLock.Unlock()
	if hostLock.n == 0 {
		f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			t.Fatalf("opening the swarm tests' lock: %v", err)
		}
		deadline := time.Now().Add(15 * time.Minute)
		for waited := false; ; waited = true {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
			if err == nil {
				break
			}
			if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
				f.Close()
				t.Fatalf("locking %s (another test binary's swarm test holds it): %v", lockPath, err)
			}
			if !waited {
				t.Logf("waiting for another test binary's swarm test to end (%s)", lockPath)
			}
			time.Sleep(time.Second)
		}
		hostLock.f = f
	}
	hostLock.n++
	// Registered before New's other cleanups, so it runs after them.
	t.Cleanup(func() {
		hostLock.Lock()
		defer hostLock.Unlock()
		if hostLock.n--; hostLock.n == 0 {
			hostLock.f.Close()
			hostLock.f = nil
		}
	})
}

// startWorker starts the worker's containerd and dockerd in the
// namespace, each stopped (SIGTERM, then SIGKILL) at cleanup.
func (s *Swarm) startWorker(t *testing.T, ctx context.Context) {
	t.Helper()
	d := s.Dir
	ctd := filepath.Join(d, "ctd")
	// The worker's own containerd: one shared with the host would start
	// the worker's containers in the host's namespace. No CRI plugin:
	// nothing here is Kubernetes, and it would open a streaming port.
	conf := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = ""
[debug]
  address = ""
[metrics]
  address = ""
`, filepath.Join(ctd, "root"), filepath.Join(ctd, "state"), filepath.Join(ctd, "containerd.sock"))
	if err := os.MkdirAll(ctd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "containerd.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	nsPath := "--net=/run/netns/" + s.Namespace
	s.daemon(t, "containerd", filepath.Join(ctd, "containerd.sock"), "nsenter", nsPath, "containerd", "--config", filepath.Join(d, "containerd.toml"))
	sock := filepath.Join(d, "docker.sock")
	s.Worker = "unix://" + sock
	s.daemon(t, "dockerd", sock, "nsenter", nsPath, "dockerd",
		"--containerd", filepath.Join(ctd, "containerd.sock"),
		"--data-root", filepath.Join(d, "data"), "--exec-root", filepath.Join(d, "exec"),
		"-H", s.Worker, "--pidfile", filepath.Join(d, "docker.pid"),
		"--containerd-namespace", s.Namespace, "--containerd-plugins-namespace", s.Namespace+"-plugins",
		"--bridge=none", "--iptables=false", "--ip-forward=false")
	for {
		if _, err := run(ctx, "", "docker", "-H", s.Worker, "info"); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("the worker's dockerd does not answer; %s", tailFile(filepath.Join(d, "dockerd.log")))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// daemon starts a long-running program logging to DIR/NAME.log, waits
// for its socket, and registers its stop.
func (s *Swarm) daemon(t *testing.T, name, sock string, args ...string) {
	t.Helper()
	logf := filepath.Join(s.Dir, name+".log")
	f, err := os.Create(logf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group: a Ctrl-C to the test is not the daemon's
	// to see; the cleanup stops it in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the worker's %s: %v", name, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			t.Errorf("the worker's %s ignored SIGTERM for 30s; killing it; %s", name, tailFile(logf))
			cmd.Process.Kill()
			<-exited
		}
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return
		}
		select {
		case <-exited:
			t.Fatalf("the worker's %s exited at start: %s", name, tailFile(logf))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker's %s made no %s within 30s: %s", name, sock, tailFile(logf))
		}
	}
}

// buildImage builds the image from this checkout (swarm.BuildImage) on
// the manager's engine; cleanup deletes it.
func (s *Swarm) buildImage(t *testing.T, ctx context.Context, pid int) {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s.Image = fmt.Sprintf("topobench/swarmtest:%d", pid)
	if err := swarm.BuildImage(ctx, swarm.Config{}, root, s.Image); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := removeImage(context.Background(), s.Image); err != nil {
			t.Error(err)
		}
	})
}

// removeImage removes image and the containers made from it first: swarm
// removes its tasks' containers some time after their services, and a
// killed test leaves them. The image's name carries a test's PID, so
// both are that test's.
func removeImage(ctx context.Context, image string) error {
	if ids, err := run(ctx, "", "docker", "ps", "-aq", "--filter", "ancestor="+image); err == nil && ids != "" {
		if _, err := run(ctx, "", "docker", append([]string{"rm", "-f"}, strings.Fields(ids)...)...); err != nil {
			return fmt.Errorf("removing the containers of %s: %w", image, err)
		}
	}
	if _, err := run(ctx, "", "docker", "image", "rm", image); err != nil {
		return fmt.Errorf("removing the image: %w", err)
	}
	return nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// unmountUnder undoes every mount below dir, deepest first: dockerd
// leaves its namespace's bind mount and overlay mounts behind when
// stopped.
func unmountUnder(t *testing.T, dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			mounts = append(mounts, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(mounts)))
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmounting %s: %v", m, err)
		}
	}
}

// Label sets node's topobench.role label to roles ("server", "load",
// "server,load").
func (s *Swarm) Label(t *testing.T, node, roles string) {
	t.Helper()
	if _, err := run(context.Background(), "", "docker", "node", "update", "--label-add", "topobench.role="+roles, node); err != nil {
		t.Fatal(err)
	}
}

// StopWorker stops the worker's engine: its node goes down, and a job
// pinned to it never starts.
func (s *Swarm) StopWorker(t *testing.T) {
	t.Helper()
	pid, err := os.ReadFile(filepath.Join(s.Dir, "docker.pid"))
	if err != nil {
		t.Fatal(err)
	}
	var p int
	fmt.Sscan(string(pid), &p)
	if err := syscall.Kill(p, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.workerDown = true
}

// ownerLabel marks the manager node of a test swarm with the test's PID
// (and ",gwbridge" when the swarm made docker_gwbridge).
const ownerLabel = "topobench.swarmtest"

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) != syscall.ESRCH
}

// reapLeftovers takes down what a test killed before its cleanup left:
// a host swarm its manager label names a dead PID for, namespaces
// tbsw-PID and directories owned by dead PIDs, and their images.
func reapLeftovers(t *testing.T, ctx context.Context) {
	t.Helper()
	if st, err := run(ctx, "", "docker", "info", "--format", "{{.Swarm.LocalNodeState}}"); err == nil && st == "active" {
		owner, _ := run(ctx, "", "docker", "node", "inspect", "--format", "{{index .Spec.Labels \""+ownerLabel+"\"}}", "self")
		p, gw, _ := strings.Cut(owner, ",")
		if pid, err := strconv.Atoi(p); err == nil && !alive(pid) {
			t.Logf("leaving the swarm a killed test (pid %d) left on the host engine", pid)
			if _, err := run(ctx, "", "docker", "swarm", "leave", "--force"); err != nil {
				t.Errorf("leaving a leftover swarm: %v", err)
			}
			if gw == "gwbridge" {
				run(ctx, "", "docker", "network", "rm", "docker_gwbridge")
			}
		}
	}
	if out, err := run(ctx, "", "ip", "netns", "list"); err == nil {
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			name := f[0]
			p, ok := strings.CutPrefix(name, "tbsw-")
			pid, err := strconv.Atoi(p)
			if !ok || err != nil || alive(pid) {
				continue
			}
			t.Logf("removing namespace %s a killed test left", name)
			if pids, err := run(ctx, "", "ip", "netns", "pids", name); err == nil {
				for _, f := range strings.Fields(pids) {
					if q, err := strconv.Atoi(f); err == nil && q > 1 {
						syscall.Kill(q, syscall.SIGKILL)
					}
				}
			}
			time.Sleep(200 * time.Millisecond)
			run(ctx, "", "ip", "netns", "del", name)
			run(ctx, "", "ip", "link", "del", fmt.Sprintf("tbsw%dh", pid))
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "tbsw*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || perr != nil || alive(pid) {
			continue
		}
		t.Logf("removing %s a killed test left", d)
		unmountUnder(t, d)
		os.RemoveAll(d)
		removeImage(ctx, fmt.Sprintf("topobench/swarmtest:%d", pid))
	}
}

package netns

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/topobench/topobench/internal/proc"
	"github.com/topobench/topobench/internal/testenv"
)

// helperEnv makes the test binary act as a small helper program when it is
// started inside a namespace (see helperMain).
const helperEnv = "TB_NETNS_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if err := helperMain(mode, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperMain runs one helper mode:
//
//	listen          listen on ServerAddr:0, print "PORT n", answer one
//	                "ping" with "pong"; first check loopback works
//	dial ADDR       send "ping" to ADDR, print the answer
//	create          create a pair, start sleep in srv, print
//	                "NAMES srv cli sleep-pid", sleep
func helperMain(mode string, args []string) error {
	deadline := time.Now().Add(30 * time.Second)
	switch mode {
	case "listen":
		if err := loopbackCheck(); err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
		ln, err := net.Listen("tcp4", net.JoinHostPort(ServerAddr, "0"))
		if err != nil {
			return err
		}
		defer ln.Close()
		ln.(*net.TCPListener).SetDeadline(deadline)
		fmt.Printf("PORT %d\n", ln.Addr().(*net.TCPAddr).Port)
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(deadline)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err
		}
		if line != "ping\n" {
			return fmt.Errorf("got %q, want ping", line)
		}
		_, err = fmt.Fprintf(c, "pong from %s to %s\n", c.LocalAddr(), c.RemoteAddr())
		return err
	case "dial":
		c, err := net.DialTimeout("tcp4", args[0], 5*time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(deadline)
		if _, err := fmt.Fprintf(c, "ping\n"); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		fmt.Print(line)
		return err
	case "create":
		p, err := Create(context.Background(), Options{})
		if err != nil {
			return err
		}
		// A server of the run, started as a harness starts one: its death
		// signal must reach it through ip netns exec.
		srv, err := proc.Start(context.Background(), "sleep", []string{"60"}, proc.Options{NetNS: p.Server})
		if err != nil {
			return err
		}
		fmt.Printf("NAMES %s %s %d\n", p.Server, p.Client, srv.Pid())
		time.Sleep(time.Until(deadline)) // killed long before
		return p.Close()
	}
	return fmt.Errorf("unknown helper mode %q", mode)
}

// loopbackCheck connects to itself over 127.0.0.1, which only works when
// lo is up in the namespace.
func loopbackCheck() error {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	c, err := net.DialTimeout("tcp4", ln.Addr().String(), 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

func TestParseName(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		ok   bool
	}{
		{"tb-4242-0-srv", 4242, true},
		{"tb-4242-12-cli", 4242, true},
		{Name(17, 3, "srv"), 17, true},
		{"tb-4242-0-xyz", 0, false},
		{"tb-4242-srv", 0, false},
		{"tb-0-0-srv", 0, false},
		{"tb-042-0-srv", 0, false},
		{"tb--1-0-srv", 0, false},
		{"tb-4242-x-cli", 0, false},
		{"other-ns", 0, false},
		{"tb-4242-0-srv-extra", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, ok := ParseName(tt.name)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.pid, pid)
		})
	}
}

func TestParseList(t *testing.T) {
	// Captured from "ip netns list" (iproute2 6.x), without and with a
	// namespace id assigned.
	for _, file := range []string{"list-noid.txt", "list-id.txt"} {
		t.Run(file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", file))
			require.NoError(t, err)
			defer f.Close()
			names, err := ParseList(f)
			require.NoError(t, err)
			assert.Equal(t, []string{"tb-4242-0-cli", "tb-4242-0-srv", "other-ns"}, names)
		})
	}
	_, err := ParseList(strings.NewReader("a\nb c d\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "line 2")
}

func TestPair(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	p, err := Create(ctx, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	pid, ok := ParseName(p.Server)
	require.True(t, ok, p.Server)
	assert.Equal(t, os.Getpid(), pid)
	names, err := List(ctx)
	require.NoError(t, err)
	assert.Contains(t, names, p.Server)
	assert.Contains(t, names, p.Client)

	// The veth addresses exist only inside the namespaces.
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		pfx, err := netip.ParsePrefix(a.String())
		require.NoError(t, err)
		assert.NotEqual(t, p.ServerAddr, pfx.Addr(), "server address visible in the harness's namespace")
		assert.NotEqual(t, p.ClientAddr, pfx.Addr(), "client address visible in the harness's namespace")
	}

	// A TCP exchange from the client namespace to a listener in the server
	// namespace, over the veth.
	self, err := os.Executable()
	require.NoError(t, err)
	var lout testenv.Buffer
	listener, err := proc.Start(ctx, self, nil, proc.Options{
		NetNS: p.Server, Env: []string{helperEnv + "=listen"}, Stdout: &lout,
	})
	require.NoError(t, err)
	var port int
	require.Eventually(t, func() bool {
		_, err := fmt.Sscanf(lout.String(), "PORT %d\n", &port)
		return err == nil || listener.Exited()
	}, 20*time.Second, 10*time.Millisecond)
	if port == 0 {
		t.Fatalf("the listener printed no port: %v", listener.Wait())
	}

	target := net.JoinHostPort(p.ServerAddr.String(), strconv.Itoa(port))
	var dout testenv.Buffer
	dialer, err := proc.Start(ctx, self, []string{target}, proc.Options{
		NetNS: p.Client, Env: []string{helperEnv + "=dial"}, Stdout: &dout,
	})
	require.NoError(t, err)
	require.NoError(t, dialer.Wait())
	require.NoError(t, listener.Wait())
	// The server saw the client's veth address: the exchange crossed the
	// veth, not a loopback.
	assert.True(t, strings.HasPrefix(dout.String(), fmt.Sprintf("pong from %s to %s:", target, ClientAddr)), dout.String())

	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "a second Close is a no-op")
	names, err = List(ctx)
	require.NoError(t, err)
	assert.NotContains(t, names, p.Server)
	assert.NotContains(t, names, p.Client)
}

func TestCloseKillsLeftProcesses(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	p, err := Create(ctx, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	sleeper, err := proc.Start(ctx, "sleep", []string{"60"}, proc.Options{NetNS: p.Server})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		pids, _ := Pids(ctx, p.Server)
		return slices.Contains(pids, sleeper.Pid())
	}, 5*time.Second, 10*time.Millisecond)

	err = p.Close()
	require.ErrorIs(t, err, ErrLeftProcesses)
	select {
	case <-sleeper.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the process left in the namespace was not killed")
	}
	assert.NoFileExists(t, filepath.Join(runDir, p.Server))
}

// TestCleanupAfterKill kills a process that created a pair, as a harness
// killed mid-run, and checks that Cleanup removes what it left: the two
// namespaces and a process still running inside one. A pair whose owner
// lives is left alone.
func TestCleanupAfterKill(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	mine, err := Create(ctx, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { mine.Close() })

	self, err := os.Executable()
	require.NoError(t, err)
	var out testenv.Buffer
	owner, err := proc.Start(ctx, self, nil, proc.Options{Env: []string{helperEnv + "=create"}, Stdout: &out})
	require.NoError(t, err)
	var srv, cli string
	var server int
	require.Eventually(t, func() bool {
		_, err := fmt.Sscanf(out.String(), "NAMES %s %s %d\n", &srv, &cli, &server)
		return err == nil || owner.Exited()
	}, 20*time.Second, 10*time.Millisecond)
	if cli == "" {
		t.Fatalf("the owner printed no names: %v", owner.Wait())
	}
	t.Cleanup(func() {
		// Should Cleanup fail, do not leave the leftovers to others.
		exec.Command("ip", "netns", "delete", srv).Run()
		exec.Command("ip", "netns", "delete", cli).Run()
	})

	// A server the dead harness left running inside its namespace; own
	// session, no death signal tied to this test.
	orphan := exec.Command("ip", "netns", "exec", srv, "sleep", "60")
	orphan.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, orphan.Start())
	orphanDone := make(chan error, 1)
	go func() { orphanDone <- orphan.Wait() }()

	require.NoError(t, owner.Signal(syscall.SIGKILL))
	<-owner.Done()
	// The owner's server dies with it (proc's death signal).
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", server))
		return err != nil || strings.Contains(string(b), ") Z ")
	}, 5*time.Second, 10*time.Millisecond, "the killed harness's server outlived it")
	require.FileExists(t, filepath.Join(runDir, srv))
	require.FileExists(t, filepath.Join(runDir, cli))

	removed, err := Cleanup(ctx)
	require.NoError(t, err)
	assert.Contains(t, removed, srv)
	assert.Contains(t, removed, cli)
	assert.NotContains(t, removed, mine.Server)
	assert.NoFileExists(t, filepath.Join(runDir, srv))
	assert.NoFileExists(t, filepath.Join(runDir, cli))
	assert.FileExists(t, filepath.Join(runDir, mine.Server), "a live owner's pair was removed")
	select {
	case <-orphanDone:
	case <-time.After(5 * time.Second):
		orphan.Process.Kill()
		t.Fatal("the process left in the dead harness's namespace was not killed")
	}
	require.NoError(t, mine.Close())
}

func TestDelay(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	before, err := List(ctx)
	require.NoError(t, err)
	p, err := Create(ctx, Options{Delay: 100 * time.Microsecond})
	if errors.Is(err, ErrNoNetem) {
		// This kernel has no netem: the error says so, and the half-built
		// pair is gone.
		assert.Contains(t, err.Error(), "sch_netem")
		t.Log(err)
		after, err := List(ctx)
		require.NoError(t, err)
		for _, n := range after {
			if pid, ok := ParseName(n); ok && pid == os.Getpid() {
				assert.Contains(t, before, n, "namespace %s left behind by a failed Create", n)
			}
		}
		return
	}
	require.NoError(t, err)
	defer p.Close()
	var out testenv.Buffer
	q, err := proc.Start(ctx, "tc", []string{"-n", p.Server, "qdisc", "show", "dev", ServerIf}, proc.Options{Stdout: &out})
	require.NoError(t, err)
	require.NoError(t, q.Wait())
	assert.Contains(t, out.String(), "netem")
	assert.Contains(t, out.String(), "delay 100us")
	require.NoError(t, p.Close())
}

func TestBadDelay(t *testing.T) {
	_, err := Create(context.Background(), Options{Delay: -time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "link delay")
}

// TestDialer dials from inside the client namespace to a listener the
// harness opens inside the server namespace, then checks that the dialing
// thread came back: a plain dial afterwards still reaches the harness's own
// loopback.
func TestDialer(t *testing.T) {
	testenv.NeedNetns(t)
	ctx := context.Background()
	p, err := Create(ctx, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })

	// A listener created inside the server namespace, through the same
	// switch: a socket stays where it was made.
	ln := listenIn(t, p.Server, net.JoinHostPort(ServerAddr, "0"))
	accepted := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- err.Error()
			return
		}
		accepted <- c.RemoteAddr().String()
		c.Close()
	}()
	c, err := Dialer(p.Client)(ctx, "tcp", ln.Addr().String())
	require.NoError(t, err)
	c.Close()
	assert.True(t, strings.HasPrefix(<-accepted, ClientAddr+":"), "the dial crossed the veth from the client")

	// From the harness's namespace the veth address is unreachable.
	dctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = Dialer("")(dctx, "tcp", ln.Addr().String())
	assert.Error(t, err)

	// Many dials in a row leave no goroutine's thread in a namespace.
	home, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer home.Close()
	for i := 0; i < 20; i++ {
		c, err := Dialer(p.Client)(ctx, "tcp", ln.Addr().String())
		if err == nil {
			c.Close()
		}
		c, err = net.Dial("tcp", home.Addr().String())
		require.NoError(t, err, "dial %d from the harness's namespace", i)
		c.Close()
	}

	_, err = Dialer("tb-no-such-ns")(ctx, "tcp", ln.Addr().String())
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// listenIn opens a TCP listener inside the named namespace.
func listenIn(t *testing.T, name, addr string) net.Listener {
	t.Helper()
	type res struct {
		ln  net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// Enter and come back, as dialIn does. A thread left inside would
		// not always die with the goroutine: the runtime keeps the main
		// thread, and the test process would then sit in the namespace
		// its Close empties.
		runtime.LockOSThread()
		home, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join(runDir, name))
		if err != nil {
			ch <- res{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- res{nil, err}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			if ln != nil {
				ln.Close()
			}
			ch <- res{nil, err} // the thread stays locked and ends with the goroutine
			return
		}
		runtime.UnlockOSThread()
		ch <- res{ln, err}
	}()
	r := <-ch
	require.NoError(t, r.err)
	t.Cleanup(func() { r.ln.Close() })
	return r.ln
}

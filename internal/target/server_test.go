package target_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/parity"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/topology"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.Cleanup()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	os.Exit(code)
}

// builds holds the targets built by this test binary, each built once.
var builds struct {
	mu   sync.Mutex
	dir  string
	prog map[string]*target.Program
}

// build returns the named target built with its real toolchain; it skips
// under -short.
func build(t *testing.T, ctx context.Context, name string) *target.Program {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the targets with javac and erlc and runs them")
	}
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if p := builds.prog[name]; p != nil {
		return p
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "targets")
		require.NoError(t, err)
		builds.dir, builds.prog = dir, map[string]*target.Program{}
	}
	tg, err := target.Lookup(name)
	require.NoError(t, err)
	require.NoError(t, tg.Check(), "CI installs every toolchain (.ci/install-tools --tests)")
	p, err := tg.Build(ctx, filepath.Join(builds.dir, name))
	require.NoError(t, err)
	builds.prog[name] = p
	return p
}

// conn is one raw HTTP/1.1 connection, as wrk and parity speak it.
type conn struct {
	c  net.Conn
	br *bufio.Reader
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	return &conn{c: c, br: bufio.NewReader(c)}
}

func (c *conn) send(t *testing.T, raw string) {
	t.Helper()
	_, err := io.WriteString(c.c, raw)
	require.NoError(t, err)
}

func (c *conn) read(t *testing.T, head bool) parity.Response {
	t.Helper()
	r, err := parity.ReadResponse(c.br, head)
	require.NoError(t, err)
	return r
}

// do sends a request with the given header lines and body and reads the
// answer.
func (c *conn) do(t *testing.T, method, path, header, body string) parity.Response {
	t.Helper()
	c.send(t, method+" "+path+" HTTP/1.1\r\nHost: x\r\n"+header+"\r\n"+body)
	return c.read(t, method == "HEAD")
}

// closed reports whether the server closed the connection (EOF) within d.
func (c *conn) closed(d time.Duration) bool {
	_ = c.c.SetReadDeadline(time.Now().Add(d))
	_, err := c.br.ReadByte()
	return err == io.EOF
}

var dateLine = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)

// masked is a header block with the Date value masked, after checking it
// has net/http's format.
func masked(t *testing.T, block []byte) string {
	t.Helper()
	d := dateLine.Find(block)
	require.NotNil(t, d, "no Date line in %q", block)
	_, err := time.Parse(time.RFC1123, strings.TrimSuffix(strings.TrimPrefix(string(d), "Date: "), "\r"))
	assert.NoError(t, err, "Date %q", d)
	return dateLine.ReplaceAllString(string(block), "Date: *\r")
}

// sortedLines is a masked block's lines in order, for a target whose
// header order is a documented deviation.
func sortedLines(t *testing.T, block []byte) []string {
	lines := strings.Split(masked(t, block), "\r\n")
	slices.Sort(lines)
	return lines
}

// reference is what cmd/hello answers, the bytes every target must send.
type reference struct {
	get, head, post, close parity.Response
}

func helloReference(t *testing.T, ctx context.Context) reference {
	t.Helper()
	bin := testenv.HelloBin(t)
	l, err := topology.FreeLayout(testenv.ShortDir(t))
	require.NoError(t, err)
	st, err := topology.Lookup("standalone")
	require.NoError(t, err)
	h, err := hellorun.Start(ctx, hellorun.Config{Bin: bin, Layout: l, Topologies: []topology.Topology{st}, Grace: time.Second})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Stop()) }()
	c := dial(t, l.HTTP)
	var ref reference
	ref.get = c.do(t, "GET", "/", "", "")
	ref.head = c.do(t, "HEAD", "/", "", "")
	ref.post = c.do(t, "POST", "/", "Content-Length: 5\r\n", "hello")
	ref.close = dial(t, l.HTTP).do(t, "GET", "/", "Connection: close\r\n", "")
	require.Len(t, ref.get.Header, parity.HeaderBlockSize)
	return ref
}

// TestTargets builds every target with its real toolchain, runs it, and
// holds it to cmd/hello's bytes: GET and HEAD, 405, Connection: close,
// keep-alive over 1000 requests and pipelining on one connection, the
// handler wait, the processor count, and a clean stop.
func TestTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the targets with javac and erlc and runs them")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ref := helloReference(t, ctx)

	for _, tg := range target.All() {
		t.Run(tg.Name, func(t *testing.T) {
			p := build(t, ctx, tg.Name)
			var stderr testenv.Buffer
			addr := testenv.FreeAddr(t)
			s, err := p.Start(ctx, target.Config{Addr: addr, Procs: 1, Stderr: &stderr, Grace: 3 * time.Second})
			require.NoError(t, err)
			stopped := false
			defer func() {
				if !stopped {
					assert.NoError(t, s.Stop())
				}
			}()
			assert.Regexp(t, `^`+tg.Name+`: ready on `+regexp.QuoteMeta(addr)+`, 1 (schedulers|processors)`, lastReady(stderr.String(), tg.ReadyPrefix()),
				"the processor value reaches the runtime")

			same := func(t *testing.T, want, got parity.Response) {
				t.Helper()
				if tg.Deviation != "" {
					assert.Equal(t, sortedLines(t, want.Header), sortedLines(t, got.Header), "same lines (%s)", tg.Deviation)
					assert.Len(t, got.Header, len(want.Header))
				} else {
					assert.Equal(t, masked(t, want.Header), masked(t, got.Header), "byte for byte but the Date value")
				}
				assert.Equal(t, string(want.Body), string(got.Body))
			}

			c := dial(t, addr)
			get, head := c.do(t, "GET", "/", "", ""), c.do(t, "HEAD", "/", "", "")
			t.Run("GET and HEAD", func(t *testing.T) {
				same(t, ref.get, get)
				same(t, ref.head, head)
				assert.Empty(t, head.Body)
				assert.NoError(t, parity.Check([]parity.Result{
					{Topology: topology.Topology{Name: "go"}, GET: ref.get, HEAD: ref.head},
					{Topology: topology.Topology{Name: tg.Name}, GET: get, HEAD: head},
				}))
			})
			t.Run("405 keeps the connection", func(t *testing.T) {
				same(t, ref.post, c.do(t, "POST", "/", "Content-Length: 5\r\n", "hello"))
				assert.Equal(t, 200, c.do(t, "GET", "/after-post", "", "").Status)
			})
			t.Run("keep-alive 1000 requests", func(t *testing.T) {
				kc := dial(t, addr)
				for i := 0; i < 1000; i++ {
					method := "GET"
					if i%10 == 9 {
						method = "HEAD"
					}
					r := kc.do(t, method, "/"+strconv.Itoa(i), "", "")
					require.Equal(t, 200, r.Status, "request %d", i)
					if method == "GET" {
						require.Equal(t, "Hello World\n", string(r.Body), "request %d", i)
					}
				}
			})
			t.Run("pipelined", func(t *testing.T) {
				pc := dial(t, addr)
				pc.send(t, strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\nHost: x\r\n\r\n", 50))
				for i := 0; i < 100; i++ {
					r := pc.read(t, i%2 == 1)
					require.Equal(t, 200, r.Status, "response %d", i)
				}
			})
			t.Run("peer that reads late", func(t *testing.T) {
				// Enough pipelined requests to fill the socket buffers both
				// ways: the server must stop reading while the peer does not
				// read, and resume once it does.
				const n = 20000
				rc := dial(t, addr)
				sent := make(chan error, 1)
				go func() {
					_, err := io.WriteString(rc.c, strings.Repeat("GET / HTTP/1.1\r\nHost: x\r\n\r\n", n))
					sent <- err
				}()
				time.Sleep(500 * time.Millisecond)
				for i := 0; i < n; i++ {
					r, err := parity.ReadResponse(rc.br, false)
					require.NoError(t, err, "response %d of %d", i, n)
					require.Equal(t, 200, r.Status, "response %d", i)
				}
				require.NoError(t, <-sent)
			})
			t.Run("Connection: close", func(t *testing.T) {
				cc := dial(t, addr)
				r := cc.do(t, "GET", "/", "Connection: close\r\n", "")
				if tg.Deviation == "" {
					same(t, ref.close, r)
				}
				assert.Equal(t, "close", r.Fields.Get("Connection"))
				assert.True(t, cc.closed(5*time.Second), "the server closes the connection")
			})
			t.Run("malformed request", func(t *testing.T) {
				bc := dial(t, addr)
				bc.send(t, "FOO\r\n\r\n")
				assert.Equal(t, 400, bc.read(t, false).Status)
				assert.True(t, bc.closed(5*time.Second), "the server closes the connection")
			})
			t.Run("wait", func(t *testing.T) {
				wc := dial(t, addr)
				start := time.Now()
				r := wc.do(t, "GET", "/x?a=1&wait=300ms", "", "")
				took := time.Since(start)
				same(t, ref.get, r)
				assert.GreaterOrEqual(t, took, 300*time.Millisecond)
				assert.Less(t, took, 5*time.Second)
				// cmd/hello's handler work is not done here, so it is refused.
				for _, bad := range []string{"wait=61s", "wait=abc", "wait=", "wait=-1s", "wait=1", "work=200us", "a=1&work", "wait=1ms&work=1ms"} {
					assert.Equal(t, 400, wc.do(t, "GET", "/?"+bad, "", "").Status, bad)
				}
				assert.Equal(t, 200, wc.do(t, "HEAD", "/?wait=1ms", "", "").Status)
				// A pipelined answer stays behind the one that waits.
				wc.send(t, "GET /?wait=200ms HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n")
				start = time.Now()
				assert.Equal(t, 200, wc.read(t, false).Status)
				assert.Equal(t, 200, wc.read(t, false).Status)
				assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
			})

			if tg.Name == "java-pool" {
				require.NoError(t, c.c.Close()) // frees the thread that served it
				t.Run("a pool thread per kept-alive connection", func(t *testing.T) {
					// The model the report states: with every pool thread
					// holding a kept-alive connection, the next connection
					// waits until one of them closes.
					var held []*conn
					for i := 0; i < target.DefaultPoolThreads; i++ {
						hc := dial(t, addr)
						require.Equal(t, 200, hc.do(t, "GET", "/", "", "").Status, "connection %d", i)
						held = append(held, hc)
					}
					next := dial(t, addr)
					next.send(t, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
					require.NoError(t, next.c.SetReadDeadline(time.Now().Add(500*time.Millisecond)))
					_, err := next.br.Peek(1)
					require.Error(t, err, "answered although every pool thread was busy")
					require.NoError(t, held[0].c.Close())
					require.NoError(t, next.c.SetReadDeadline(time.Now().Add(10*time.Second)))
					assert.Equal(t, 200, next.read(t, false).Status)
				})
			}

			children := childPids(s.Pid())
			stopped = true
			require.NoError(t, s.Stop())
			require.True(t, s.Exited())
			for _, pid := range children {
				assert.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 50*time.Millisecond,
					"child %d of %s outlived it", pid, tg.Name)
			}
			_, err = net.DialTimeout("tcp", addr, time.Second)
			assert.Error(t, err, "nothing listens after Stop")
		})
	}
}

func lastReady(stderr, prefix string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

func childPids(pid int) []int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie waiting for its reaper is gone for our purposes.
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// TestStartErrors: a taken port and a cancelled start fail with the
// target's own words and leave nothing running.
func TestStartErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs targets")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	for _, name := range []string{"erlang", "java-threads"} {
		t.Run(name, func(t *testing.T) {
			p := build(t, ctx, name)
			_, err := p.Start(ctx, target.Config{Addr: taken.Addr().String()})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "starting "+name+" on "+taken.Addr().String()+": it exited before it was ready")
			assert.Regexp(t, `(?i)listening on .*(eaddrinuse|address already in use)`, err.Error())

			_, err = p.Start(ctx, target.Config{Addr: "127.0.0.1:99999"})
			assert.ErrorContains(t, err, "99999")
		})
	}
}

// TestHostilePeers: idle connections and half-sent requests must not stop
// a target from answering others. java-pool is the exception its model
// makes: a pool thread stays with its connection, so only the header
// timeout (10 s) frees threads held by half-sent requests.
func TestHostilePeers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs targets")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, name := range target.Names() {
		t.Run(name, func(t *testing.T) {
			p := build(t, ctx, name)
			addr := testenv.FreeAddr(t)
			s, err := p.Start(ctx, target.Config{Addr: addr, Procs: 1})
			require.NoError(t, err)
			defer func() { assert.NoError(t, s.Stop()) }()

			idle, halfSent := 200, 200
			within := 10 * time.Second
			if name == "java-pool" {
				idle, halfSent, within = 0, target.DefaultPoolThreads, 20*time.Second
			}
			for i := 0; i < idle; i++ {
				dial(t, addr)
			}
			for i := 0; i < halfSent; i++ {
				dial(t, addr).send(t, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
			}
			time.Sleep(200 * time.Millisecond) // let the server take them all
			c := dial(t, addr)
			require.NoError(t, c.c.SetDeadline(time.Now().Add(within)))
			start := time.Now()
			r := c.do(t, "GET", "/", "", "")
			assert.Equal(t, 200, r.Status)
			t.Logf("answered after %s with %d idle and %d half-sent peers", time.Since(start).Round(time.Millisecond), idle, halfSent)
		})
	}
}

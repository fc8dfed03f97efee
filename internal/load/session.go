package load

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/hdr"
)

// Opened is the reply to open: the connections that were dialed, the
// dials that failed, and how long dialing took.
type Opened struct {
	Pool          string `json:"pool"`
	Connections   int    `json:"connections"`
	ConnectErrors int64  `json:"connect_errors"`
	// Retries are tries to connect that failed before one succeeded (a
	// handshake lost to a full accept queue).
	Retries int64 `json:"retries"`
	// OpenFilesLimit is the session process's open-files limit (the Go
	// runtime raises the soft limit to the hard one at start); every
	// pool's connections must fit under it together.
	OpenFilesLimit int           `json:"open_files_limit"`
	Elapsed        time.Duration `json:"elapsed_ns"`
}

// Window is one measured window of a pool: its Summary as the engine
// computes it (requests, errors in wrk's classes, reconnects, latency, the
// rate over DurationNs, the process's CPU over it) and the exact HDR
// histogram of its answers, the answers with their end inside the window.
//
// Before the window, connections the server closed while the pool was
// idle were dialed again (counted in Reconnects), and the pool was loaded
// for LeadNs (window NAME D lead L): the start from idle, whose answers
// are counted as LeadAnswers and nowhere else. After it, the pool stopped
// sending and waited DrainNs for the answers still out, which are counted
// as Drained and nowhere else. Neither is measured time.
type Window struct {
	Pool  string    `json:"pool"`
	Index int       `json:"index"` // 1 for the pool's first window
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// DurationNs is the measured time: Start to End.
	DurationNs  int64 `json:"duration_ns"`
	LeadNs      int64 `json:"lead_ns,omitempty"`
	LeadAnswers int64 `json:"lead_answers,omitempty"`
	DrainNs     int64 `json:"drain_ns"`
	Drained     int64 `json:"drained"`
	// CPUUserNs and CPUSysNs are the load process's own CPU time over the
	// measured time (getrusage of itself).
	CPUUserNs int64 `json:"cpu_user_ns"`
	CPUSysNs  int64 `json:"cpu_sys_ns"`
	// CallCPUNs is the load process's CPU time over the whole command:
	// lead, measured time and drain, the span the harness samples the
	// machine and the servers over.
	CallCPUNs int64 `json:"call_cpu_ns"`
	// Counters are the counter files' texts at the measured time's start
	// and end (window ... counters PATH,...; counters.go).
	Counters []CounterReading `json:"counters,omitempty"`
	// Histogram is the window's latency histogram in microseconds, as
	// hdr.WriteEncoded writes it (base64 of HdrHistogram's V2 encoding).
	Histogram string `json:"histogram"`
	// Slices are the window's slices, when it was cut (slices N).
	Slices []Slice `json:"slices,omitempty"`
	Summary
}

// Result is the window as a run's result: its summary and its histogram.
func (w Window) Result() (*Result, error) {
	h, err := hdr.ReadEncoded(strings.NewReader(w.Histogram))
	if err != nil {
		return nil, fmt.Errorf("window %d of %s: %w", w.Index, w.Pool, err)
	}
	return &Result{Summary: w.Summary, Histogram: h}, nil
}

// PoolTotals is the reply to close: what the pool did over all its
// windows, and the connections it opened before the first.
type PoolTotals struct {
	Pool     string `json:"pool"`
	Windows  int    `json:"windows"`
	Opened   int    `json:"opened"`
	Sent     int64  `json:"sent"`
	Requests int64  `json:"requests"`
	Drained  int64  `json:"drained"`
	// LeadAnswers are the answers of the windows' leads.
	LeadAnswers int64 `json:"lead_answers,omitempty"`
	// Errors counts the open's connect errors and every window's errors.
	Errors     Errors `json:"errors"`
	Reconnects int64  `json:"reconnects"`
	MeasuredNs int64  `json:"measured_ns"`
}

func (t *PoolTotals) add(w Window) {
	t.Windows++
	t.Sent += w.Sent
	t.Requests += w.Requests
	t.Drained += w.Drained
	t.LeadAnswers += w.LeadAnswers
	t.Reconnects += w.Reconnects
	t.MeasuredNs += w.DurationNs
	e := &t.Errors
	e.Connect += w.Errors.Connect
	e.Read += w.Errors.Read
	e.Write += w.Errors.Write
	e.Timeout += w.Errors.Timeout
	e.Status += w.Errors.Status
	e.Framing += w.Errors.Framing
}

// sessionSpare are the descriptors a session leaves to everything else
// in its process.
const sessionSpare = 64

// session is the state of ServeSession: its pools by name.
type session struct {
	ctx   context.Context
	procs int
	pools map[string]*pool
	lease procsLease // the pools' loops run together (together)
}

// ServeSession runs a load session (see Opened, Window, PoolTotals for
// the replies): it reads commands from in and writes replies to out until
// quit, the end of in or of ctx, then closes every pool. procs is the
// process's GOMAXPROCS, which a pool's spec must not contradict. The
// error is one reading in or writing out, or ctx's.
func ServeSession(ctx context.Context, in io.Reader, out io.Writer, procs int) error {
	if procs < 1 {
		return fieldErr("procs", "%d: want at least 1", procs)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	s := &session{ctx: ctx, procs: procs, pools: map[string]*pool{}}
	defer s.closeAll()

	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	enc := json.NewEncoder(out)
	for {
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok = <-lines:
		}
		if !ok {
			return <-readErr
		}
		reply, quit := s.do(line)
		if err := enc.Encode(reply); err != nil {
			return fmt.Errorf("writing the reply to %q: %w", line, err)
		}
		if quit {
			return nil
		}
	}
}

type errorReply struct {
	Error string `json:"error"`
}

// do carries out one command line and returns its reply.
func (s *session) do(line string) (reply any, quit bool) {
	cmd, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
	name, arg, _ := strings.Cut(strings.TrimSpace(rest), " ")
	arg = strings.TrimSpace(arg)
	fail := func(format string, args ...any) (any, bool) {
		return errorReply{Error: cmd + ": " + fmt.Sprintf(format, args...)}, false
	}
	if cmd == "quit" {
		s.closeAll()
		return struct {
			Quit bool `json:"quit"`
		}{true}, true
	}
	if name == "" {
		return fail("no pool named: want open NAME SPEC, window NAME DURATION [lead DURATION] [slices N] [counters PATH,...], together NAME,NAME DURATION [...], close NAME or quit")
	}
	if cmd == "together" {
		ws, err := windowArgs(arg)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		t, err := s.together(strings.Split(name, ","), ws)
		if err != nil {
			return fail("%v", err)
		}
		return t, false
	}
	p := s.pools[name]
	switch cmd {
	case "open":
		if p != nil {
			return fail("pool %s is open already", name)
		}
		if strings.Contains(name, ",") {
			return fail("pool name %q: no commas (together lists pools with them)", name)
		}
		spec := DefaultSpec()
		if err := json.Unmarshal([]byte(arg), &spec); err != nil {
			return fail("%s: spec: %v", name, err)
		}
		opt, err := s.options(spec)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		opt.lease = &s.lease
		p, o, err := openPool(s.ctx, name, opt)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		o.OpenFilesLimit, _ = OpenFilesLimit()
		s.pools[name] = p
		return o, false
	case "window":
		if p == nil {
			return fail("no pool %s", name)
		}
		ws, err := windowArgs(arg)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		w, err := p.window(ws.Lead, ws.Duration, ws.Slices, ws.Counters)
		if err != nil {
			return fail("%s: %v", name, err)
		}
		return w, false
	case "close":
		if p == nil {
			return fail("no pool %s", name)
		}
		delete(s.pools, name)
		return p.close(), false
	}
	return fail("unknown command: want open, window, together, close or quit")
}

// options checks a pool's spec and returns its engine options: closed
// loop, within the open-files limit beside the pools already open.
func (s *session) options(spec Spec) (Options, error) {
	switch {
	case spec.Probe != 0:
		return Options{}, fieldErr("probe", "a session's pools are load, not a probe")
	case spec.Rate != 0:
		return Options{}, fieldErr("rate", "a session's pools are closed loop")
	case spec.Out != "":
		return Options{}, fieldErr("out", "a session replies with each window's histogram instead")
	case spec.Procs != s.procs:
		return Options{}, fieldErr("procs", "%d: the session runs on %d (load -session -procs)", spec.Procs, s.procs)
	case !spec.StartAt.IsZero():
		return Options{}, fieldErr("start-at", "a session's windows start when asked")
	case spec.Requests != 0:
		return Options{}, fieldErr("requests", "a session's windows are bounded by their duration")
	}
	if spec.Duration == 0 && spec.Requests == 0 {
		spec.Duration = time.Second // not used: each window has its own
	}
	if err := spec.Validate(); err != nil {
		return Options{}, err
	}
	opt := spec.RunOptions()
	limit, err := OpenFilesLimit()
	if err != nil {
		return Options{}, err
	}
	// Each event loop holds two descriptors: its epoll and its eventfd.
	open, loops := 0, 0
	for _, p := range s.pools {
		open += len(p.e.conns) + 2*len(p.e.loops)
	}
	if !opt.Goroutines {
		loops = 2 * min(cmp.Or(opt.Threads, DefaultThreads), opt.Connections)
	}
	if open+opt.Connections+loops+sessionSpare > limit {
		return Options{}, fieldErr("connections", "%d beside the %d open: more than the open-files limit %d allows: %w",
			opt.Connections, open, limit, ErrTooManyFiles)
	}
	return opt, nil
}

func (s *session) closeAll() {
	for name, p := range s.pools {
		p.close()
		delete(s.pools, name)
	}
}

// ReplyError is a session's reply {"error": ...}: the command failed and
// the session goes on.
type ReplyError struct{ Msg string }

func (e *ReplyError) Error() string { return "load session: " + e.Msg }

// ErrSessionBroken is returned by a SessionClient whose previous command
// was abandoned (its context ended) or whose session stopped answering:
// replies can no longer be matched to commands.
var ErrSessionBroken = errors.New("load session out of step")

// SessionClient drives a load session (topobench load -session, or
// ServeSession) over its standard input (w) and output (r). Its methods
// may be called from several goroutines; each command waits for its reply.
type SessionClient struct {
	mu     chan struct{} // one command at a time
	w      io.Writer
	r      *bufio.Reader
	broken error
}

// NewSessionClient returns a client writing commands to w and reading
// replies from r.
func NewSessionClient(w io.Writer, r io.Reader) *SessionClient {
	return &SessionClient{mu: make(chan struct{}, 1), w: w, r: bufio.NewReaderSize(r, 64<<10)}
}

// Open dials the pool's connections before anything is measured. Its
// spec is closed loop (no rate, probe or out); its duration and requests
// are not used, each window has its own.
func (c *SessionClient) Open(ctx context.Context, name string, spec Spec) (Opened, error) {
	if err := checkPoolName(name); err != nil {
		return Opened{}, err
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return Opened{}, err
	}
	var o Opened
	return o, c.roundTrip(ctx, "open "+name+" "+string(b), &o)
}

// Window measures pool name for d and returns the window's record.
func (c *SessionClient) Window(ctx context.Context, name string, d time.Duration) (Window, error) {
	return c.WindowAfter(ctx, name, 0, d)
}

// WindowAfter loads pool name for lead, unmeasured, then measures it for
// d, and returns the window's record.
func (c *SessionClient) WindowAfter(ctx context.Context, name string, lead, d time.Duration) (Window, error) {
	return c.WindowCounting(ctx, name, lead, d, nil)
}

// Close closes pool name's connections and returns its totals.
func (c *SessionClient) Close(name string) (PoolTotals, error) {
	if err := checkPoolName(name); err != nil {
		return PoolTotals{}, err
	}
	var t PoolTotals
	return t, c.roundTrip(context.Background(), "close "+name, &t)
}

// Quit closes every pool and ends the session process (which exits 0).
func (c *SessionClient) Quit() error {
	return c.roundTrip(context.Background(), "quit", nil)
}

func checkPoolName(name string) error {
	if name == "" || strings.ContainsAny(name, " \t\r\n") {
		return fmt.Errorf("load session: pool name %q: want one word", name)
	}
	return nil
}

// roundTrip sends one command line and decodes its one reply line into v.
func (c *SessionClient) roundTrip(ctx context.Context, line string, v any) error {
	select {
	case c.mu <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-c.mu }()
	if c.broken != nil {
		return c.broken
	}
	cmd, _, _ := strings.Cut(line, " ")
	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	go func() {
		if _, err := io.WriteString(c.w, line+"\n"); err != nil {
			got <- result{err: fmt.Errorf("load session: sending %s: %w", cmd, err)}
			return
		}
		b, err := c.r.ReadBytes('\n')
		if err != nil {
			got <- result{err: fmt.Errorf("load session: reading the reply to %s: %w", cmd, err)}
			return
		}
		got <- result{b: b}
	}()
	var r result
	select {
	case r = <-got:
	case <-ctx.Done():
		c.broken = fmt.Errorf("%w: %s abandoned: %w", ErrSessionBroken, cmd, ctx.Err())
		return ctx.Err()
	}
	if r.err != nil {
		c.broken = fmt.Errorf("%w: %w", ErrSessionBroken, r.err)
		return r.err
	}
	var e errorReply
	if err := json.Unmarshal(r.b, &e); err != nil {
		c.broken = fmt.Errorf("%w: reply to %s: %w", ErrSessionBroken, cmd, err)
		return c.broken
	}
	if e.Error != "" {
		return &ReplyError{Msg: e.Error}
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(r.b, v); err != nil {
		return fmt.Errorf("load session: reply to %s: %w", cmd, err)
	}
	return nil
}

package load

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/topobench/topobench/internal/hdr"
	"golang.org/x/sys/unix"
)

// Options configure one run. Rate > 0 selects open mode, otherwise closed
// mode. A run must be bounded: Requests, Duration or both. Run checks them
// (see Spec for their JSON form, whose keys the tags give).
type Options struct {
	Target Target `json:"target"`
	// Allow is the one address besides loopback the target may have: the
	// link-local server end of a veth in network namespaces the caller
	// created (see ParseTargetAllow).
	Allow netip.Addr `json:"allow,omitzero"`
	// AllowRemote lets Allow be a routable address: the server of
	// another machine (a cluster's server node), named on purpose. Off,
	// load never leaves this machine's loopback and links (CheckAllow).
	AllowRemote bool `json:"allow-remote,omitzero"`

	// Connections is the number of connections in closed mode (each sends
	// its next request when the previous answer is in, as wrk does), and
	// the number opened before the schedule starts in open mode.
	Connections int `json:"connections"`

	// Rate is the target in requests per second (open mode); Arrivals
	// spaces them (Poisson by default).
	Rate     float64  `json:"rate,omitzero"`
	Arrivals Arrivals `json:"arrivals,omitzero"`
	// MaxConnections bounds the connections open mode opens when no
	// connection is free at a request's intended start (default
	// Connections or 10000, whichever is larger: 1k req/s with a 1 s wait needs
	// about 1000 at once, more with Poisson bursts; the open-files limit here
	// is 20000).
	MaxConnections int `json:"max-connections,omitzero"`

	Requests int64         `json:"requests,omitzero"` // stop after this many requests (0: no limit)
	Duration time.Duration `json:"duration,omitzero"` // stop sending after this long (0: no limit)

	// Timeout ends a request that has no complete answer this long after
	// it was sent (counted as a timeout); it also bounds connecting and,
	// in open mode, how long a request may wait for a free connection
	// before it is dropped. Default 2 s, as wrk's.
	Timeout time.Duration `json:"timeout,omitzero"`

	Seed uint64 `json:"seed"` // for Poisson arrivals

	// StartAt, if set, is the wall-clock instant the measured run begins:
	// the engine connects first, then waits for it, so that generators on
	// several machines start together. How late the start really was is
	// Summary.StartSkewMs; a StartAt already past starts at once, and the
	// skew says by how much.
	StartAt time.Time `json:"start-at,omitzero"`

	// Progress, if set, is called every ProgressEvery (default 1 s) from
	// its own goroutine.
	Progress      func(Progress) `json:"-"`
	ProgressEvery time.Duration  `json:"-"`

	// Threads is the closed loop's event loops, each on its own OS thread
	// over its share of the connections, as wrk's -t (default
	// DefaultThreads, at most Connections). While they run, each has a P
	// of its own (GOMAXPROCS is raised to Threads plus the run's own):
	// a loop blocked in epoll_wait holds its P in the system call, and a
	// loop whose wait returned would otherwise wait for the runtime's
	// monitor to take a P back, 20 µs or more each time. How many CPUs
	// the load may use is then its cpuset's, as for wrk's threads. Goroutines runs the closed
	// loop with a goroutine per connection instead, on Go's poller, as
	// open mode always does.
	Threads    int  `json:"threads,omitzero"`
	Goroutines bool `json:"goroutines,omitzero"`

	// NoPrime opens the connections without the first request each sends
	// otherwise before the measured time (unmeasured), as wrk opens its
	// own: the servers then answer every connection's first request in
	// the measured time. A caller that reads the servers' CPU time, or
	// the engine's, across the whole run rather than its measured time
	// (the sweep, a run per window, as it reads wrk's) needs it: primed,
	// every connection's first answer is the servers' CPU spent outside
	// the measured requests, and inflates their CPU a request. A first
	// answer a full
	// accept queue delays then falls in the measured time, as under wrk.
	NoPrime bool `json:"no-prime,omitzero"`

	// TLS is how to speak to an https:// target (see TLS); a goroutine
	// per connection only (Goroutines, or open mode): the event loops
	// refuse it.
	TLS TLS `json:"-"` // in a spec as tls-ca, tls-version, ... (see TLS)
	// Close sends "Connection: close" with every request, as wrk's
	// -H "Connection: close": the server closes each connection after its
	// answer and the next request opens a new one (a new handshake with
	// TLS, counted in Summary.Handshakes). A request's latency runs from
	// its send, after the connect, as wrk's does.
	Close bool `json:"close,omitzero"`

	// BufferSize is each connection's read buffer; a header block must fit
	// (default 4096).
	BufferSize int `json:"-"`

	// primeTarget, if set, is where a new connection's first request goes
	// (see conn.connect): the target without the handler wait, which
	// would hold every dial slot for the wait (Spec.RunOptions sets it).
	primeTarget Target
	// lease, if set, is the lease on GOMAXPROCS this engine's loops share
	// with other engines of the process (a session's pools).
	lease *procsLease
	// tlsConfig is TLS's client config, which fill builds.
	tlsConfig *tls.Config
}

// Progress is a snapshot during a run.
type Progress struct {
	Elapsed                time.Duration
	Sent, Answered, Errors int64
	Rate                   float64 // answers per second since the last snapshot
	Connections            int
}

// Result is a finished (or interrupted) run: its summary and the merged
// latency histogram in microseconds, measured from each request's intended
// start in open mode and from its send in closed mode.
type Result struct {
	Summary   Summary
	Histogram *hdrhistogram.Histogram
}

const (
	defaultTimeout = 2 * time.Second
	// cutRequest is conn.inflight once the watchdog cut a request that
	// had no answer after twice the timeout (a negative send time means
	// the request is past the timeout and counted as one, still waiting).
	cutRequest = math.MinInt64
	batch      = 64 // latencies a connection keeps before merging them
	// DialsInFlight bounds the connects under way at once, so that a
	// listener's accept queue is not flooded with thousands of handshakes
	// at a time (SYN drops, retransmits a second later, SYN cookies).
	DialsInFlight = 64
)

type engine struct {
	opt    Options
	req    []byte
	ctx    context.Context // cancelled when the run is cut short
	start  time.Time
	slack  time.Duration // StartAt minus the time the connections were open
	dialer net.Dialer

	stop  atomic.Bool // send no more requests
	abort atomic.Bool // requests in flight are cut and not counted
	// stopAt is now() when sending stopped: the end of the measured
	// time. An answer that comes in later is not counted (drained).
	stopAt atomic.Int64
	// cpuAt is the process's CPU time when sending stopped.
	cpuAt atomic.Pointer[cpuTimes]
	endMu sync.Mutex
	// window bounds a closed-loop run or session window (0: none), its
	// lead included.
	window time.Duration
	// lead is a session window's load before its measured time: answers
	// that end within it are counted apart (led), not measured.
	lead  time.Duration
	dials chan struct{} // a slot per connect under way (DialsInFlight)
	// giveUp is how long a request may wait for its answer before the
	// watchdog cuts its connection: twice the timeout, so that a late
	// answer (counted as a timeout) keeps the connection.
	giveUp time.Duration
	// prime makes a new connection count as open only once it has
	// answered one request (see conn.connect).
	prime    bool
	primeReq []byte

	mu     sync.Mutex // guards conns
	conns  []*conn
	shards []*shard
	wg     sync.WaitGroup

	// loops are the closed loop's event loops (none in open mode or with
	// Options.Goroutines); nassigned counts the connections given to
	// them, sa is the address they dial.
	loops     []*loop
	nassigned int
	sa        sockAddr
	wakeMu    sync.Mutex  // wakeLoops against closeLoops
	lease     *procsLease // raises GOMAXPROCS while the loops run
	restore   func()      // puts GOMAXPROCS back after the loops ran

	work   chan int64   // open mode: intended start, ns after start
	budget atomic.Int64 // closed mode: requests left when Requests > 0
}

// shard is one of a few histograms the connections merge their batches
// into: a lock per batch, not per request.
type shard struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

type conn struct {
	e     *engine
	shard *shard
	rr    respReader
	io    rawIO // the request and its answer on the descriptor

	mu sync.Mutex // guards nc against the watchdog and abort
	nc net.Conn

	// The event loop's connection (see loop): its loop and index there,
	// the raw descriptor (-1: none), its state, the send time of the
	// request in flight (or the connect's start) and whether that request
	// was counted as a timeout. Only the loop touches them while it runs.
	loop     *loop
	idx      int32
	fd       int
	st       uint8
	timedOut bool
	paid     bool // a request of the run's count is taken for it already
	sentAt   int64

	// inflight is the send time (ns after start, > 0) of the request in
	// flight, 0 when idle; minus the send time once the watchdog counted
	// it as a timeout (the connection still waits for its answer, as
	// wrk's does); cutRequest once the watchdog gave up on it.
	inflight atomic.Int64
	// opened is set once the connection has been open: any later dial
	// is a reconnect.
	opened bool

	sent, answered, errs                      atomic.Int64
	connectErr, readErr, writeErr, timeoutErr atomic.Int64
	statusErr, framingErr                     atomic.Int64
	reconnects, retries, drained, late, led   atomic.Int64
	// handshakes counts the TLS handshakes of the measured time, resumed
	// those that resumed a session and handshakeNs their time; hsNs and
	// hsResumed are the last dial's, not yet counted.
	handshakes, resumed, handshakeNs atomic.Int64
	hsNs                             int64
	hsResumed                        bool
	lat                              [batch]int64
	nlat                             int
	_                                [64]byte // keep neighbours' counters off this cache line
}

// Run drives the target as opt says and returns what it measured. An error
// means the options were invalid; failed requests are counted in the
// summary instead. When ctx ends, the run stops at once and the result holds
// what was measured until then (Summary.Interrupted).
func Run(ctx context.Context, opt Options) (*Result, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	if err := opt.Target.onLink(opt.Allow); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := newEngine(runCtx, opt)
	if err := e.startLoops(); err != nil {
		e.closeLoops()
		return nil, err
	}
	defer e.closeLoops()
	cpu0 := readCPU()

	// Connect first, at a pace the accept queue holds, so neither the
	// clock nor the schedule starts with connections still being opened.
	initial := e.open(opt.Connections)
	if !opt.StartAt.IsZero() {
		e.slack = time.Until(opt.StartAt)
		if err := sleepUntil(ctx, opt.StartAt); err != nil {
			e.closeAll()
			return &Result{Histogram: hdr.New(), Summary: e.summarize(hdr.New(), 0, 0, readCPU().sub(cpu0).total(), 0, 0, true)}, nil
		}
	}
	cpuStart := readCPU()
	e.start = time.Now()

	done := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(2)
	go func() { defer aux.Done(); e.watchdog(done) }()
	go func() { defer aux.Done(); e.progress(done) }()
	go func() {
		select {
		case <-ctx.Done():
			e.cut()
		case <-done:
		}
	}()

	late, dropped, window := e.drive(initial)
	e.wg.Wait()
	if e.cpuAt.Load() == nil { // ended by its count, not its clock
		c := readCPU()
		e.cpuAt.Store(&c)
	}
	elapsed := time.Since(e.start)
	if at := e.stopAt.Load(); at > 0 {
		elapsed = time.Duration(at) // answers cut in flight are not counted either
	}
	close(done)
	aux.Wait()
	e.closeAll()
	cpu := readCPU().sub(cpu0).total()

	res := &Result{Histogram: hdr.New()}
	for _, s := range e.shards {
		res.Histogram.Merge(s.h)
	}
	res.Summary = e.summarize(res.Histogram, elapsed, window, cpu, late, dropped, ctx.Err() != nil)
	if at := e.cpuAt.Load(); at != nil {
		res.Summary.setMeasuredCPU(at.sub(cpuStart))
	}
	return res, nil
}

// drive sends the run's requests over the initial connections: on the
// schedule in open loop, returning its late and dropped requests and its
// span; else closed loop, until the count, the duration or a cut.
func (e *engine) drive(initial []*conn) (late, dropped int64, window time.Duration) {
	opt := e.opt
	if opt.Rate > 0 {
		e.work = make(chan int64)
		for _, c := range initial {
			e.startOpen(c)
		}
		var lastDue int64
		late, dropped, lastDue = e.schedule()
		close(e.work)
		return late, dropped, time.Duration(lastDue) + time.Duration(float64(time.Second)/opt.Rate)
	}
	if opt.Requests > 0 {
		e.budget.Store(opt.Requests)
	}
	e.window = opt.Duration
	var t *time.Timer
	if opt.Duration > 0 {
		t = time.AfterFunc(opt.Duration, e.cut)
	}
	e.runClosed(initial)
	e.wg.Wait()
	e.restore()
	if t != nil {
		t.Stop()
	}
	return 0, 0, 0
}

// startLoops makes the closed loop's event loops, unless the run is open
// loop or asked for goroutines.
func (e *engine) startLoops() error {
	if e.opt.Rate > 0 || e.opt.Goroutines {
		return nil
	}
	sa, err := resolve(e.opt.Target)
	if err != nil {
		return &FieldError{"target", err}
	}
	e.sa = sa
	return e.newLoops(e.opt.Threads)
}

// runClosed starts the closed loop over cs: on the event loops, or a
// goroutine per connection. The caller waits on e.wg.
func (e *engine) runClosed(cs []*conn) {
	if len(e.loops) > 0 {
		e.runLoops()
		return
	}
	e.restore = func() {}
	for _, c := range cs {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); c.closedLoop() }()
	}
}

func newEngine(ctx context.Context, opt Options) *engine {
	e := &engine{opt: opt, req: opt.Target.request(opt.Close), ctx: ctx, dials: make(chan struct{}, DialsInFlight), prime: !opt.NoPrime}
	e.primeReq = e.req
	if opt.primeTarget.Network != "" {
		e.primeReq = opt.primeTarget.request(opt.Close)
	}
	if e.lease = opt.lease; e.lease == nil {
		e.lease = &procsLease{}
	}
	e.dialer.Timeout = opt.Timeout
	e.giveUp = 2 * opt.Timeout
	for range max(runtime.GOMAXPROCS(0), 1) {
		e.shards = append(e.shards, &shard{h: hdr.New()})
	}
	return e
}

// open adds n connections and dials them, at most DialsInFlight at a
// time; it returns when every dial has succeeded or failed (a connect
// error, counted).
func (e *engine) open(n int) []*conn {
	cs := make([]*conn, n)
	for i := range cs {
		cs[i] = e.newConn()
	}
	if len(e.loops) > 0 {
		e.assign(cs)
	}
	e.dialEach(cs)
	return cs
}

// dialEach dials each connection of cs in order, DialsInFlight at a
// time. A few goroutines take the connections in turn rather than one a
// connection: each of those grew its stack through Go's dialer, and
// runtime.newstack then took a visible share of a short run's CPU.
func (e *engine) dialEach(cs []*conn) {
	var wg sync.WaitGroup
	var next atomic.Int64
	for range min(DialsInFlight, len(cs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(cs)); i = next.Add(1) - 1 {
				if c := cs[i]; c.connect() && c.loop != nil {
					c.adopt()
				}
			}
		}()
	}
	wg.Wait()
}

// sleepUntil waits for the wall-clock instant t or the end of ctx. The
// timer runs on the monotonic clock from now, so a wall clock stepped in
// the meantime shows up in the start skew rather than being followed.
func sleepUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fill checks o and sets its defaults. Every error is a *FieldError
// naming the option by its JSON key (the load command's flag).
func (o *Options) fill() error {
	if o.Target.Network == "" {
		return fieldErr("target", "none given")
	}
	if err := CheckAllow(o.Allow, o.AllowRemote); err != nil {
		return err
	}
	if err := o.Target.check(o.Allow, o.AllowRemote); err != nil {
		return &FieldError{"target", fmt.Errorf("%s: %w", o.Target, err)}
	}
	if o.Requests < 0 {
		return fieldErr("requests", "%d: must not be negative", o.Requests)
	}
	if o.Duration < 0 {
		return fieldErr("duration", "%v: must not be negative", o.Duration)
	}
	if o.Requests == 0 && o.Duration == 0 {
		return fieldErr("duration", "a run needs a duration or a count of requests")
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout
	}
	if o.Timeout < 0 || o.Timeout > hdr.HighestMicros*time.Microsecond {
		return fieldErr("timeout", "%v: want more than 0, at most 60s", o.Timeout)
	}
	if o.BufferSize == 0 {
		o.BufferSize = 4096
	}
	if o.BufferSize < 256 {
		return fieldErr("buffer-size", "%d: want at least 256", o.BufferSize)
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = time.Second
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return fieldErr("rate", "%v: want 0 (closed mode) or a positive rate", o.Rate)
	}
	if o.Arrivals != "" {
		if _, err := ParseArrivals(string(o.Arrivals)); err != nil {
			return &FieldError{"arrivals", err}
		}
	}
	if o.Threads < 0 {
		return fieldErr("threads", "%d: must not be negative", o.Threads)
	}
	cfg, err := o.TLS.clientConfig(o.Target)
	if err != nil {
		return err
	}
	o.tlsConfig = cfg
	if o.Rate == 0 {
		return o.fillClosed()
	}
	return o.fillOpen()
}

// fillClosed checks and sets a closed-loop run's connections and event
// loops.
func (o *Options) fillClosed() error {
	if o.Connections <= 0 {
		return fieldErr("connections", "%d: closed mode needs at least one", o.Connections)
	}
	if !o.TLS.IsZero() && !o.Goroutines {
		return &FieldError{"goroutines", errTLSLoops}
	}
	if o.Goroutines {
		if o.Threads != 0 {
			return fieldErr("threads", "%d: applies to the event loops, not to goroutines", o.Threads)
		}
		return nil
	}
	if o.Threads == 0 {
		o.Threads = DefaultThreads
	}
	o.Threads = min(o.Threads, o.Connections)
	return nil
}

// fillOpen checks and sets an open-loop run's arrivals and connections.
func (o *Options) fillOpen() error {
	if o.Threads != 0 || o.Goroutines {
		return fieldErr("threads", "closed loop only: open mode runs a goroutine per connection")
	}
	if o.Arrivals == "" {
		o.Arrivals = Poisson
	}
	if o.Connections < 0 {
		return fieldErr("connections", "%d: must not be negative", o.Connections)
	}
	if o.MaxConnections < 0 {
		return fieldErr("max-connections", "%d: must not be negative", o.MaxConnections)
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = max(o.Connections, 10000)
	}
	if o.MaxConnections < max(o.Connections, 1) {
		return fieldErr("max-connections", "%d: below connections (%d)", o.MaxConnections, o.Connections)
	}
	return nil
}

// now is the time since the start in ns, never 0 (0 means idle).
func (e *engine) now() int64 { return int64(time.Since(e.start)) + 1 }

func (e *engine) newConn() *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	c := &conn{e: e, shard: e.shards[len(e.conns)%len(e.shards)], rr: respReader{buf: make([]byte, e.opt.BufferSize)}, fd: -1}
	e.conns = append(e.conns, c)
	return c
}

// isOpen says the connection has a descriptor, Go's or its loop's.
func (c *conn) isOpen() bool { return c.nc != nil || c.fd >= 0 }

func (e *engine) nconns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.conns)
}

func (e *engine) snapshot() []*conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conns[:len(e.conns):len(e.conns)]
}

// end stops sending: the end of the measured time. The requests in
// flight go on; their answers are drained, not counted.
// The window's clock and its caller may both end it: endMu makes the
// second wait for the first's CPU reading, which is stored before stopAt
// so that whoever sees stopAt also sees it.
func (e *engine) end() {
	e.endMu.Lock()
	defer e.endMu.Unlock()
	if e.stopAt.Load() == 0 {
		now := e.now()
		c := readCPU()
		e.cpuAt.Store(&c)
		e.stopAt.Store(now)
		e.stop.Store(true)
		e.wakeLoops()
	}
	e.stop.Store(true)
}

// cut stops sending and ends the requests in flight without counting
// them: the end of a closed-mode run, or an interruption.
func (e *engine) cut() {
	e.end()
	e.abort.Store(true)
	e.wakeLoops()
	for _, c := range e.snapshot() {
		c.mu.Lock()
		if c.nc != nil {
			c.nc.SetDeadline(time.Unix(1, 0))
		}
		c.mu.Unlock()
	}
}

// closeAll ends every connection with a reset (SO_LINGER 0) rather than
// a FIN: the closing side of a FIN keeps the socket in TIME_WAIT for a
// minute, and a sweep's runs of 5000 connections, each opened anew in a
// network namespace whose ports are 32768-60999 without TIME_WAIT reuse
// off loopback, run out of ports within three runs; connect() then
// spends seconds of system time searching for a free one and fails with
// EADDRNOTAVAIL. The connections are idle or cut by then: nothing is
// lost.
func (e *engine) closeAll() {
	for _, c := range e.snapshot() {
		c.mu.Lock()
		if tc, ok := netConn(c.nc).(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.mu.Unlock()
		c.close()
		if c.fd >= 0 {
			unix.SetsockoptLinger(c.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1})
			c.closeFD()
		}
		c.flush()
	}
}

// watchdog counts a request without an answer after the timeout as a
// timeout, as wrk does, and leaves its connection waiting for the answer;
// after twice the timeout it gives up on the request and cuts the
// connection, which is dialed again. It replaces a deadline set per
// request, which would cost two timer updates on every request.
func (e *engine) watchdog(done <-chan struct{}) {
	if len(e.loops) > 0 {
		return // the loops count their timeouts themselves
	}
	every := min(max(e.opt.Timeout/20, time.Millisecond), 50*time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	limit, giveUp := int64(e.opt.Timeout), int64(e.giveUp)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		now := e.now()
		for _, c := range e.snapshot() {
			s := c.inflight.Load()
			if s > 0 && now-s >= limit && c.inflight.CompareAndSwap(s, -s) {
				c.timeoutErr.Add(1)
				c.errs.Add(1)
				s = -s
			}
			if s < 0 && s != cutRequest && now+s >= giveUp && c.inflight.CompareAndSwap(s, cutRequest) {
				c.mu.Lock()
				if c.nc != nil {
					c.nc.SetDeadline(time.Unix(1, 0))
				}
				c.mu.Unlock()
			}
		}
	}
}

func (e *engine) totals() (sent, answered, errs int64, n int) {
	cs := e.snapshot()
	for _, c := range cs {
		sent += c.sent.Load()
		answered += c.answered.Load()
		errs += c.errs.Load()
	}
	return sent, answered, errs, len(cs)
}

func (e *engine) progress(done <-chan struct{}) {
	if e.opt.Progress == nil {
		return
	}
	tick := time.NewTicker(e.opt.ProgressEvery)
	defer tick.Stop()
	var lastAnswered int64
	last := time.Now()
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			sent, answered, errs, n := e.totals()
			e.opt.Progress(Progress{
				Elapsed: now.Sub(e.start), Sent: sent, Answered: answered, Errors: errs,
				Rate:        float64(answered-lastAnswered) / now.Sub(last).Seconds(),
				Connections: n,
			})
			lastAnswered, last = answered, now
		}
	}
}

// schedule hands each request to a free connection at its intended start.
// With no connection free it is late: the engine opens another connection
// (up to MaxConnections) and the request waits for whichever is free first.
// A request not handed over within Timeout of its intended start, or when
// the run is interrupted, is dropped. lastDue is the intended start of the
// last request scheduled.
func (e *engine) schedule() (late, dropped, lastDue int64) {
	o := e.opt
	s := newSchedule(o.Arrivals, o.Rate, o.Seed)
	sleep := time.NewTimer(time.Hour)
	defer sleep.Stop()
	open := len(e.conns)
	var i int64
	for ; o.Requests == 0 || i < o.Requests; i++ {
		due := int64(s.next()) + 1
		if o.Duration > 0 && due > int64(o.Duration) {
			break
		}
		lastDue = due
		if wait := due - e.now(); wait > 0 && !e.waitFor(sleep, wait) {
			return late, dropped + 1, lastDue
		}
		select {
		case e.work <- due:
			continue
		default:
		}
		late++
		if open < o.MaxConnections {
			e.startOpen(e.newConn())
			open++
		}
		giveUp := due + int64(o.Timeout) - e.now()
		if giveUp <= 0 {
			dropped++
			continue
		}
		sleep.Reset(time.Duration(giveUp))
		select {
		case e.work <- due:
			sleep.Stop()
		case <-sleep.C:
			dropped++
		case <-e.ctx.Done():
			return late, dropped + 1, lastDue
		}
	}
	return late, dropped, lastDue
}

// preciseWait is the longest wait schedule sleeps in the kernel: Go's
// timers wake up to a millisecond late when the process is otherwise
// idle, which would add that to every request's latency from its
// intended start, where nanosleep wakes within the timer slack.
const preciseWait = 2 * time.Millisecond

// waitFor waits wait nanoseconds, the time left until a request is due;
// false when the run ends meanwhile.
func (e *engine) waitFor(sleep *time.Timer, wait int64) bool {
	if time.Duration(wait) <= preciseWait {
		ts := syscall.NsecToTimespec(wait)
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
		return e.ctx.Err() == nil
	}
	sleep.Reset(time.Duration(wait))
	select {
	case <-sleep.C:
		return true
	case <-e.ctx.Done():
		return false
	}
}

func (e *engine) startOpen(c *conn) {
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for due := range e.work {
			c.do(due)
		}
	}()
}

func (c *conn) closedLoop() {
	e := c.e
	for !e.stop.Load() {
		if e.opt.Requests > 0 && e.budget.Add(-1) < 0 {
			return
		}
		c.do(0)
	}
}

// connectTries is how often connect dials a connection before it counts
// a connect error.
const connectTries = 3

// connect opens the connection before the measured time: it waits for
// one of the engine's dial slots, dials (a failed dial is tried again, up
// to connectTries; the last failure is a connect error) and, when the
// engine primes, sends one request and reads its answer, holding the slot
// until then. So at most DialsInFlight connections are being set up at
// once: a handshake the kernel completed into a full accept queue (and
// the server dropped) is retransmitted and recovered while its slot is
// held, not piled on by thousands more. A connection whose first request
// fails is closed; the measured loop dials it again. A connection that
// had been open before is counted as a reconnect.
func (c *conn) connect() bool {
	e := c.e
	select {
	case e.dials <- struct{}{}:
	case <-e.ctx.Done():
		return false
	}
	defer func() { <-e.dials }()
	for try := 1; ; try++ {
		last := try == connectTries
		if c.dial(last) {
			break
		}
		if last || e.ctx.Err() != nil || e.abort.Load() {
			return false
		}
		c.retries.Add(1)
	}
	c.markOpen()
	if e.prime && !c.prime() {
		c.close()
	}
	return true
}

// prime sends one request on the new connection and reads its answer,
// within primeTimeout; the answer is not measured.
func (c *conn) prime() bool {
	e := c.e
	c.nc.SetDeadline(time.Now().Add(max(e.opt.Timeout, primeTimeout)))
	_, err := c.nc.Write(e.primeReq)
	if err == nil {
		var resp response
		resp, err = c.rr.read(c.nc)
		if resp.close {
			return false
		}
	}
	if err == nil {
		err = c.nc.SetDeadline(time.Time{})
	}
	return err == nil
}

// primeTimeout bounds a new connection's first answer at least: a
// handshake dropped from a full accept queue is recovered by the
// client's retransmits, within a second or so.
const primeTimeout = 3 * time.Second

func (c *conn) markOpen() {
	if c.opened {
		c.reconnects.Add(1)
	}
	c.opened = true
}

// dial opens the connection; a failure is counted as a connect error
// when count is set.
func (c *conn) dial(count bool) bool {
	if c.loop != nil && !c.e.prime {
		return c.dialRaw(count)
	}
	c.hsNs, c.hsResumed = 0, false
	nc, err := c.e.dialer.DialContext(c.e.ctx, c.e.opt.Target.Network, c.e.opt.Target.Address)
	if err != nil {
		if count && !c.e.abort.Load() && c.e.ctx.Err() == nil { // not a dial the interruption cut
			c.connectErr.Add(1)
			c.errs.Add(1)
		}
		return false
	}
	if c.e.opt.tlsConfig != nil {
		t0 := time.Now()
		if nc, err = c.handshake(nc); err != nil {
			if count && !c.e.abort.Load() && c.e.ctx.Err() == nil {
				c.connectErr.Add(1)
				c.errs.Add(1)
			}
			return false
		}
		c.hsNs = int64(time.Since(t0))
	}
	c.io.attach(nc) // none under TLS: the connection itself reads and writes
	c.mu.Lock()
	c.nc = nc
	c.mu.Unlock()
	if c.e.abort.Load() { // cut while dialing: the sweep may have missed it
		c.close()
		return false
	}
	return true
}

func (c *conn) close() {
	c.mu.Lock()
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
	c.mu.Unlock()
}

// do sends one request and reads its answer. due is the intended start in
// open mode; 0 in closed mode, where latency runs from the send.
func (c *conn) do(due int64) {
	e := c.e
	if e.abort.Load() {
		return
	}
	if c.nc == nil {
		// A connection lost in the measured time is dialed again here,
		// before its next request's clock starts.
		if !c.dial(true) {
			return
		}
		c.markOpen()
		c.countHandshake()
	}
	sentAt := e.now()
	if due == 0 {
		// Closed mode ends here too, not only by its timer, which a busy
		// machine can fire late.
		if d := int64(e.window); d > 0 && sentAt > d {
			e.end()
			return
		}
		due = sentAt
	}
	c.sent.Add(1)
	c.inflight.Store(sentAt)
	resp, err, werr := c.exchange()
	end := e.now()
	c.tally(resp, err, werr, due, end, c.inflight.Swap(0))
}

// exchange writes the request and reads its answer, through the event
// loop's buffers or the connection itself; werr is the error if writing
// failed.
func (c *conn) exchange() (resp response, err, werr error) {
	if c.io.rc != nil {
		c.io.send(c.e.req)
		resp, err = c.rr.read(&c.io)
		if c.io.werr {
			werr = err
		}
		return resp, err, werr
	}
	_, werr = c.nc.Write(c.e.req)
	err = werr
	if werr == nil {
		resp, err = c.rr.read(c.nc)
	}
	return resp, err, werr
}

// tally counts a request that ended at end, by its answer or error and
// state, what the watchdog left in inflight; the connection is closed on
// an error or when the server asked.
func (c *conn) tally(resp response, err, werr error, due, end, state int64) {
	e := c.e
	switch {
	case e.abort.Load():
		c.close()
		return
	case state == cutRequest:
		// The watchdog counted the timeout and gave up on the answer.
		c.close()
		return
	case err == nil && state < 0:
		// A late answer to a request already counted as a timeout: the
		// connection was kept for it, as wrk keeps it.
		c.late.Add(1)
	case err == nil:
		if at := e.stopAt.Load(); at > 0 && end > at {
			c.drained.Add(1) // after the measured time
			break
		}
		if end <= int64(e.lead) {
			c.led.Add(1) // before the measured time
			break
		}
		c.answered.Add(1)
		if resp.status >= 400 {
			c.statusErr.Add(1)
			c.errs.Add(1)
		}
		c.record(end - due)
	case state < 0:
		// Counted as a timeout already; the connection failed later.
		c.close()
		return
	case errors.Is(err, os.ErrDeadlineExceeded):
		c.timeoutErr.Add(1)
		c.errs.Add(1)
		c.close()
		return
	default:
		switch {
		case errors.Is(err, ErrFraming):
			c.framingErr.Add(1)
			c.readErr.Add(1)
		case werr != nil:
			c.writeErr.Add(1)
		default:
			c.readErr.Add(1)
		}
		c.errs.Add(1)
		c.close()
		return
	}
	if resp.close {
		c.close()
	}
}

func (c *conn) record(ns int64) {
	c.lat[c.nlat] = ns
	c.nlat++
	if c.nlat == batch {
		c.flush()
	}
}

func (c *conn) flush() {
	if c.nlat == 0 {
		return
	}
	c.shard.mu.Lock()
	for _, ns := range c.lat[:c.nlat] {
		us := min(max((ns+500)/1000, hdr.LowestMicros), hdr.HighestMicros)
		c.shard.h.RecordValue(us)
	}
	c.shard.mu.Unlock()
	c.nlat = 0
}

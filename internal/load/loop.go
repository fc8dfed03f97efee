package load

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DefaultThreads is the closed loop's event loops when Options.Threads is
// 0: wrk's -t100 of the 2013 run.
const DefaultThreads = 100

// A loop is one of the closed loop's event loops, in wrk's shape: one OS
// thread, an epoll instance over its share of the connections, raw
// non-blocking descriptors, and per request the system calls wrk makes:
// one read where the answer comes in one piece; then an epoll_ctl that
// asks for the socket's writability, the write on the next wake-up that
// reports it, and an epoll_ctl that stops asking. Writing at once saves
// those calls but changes the shape: a loop that spends less time awake
// between its waits is asleep more often when its answers come, makes
// more context switches a request than wrk and reads standalone lower.
// The server's CPU pays for part of that: its writes wake the loops'
// threads (sock_def_readable in perf).
//
// The loop owns its connections' state while it runs: it counts the
// per-request timeout itself (the watchdog's work in the goroutine
// mode) and dials a lost connection again without blocking.
type loop struct {
	e      *engine
	epfd   int
	wakeFD int // an eventfd: cut and end wake the loop
	conns  []*conn
	events []unix.EpollEvent
	send   []*conn // answered in this wake-up: their next request goes out after the reads
	// since mirrors, by index, the send time of each connection's
	// request in flight or the start of its connect (0: neither), so
	// that scan reads one small array instead of every connection.
	since  []int64
	active int             // connections with a request in flight, a connect under way or a request to send
	down   int             // connections without a descriptor, to dial again
	budget bool            // the run's request count is spent
	wake   [8]byte         // eventfd's counter, read and written without allocating
	ev     unix.EpollEvent // watch's argument, kept off the heap's allocations
	sa     sockAddr        // the target: a copy of its own, as connect writes into it

	// wakes are the measured epoll_wait calls that returned answers,
	// ready the answers they returned: ready/wakes is how many
	// answers arrive together (the batching figure).
	wakes, ready int64

	// armed: the last wake-up asked for sockets' writability, which
	// the next epoll_wait reports at once; otherwise the loop has just
	// written, and its answers are not back yet.
	armed bool
}

// wakeData marks the eventfd in an epoll event; a connection's event
// carries its index in loop.conns.
const wakeData = -1

// loop states of a connection (conn.st)
const (
	stDown       = iota // no descriptor
	stIdle              // open, nothing in flight
	stWait              // a request in flight
	stConnecting        // a non-blocking connect under way
	stSend              // open, its next request waiting for the socket to be reported writable
)

// newLoops makes n event loops; each connection of the engine goes to
// one of them as it is adopted.
func (e *engine) newLoops(n int) error {
	for range n {
		l := &loop{e: e, epfd: -1, wakeFD: -1, sa: e.sa.clone()}
		e.loops = append(e.loops, l)
		var err error
		if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
			return fmt.Errorf("epoll_create: %w", err)
		}
		if l.wakeFD, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
			return fmt.Errorf("eventfd: %w", err)
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeData}
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, l.wakeFD, &ev); err != nil {
			return fmt.Errorf("epoll_ctl: %w", err)
		}
	}
	return nil
}

// closeLoops closes the loops' descriptors (not the connections').
func (e *engine) closeLoops() {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	for _, l := range e.loops {
		for _, fd := range []int{l.epfd, l.wakeFD} {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}
	e.loops = nil
}

// assign gives each connection not yet in a loop to one. A loop takes a
// run of neighbouring connections, as each of wrk's threads opens its
// own together: the connections are dialed about in order, so the
// server sets up a loop's connections one after another, and a loop's
// requests, sent together, reach connections the server set up
// together. Dealt out in turn instead (connection k to loop k mod 100),
// the server spent more CPU a request than under wrk and served less
// than wrk's rate. Each call starts where the last left off, so that
// small calls spread too.
func (e *engine) assign(cs []*conn) {
	first := e.nassigned
	for i, c := range cs {
		if c.loop != nil {
			continue
		}
		l := e.loops[(first+i*len(e.loops)/len(cs))%len(e.loops)]
		e.nassigned++
		c.loop, c.idx, c.fd = l, int32(len(l.conns)), -1
		l.conns = append(l.conns, c)
		l.since = append(l.since, 0)
	}
	for _, l := range e.loops {
		if cap(l.events) < len(l.conns)+1 {
			l.events = make([]unix.EpollEvent, len(l.conns)+1)
			l.send = make([]*conn, 0, len(l.conns))
		}
	}
}

// adopt takes a dialed (and primed) connection's descriptor from the Go
// runtime for the connection's loop: a duplicate of it, registered with
// the loop's epoll, and then the net.Conn closed, which takes the
// original out of Go's poller; the socket stays open through the
// duplicate. O_NONBLOCK belongs to the open file, which both share.
func (c *conn) adopt() bool {
	if c.fd >= 0 { // dialed for the loop already (dialRaw)
		if err := c.loop.register(c, unix.EPOLLIN); err != nil {
			c.closeFD()
			return false
		}
		c.st = stIdle
		return true
	}
	c.mu.Lock()
	nc := c.nc
	c.nc = nil
	c.mu.Unlock()
	if nc == nil {
		return false
	}
	defer nc.Close()
	fd, err := dupFD(nc)
	if err != nil {
		return false
	}
	c.fd = fd
	if err := c.loop.register(c, unix.EPOLLIN); err != nil {
		c.closeFD()
		return false
	}
	c.st = stIdle
	return true
}

// dialRaw opens c's connection for its loop without Go's net package,
// where nothing is sent on it before the measured time (Options.NoPrime):
// the loop reads and writes the descriptor itself, so Go's dialer, its
// poller's registration and the duplicate adopt takes of a net.Conn are
// work for nothing, and made the connect phase cost several times wrk's
// user time. It connects without blocking and waits for the connect in a poll of its
// own, bounded by the request timeout; a failure is counted as a
// connect error when count is set, as dial counts it.
func (c *conn) dialRaw(count bool) bool {
	e := c.e
	fd, err := startConnect(e.sa.clone()) // connect encodes into its address, and dials run together
	if err == unix.EINPROGRESS {
		err = waitConnected(e.ctx, fd, e.opt.Timeout)
	}
	if err != nil && fd >= 0 {
		unix.Close(fd)
	}
	if err != nil {
		if count && !e.abort.Load() && e.ctx.Err() == nil {
			c.connectErr.Add(1)
			c.errs.Add(1)
		}
		return false
	}
	if e.abort.Load() { // cut while dialing
		unix.Close(fd)
		return false
	}
	c.fd = fd
	return true
}

// startConnect makes a non-blocking socket for sa and starts its connect:
// err is the connect's (EINPROGRESS while it is under way), fd -1 when no
// socket was made. Both the loops' own dials and dialRaw start here.
func startConnect(sa sockAddr) (fd int, err error) {
	fd, err = unix.Socket(sa.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if sa.family != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as Go's net does
	}
	return fd, unix.Connect(fd, sa.addr)
}

// waitConnected waits for a non-blocking connect on fd to finish, at most
// d, and returns its outcome; it looks at ctx every 50 ms.
func waitConnected(ctx context.Context, fd int, d time.Duration) error {
	deadline := time.Now().Add(d)
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return unix.ETIMEDOUT
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := unix.Poll(pfd, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
		if err == unix.EINTR || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return err
		}
		soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return err
		}
		if soErr != 0 {
			return unix.Errno(soErr)
		}
		return nil
	}
}

// register adds c's descriptor to the loop's epoll, level-triggered as
// wrk's (an answer read in part is reported again).
func (l *loop) register(c *conn, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: c.idx}
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev)
}

// closeFD closes a loop connection's descriptor (its epoll registration
// goes with it).
func (c *conn) closeFD() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	c.st = stDown
}

// runLoops runs the closed loop on the loops until every loop is done:
// sending stopped (the window ended, its answers drained) or the run was
// cut. The caller waits on e.wg.
func (e *engine) runLoops() {
	// A P for each loop and one for the keeper, beyond the caller's own.
	n := len(e.loops) + 1
	e.lease.take(n)
	stop, kept := make(chan struct{}), make(chan struct{})
	go func() { defer close(kept); keep(stop) }()
	e.restore = sync.OnceFunc(func() {
		close(stop)
		<-kept
		e.lease.give(n)
	})
	for _, l := range e.loops {
		l.wakes, l.ready, l.budget = 0, 0, false
		e.wg.Add(1)
		go func() { defer e.wg.Done(); l.run() }()
	}
}

// procsLease raises GOMAXPROCS while event loops run and puts it back
// when the last of them ends. The engines of a session share one, as
// their pools' loops run together: each putting back what it found, the
// first to end left the other's loops, and its keeper, a single P.
type procsLease struct {
	mu    sync.Mutex
	extra int // the Ps the running engines asked for (0: none runs)
	base  int // GOMAXPROCS before the first
}

// take asks for n > 0 Ps more than the process had.
func (l *procsLease) take(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.extra == 0 {
		l.base = runtime.GOMAXPROCS(0)
	}
	l.extra += n
	runtime.GOMAXPROCS(l.base + l.extra)
}

// give returns the n Ps take asked for.
func (l *procsLease) give(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.extra -= n
	runtime.GOMAXPROCS(l.base + l.extra)
}

// keep holds one P of the Go runtime busy until stop is closed, so that
// the runtime's monitor thread (sysmon) keeps its 10 ms tick. Without it,
// every P is idle whenever every loop waits (blockWait hands the P
// back), and sysmon sleeps until a loop's return from epoll_wait wakes
// it, then polls at its shortest interval again: thousands of wake-ups a
// second that the loops' CPU a request pays for. It sleeps in a system call
// the runtime does not see, so its P stays its own, and yields every
// 5 ms, within the 10 ms after which sysmon would preempt it.
func keep(stop <-chan struct{}) {
	ts := unix.Timespec{Nsec: int64(5 * time.Millisecond)}
	for {
		select {
		case <-stop:
			return
		default:
		}
		// An interrupted sleep (a signal, the garbage collector's
		// preemption) just ends the turn early.
		unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		runtime.Gosched()
	}
}

// wakeLoops interrupts every loop's epoll_wait (cut, or the end of
// sending). A timer or the context may call it as the run ends: the lock
// keeps it off eventfds closeLoops closed (and their numbers reused).
func (e *engine) wakeLoops() {
	e.wakeMu.Lock()
	defer e.wakeMu.Unlock()
	var one [8]byte
	one[0] = 1 // eventfd counters are in host order; every Linux port this runs on is little-endian
	for _, l := range e.loops {
		unix.Write(l.wakeFD, one[:])
	}
}

// batching is the measured wake-ups' mean count of ready connections,
// and the wake-ups.
func (e *engine) batching() (perWake float64, wakes int64) {
	var ready int64
	for _, l := range e.loops {
		wakes += l.wakes
		ready += l.ready
	}
	if wakes > 0 {
		perWake = float64(ready) / float64(wakes)
	}
	return perWake, wakes
}

func (l *loop) run() {
	// One OS thread per loop, as wrk's threads: its epoll_wait blocks
	// the thread, never another loop.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	e := l.e
	l.active, l.down = 0, 0
	for i, c := range l.conns {
		l.since[i] = 0 // nothing is in flight between runs; a session's clock restarts
		if c.fd < 0 {
			c.st = stDown
		}
		switch c.st {
		case stDown:
			l.down++
		case stIdle:
			l.send = append(l.send, c)
		case stSend: // armed when the last run was cut
			l.active++
		}
	}
	l.redial()
	l.flush()
	every := int64(min(max(e.opt.Timeout/20, time.Millisecond), 50*time.Millisecond))
	nextScan := e.now() + every
	for {
		if e.abort.Load() {
			l.abandon()
			return
		}
		if l.active == 0 && (e.stop.Load() || l.budget || l.down == 0) {
			return
		}
		now := e.now()
		if now >= nextScan {
			nextScan = max(l.scan(now), now+every)
		}
		ms := int((nextScan - now + int64(time.Millisecond) - 1) / int64(time.Millisecond))
		if l.down > 0 {
			ms = min(ms, 1)
		}
		n, err := l.wait(ms, l.armed)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			// Not expected on a valid epoll descriptor: end the loop
			// rather than spin; its requests in flight are cut.
			l.abandon()
			return
		}
		l.handle(n)
	}
}

// wait is one epoll_wait of at most ms milliseconds (-1: no bound). When
// ask is set (something is expected ready) it asks without blocking
// first, a plain system call the runtime never sees, and blocks only when
// nothing is ready, through blockWait, which hands the P back. Asking
// first after a wake-up that only wrote finds nothing and costs a system
// call more a request than wrk makes.
func (l *loop) wait(ms int, ask bool) (int, error) {
	if ask {
		n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(l.epfd), uintptr(unsafe.Pointer(unsafe.SliceData(l.events))), uintptr(len(l.events)), 0, 0, 0)
		if e == 0 && n > 0 {
			return int(n), nil
		}
	}
	m, errno := blockWait(l.epfd, l.events, ms)
	if errno != 0 {
		return 0, errno
	}
	return m, nil
}

// handle takes a wake-up's n events: it reads the answers and sends the
// requests of the sockets reported writable, then arms the connections
// answered for their next requests and dials the connections lost.
func (l *loop) handle(n int) {
	e := l.e
	if n > 0 {
		answers := 0
		for _, ev := range l.events[:n] {
			switch {
			case ev.Fd == wakeData:
				unix.Read(l.wakeFD, l.wake[:])
			case ev.Events&unix.EPOLLIN != 0:
				answers++
			}
		}
		if answers > 0 && e.now() > int64(e.lead) && e.stopAt.Load() == 0 {
			l.wakes++
			l.ready += int64(answers)
		}
		for _, ev := range l.events[:n] {
			if ev.Fd != wakeData {
				l.ready1(l.conns[ev.Fd], ev.Events)
			}
		}
	}
	l.redial()
	l.flush()
}

// ready1 handles one connection's epoll event.
func (l *loop) ready1(c *conn, events uint32) {
	switch c.st {
	case stWait:
		l.read(c)
	case stConnecting:
		l.connected(c)
	case stSend:
		l.active--
		if events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			l.writable(c)
			return
		}
		fallthrough
	case stIdle:
		// Nothing was asked: the server closed the connection (end of
		// file) or sent bytes out of step. Either way it is dialed again,
		// as the goroutine mode finds out at its next request.
		c.closeFD()
		l.down++
	}
}

// arm asks the loop's epoll to report c writable; its next request goes
// out on that event (wrk's aeCreateFileEvent(AE_WRITABLE)).
func (l *loop) arm(c *conn) {
	// A connection whose dial took its request sends it, though the
	// count ran out meanwhile.
	if l.e.stop.Load() || l.e.abort.Load() || (l.budget && !c.paid) {
		return
	}
	if !l.watch(c, unix.EPOLLIN|unix.EPOLLOUT) {
		return
	}
	c.st = stSend
	l.active++ // the loop waits for it as for an answer
}

// writable sends c's next request: the socket was reported writable. It
// stops asking first (wrk's aeDeleteFileEvent after the write).
func (l *loop) writable(c *conn) {
	c.st = stIdle
	if l.watch(c, unix.EPOLLIN) {
		l.request(c)
	}
}

// watch sets the events c's registration asks for; on failure the
// connection is closed, to be dialed again.
func (l *loop) watch(c *conn, events uint32) bool {
	l.ev = unix.EpollEvent{Events: events, Fd: c.idx}
	if _, _, e := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(l.epfd), unix.EPOLL_CTL_MOD, uintptr(c.fd), uintptr(unsafe.Pointer(&l.ev)), 0, 0); e != 0 {
		c.closeFD()
		l.down++
		return false
	}
	return true
}

// read reads what the answer in flight has ready: one read, as wrk makes
// one per readable event; a partial answer waits for the next event.
func (l *loop) read(c *conn) {
	e := l.e
	done, err := c.readRaw()
	if !done {
		return
	}
	l.active--
	end := e.now()
	c.st = stIdle
	l.since[c.idx] = 0
	switch {
	case e.abort.Load():
		c.closeFD()
		l.down++
		return
	case err == nil && c.timedOut:
		// A late answer to a request already counted as a timeout: the
		// connection was kept for it, as wrk keeps it.
		c.late.Add(1)
	case err == nil:
		if at := e.stopAt.Load(); at > 0 && end > at {
			c.drained.Add(1)
			break
		}
		if end <= int64(e.lead) {
			c.led.Add(1)
			break
		}
		c.answered.Add(1)
		if c.rr.resp.status >= 400 {
			c.statusErr.Add(1)
			c.errs.Add(1)
		}
		c.record(end - c.sentAt)
	case c.timedOut:
		// Counted as a timeout already; the connection failed later.
		c.closeFD()
		l.down++
		return
	default:
		if errors.Is(err, ErrFraming) {
			c.framingErr.Add(1)
		}
		c.readErr.Add(1)
		c.errs.Add(1)
		c.closeFD()
		l.down++
		return
	}
	if c.rr.resp.close {
		c.closeFD()
		l.down++
		return
	}
	l.send = append(l.send, c)
}

// readRaw makes one read of the answer in flight on c's raw descriptor;
// done when the answer is whole or the connection failed (err).
func (c *conn) readRaw() (done bool, err error) {
	m, errno := rawIO1(unix.SYS_READ, c.fd, c.rr.space())
	if errno == unix.EAGAIN {
		return false, nil
	}
	switch {
	case errno != 0:
		m, err = 0, errno
	case m == 0:
		err = io.EOF
	}
	return c.rr.feed(m, err)
}

// flush arms each connection answered in this wake-up (or newly open)
// for its next request, which the next wake-up sends.
func (l *loop) flush() {
	l.armed = len(l.send) > 0
	for _, c := range l.send {
		if c.st == stIdle {
			l.arm(c)
		}
	}
	l.send = l.send[:0]
}

// request sends one request on an idle connection, unless sending has
// stopped.
func (l *loop) request(c *conn) {
	e := l.e
	if e.stop.Load() || e.abort.Load() || (l.budget && !c.paid) {
		return
	}
	if !l.pay(c) {
		return
	}
	c.paid = false
	sentAt := e.now()
	// Closed mode ends here too, not only by its timer, which a busy
	// machine can fire late.
	if d := int64(e.window); d > 0 && sentAt > d {
		e.end()
		return
	}
	c.sent.Add(1)
	c.sentAt, c.timedOut = sentAt, false
	c.rr.reset()
	n, errno := rawIO1(unix.SYS_WRITE, c.fd, e.req)
	if errno != 0 || n < len(e.req) {
		c.writeErr.Add(1)
		c.errs.Add(1)
		c.closeFD()
		l.down++
		return
	}
	c.st = stWait
	l.since[c.idx] = sentAt
	l.active++
}

// redial starts a non-blocking connect on each connection without a
// descriptor, while sending goes on.
func (l *loop) redial() {
	e := l.e
	if l.down == 0 || e.stop.Load() || e.abort.Load() || l.budget {
		return
	}
	for _, c := range l.conns {
		if c.st == stDown {
			if !l.pay(c) {
				return
			}
			l.down--
			l.dial(c)
		}
	}
}

// pay takes one request from the run's count (Options.Requests), for a
// request or for the dial before it, as the goroutine mode counts: a dial
// that fails uses up its request. false: the count is spent.
func (l *loop) pay(c *conn) bool {
	if l.e.opt.Requests == 0 || c.paid {
		return true
	}
	if l.e.budget.Add(-1) < 0 {
		l.budget = true
		return false
	}
	c.paid = true
	return true
}

// dial starts connecting c. A connect refused at once is a connect
// error, tried again after the next wait (as the goroutine mode dials
// again before each request).
func (l *loop) dial(c *conn) {
	e := l.e
	fd, err := startConnect(l.sa)
	if fd >= 0 {
		c.fd = fd
	}
	switch err {
	case nil:
		if err = l.register(c, unix.EPOLLIN); err == nil {
			c.markOpen()
			c.st = stIdle
			l.send = append(l.send, c)
			return
		}
	case unix.EINPROGRESS:
		if err = l.register(c, unix.EPOLLOUT); err == nil {
			c.st, c.sentAt = stConnecting, e.now()
			l.since[c.idx] = c.sentAt
			l.active++
			return
		}
	}
	l.connectFailed(c)
}

func (l *loop) connectFailed(c *conn) {
	e := l.e
	c.paid = false
	if !e.abort.Load() {
		c.connectErr.Add(1)
		c.errs.Add(1)
	}
	c.closeFD()
	l.down++
}

// connected finishes a non-blocking connect.
func (l *loop) connected(c *conn) {
	l.active--
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err == nil {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: c.idx}
		err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev)
	}
	if err != nil {
		l.connectFailed(c)
		return
	}
	c.markOpen()
	c.st = stIdle
	l.since[c.idx] = 0
	l.send = append(l.send, c)
}

// scan counts a request without an answer after the timeout as a
// timeout and keeps its connection waiting, as wrk does; after twice the
// timeout it gives up on it and dials the connection again. A connect
// not done within the timeout is a connect error. It returns the earliest
// deadline it watches, so that a loop whose answers come slowly sleeps
// until then instead of waking on a fixed tick, whose wake-ups would
// rival those for answers; whatever is sent later has a later deadline.
func (l *loop) scan(now int64) (next int64) {
	e := l.e
	limit, giveUp := int64(e.opt.Timeout), int64(e.giveUp)
	next = now + limit // what is sent from now on
	for i, at := range l.since {
		if at == 0 {
			continue
		}
		if now-at < limit {
			next = min(next, at+limit)
			continue
		}
		// Rare: only here is the connection itself read; reading every
		// connection on each scan was the loops' costliest function.
		c := l.conns[i]
		switch c.st {
		case stWait:
			age := now - c.sentAt
			if !c.timedOut && age >= limit {
				c.timedOut = true
				c.timeoutErr.Add(1)
				c.errs.Add(1)
			}
			if c.timedOut && age >= giveUp {
				l.active--
				c.closeFD()
				l.down++
				l.since[i] = 0
				continue
			}
			next = min(next, at+giveUp)
		case stConnecting:
			l.active--
			l.connectFailed(c)
			l.since[i] = 0
		default:
			l.since[i] = 0 // left waiting without passing here
		}
	}
	return next
}

// abandon ends the requests in flight uncounted (the run was cut): their
// connections are closed, to be dialed again before the next window.
func (l *loop) abandon() {
	for _, c := range l.conns {
		if c.st == stWait || c.st == stConnecting {
			c.closeFD()
		}
	}
	l.active = 0
	l.send = l.send[:0]
}

// rawIO1 is one read or write on a non-blocking descriptor (EINTR
// retried). It never blocks, so it skips the Go scheduler's system call
// bookkeeping, which would cost as much again in user time per request.
func rawIO1(trap uintptr, fd int, p []byte) (int, unix.Errno) {
	for {
		n, _, e := unix.RawSyscall(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
		if e != unix.EINTR {
			return int(n), e
		}
	}
}

// dupFD duplicates nc's descriptor (close-on-exec).
func dupFD(nc net.Conn) (int, error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return -1, errors.New("connection without a descriptor")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := rc.Control(func(f uintptr) { fd, derr = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return fd, derr
}

// sockAddr is the target's address for raw sockets.
type sockAddr struct {
	family int
	addr   unix.Sockaddr
}

// clone copies the address: unix.Connect encodes it into the value
// itself, so each loop needs one of its own.
func (a sockAddr) clone() sockAddr {
	switch v := a.addr.(type) {
	case *unix.SockaddrInet4:
		c := *v
		a.addr = &c
	case *unix.SockaddrInet6:
		c := *v
		a.addr = &c
	case *unix.SockaddrUnix:
		c := *v
		a.addr = &c
	}
	return a
}

// resolve reads the target's address for the loops' own dials.
func resolve(t Target) (sockAddr, error) {
	if t.Network == "unix" {
		return sockAddr{unix.AF_UNIX, &unix.SockaddrUnix{Name: t.Address}}, nil
	}
	a, err := net.ResolveTCPAddr("tcp", t.Address)
	if err != nil {
		return sockAddr{}, err
	}
	if ip4 := a.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return sockAddr{unix.AF_INET, sa}, nil
	}
	sa := &unix.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	if a.Zone != "" {
		ifi, err := net.InterfaceByName(a.Zone)
		if err != nil {
			return sockAddr{}, err
		}
		sa.ZoneId = uint32(ifi.Index)
	}
	return sockAddr{unix.AF_INET6, sa}, nil
}

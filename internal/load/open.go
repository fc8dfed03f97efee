package load

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stPrime: a connection being opened for the loops, its first request's
// answer awaited (opener only).
const stPrime = stSend + 1

// openOnLoops opens cs (each already given a loop) before the measured
// time, as dialEach does through Go's net, but on raw non-blocking
// descriptors from one goroutine: in order, DialsInFlight at a time,
// each connect tried up to connectTries times and, when the engine
// primes, each new connection's first request answered, not measured.
// An open connection ends registered with its loop's epoll, idle. A
// connection that could not be opened stays without a descriptor; its
// loop dials it again in the measured time.
//
// The engine's whole-process CPU a request counts this phase. Through
// Go's net (a goroutine, the poller's registration and a duplicated
// descriptor for each connection) opening 5,000 took 0.56 s of CPU at
// 8,000 requests a second, here 0.46 s, of which 0.16 s are the connect
// system calls wrk makes too; all of wrk's start and end took about
// 0.30 s (docs/results.md).
func (e *engine) openOnLoops(cs []*conn) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		// Not expected: the connections stay closed, and their loops
		// dial them in the measured time.
		return
	}
	defer unix.Close(ep)
	o := &opener{e: e, ep: ep, cs: cs, events: make([]unix.EpollEvent, DialsInFlight),
		tries: make([]uint8, len(cs)), since: make([]int64, len(cs)), t0: time.Now()}
	o.run()
}

// opener is openOnLoops' state: its own epoll instance, where event data
// is the connection's index in cs.
type opener struct {
	e      *engine
	ep     int
	cs     []*conn
	events []unix.EpollEvent
	tries  []uint8 // connects tried, by index in cs
	since  []int64 // the start of the connect or of the first request in flight, by index
	busy   []int32 // indices being opened (a slot each)
	t0     time.Time
}

// now is the opener's clock: the engine's starts with the measured time.
func (o *opener) now() int64 { return int64(time.Since(o.t0)) }

func (o *opener) run() {
	e := o.e
	next := 0
	for next < len(o.cs) || len(o.busy) > 0 {
		if e.ctx.Err() != nil || e.abort.Load() {
			for _, i := range o.busy {
				o.cs[i].closeFD()
			}
			return
		}
		for len(o.busy) < DialsInFlight && next < len(o.cs) {
			o.start(int32(next))
			next++
		}
		if len(o.busy) == 0 {
			continue
		}
		n, err := unix.EpollWait(o.ep, o.events, 10)
		if err != nil && err != unix.EINTR {
			for _, i := range o.busy {
				o.cs[i].closeFD()
			}
			o.busy = o.busy[:0]
			continue // the rest are tried, and fail, the same way
		}
		for _, ev := range o.events[:max(n, 0)] {
			i := ev.Fd
			switch o.cs[i].st {
			case stConnecting:
				o.connected(i)
			case stPrime:
				o.answer(i)
			}
		}
		o.expire()
	}
}

// start dials cs[i]: a non-blocking connect, watched for writability.
func (o *opener) start(i int32) {
	c := o.cs[i]
	sa := &c.loop.sa
	o.tries[i]++
	fd, err := unix.Socket(sa.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		o.failed(i)
		return
	}
	c.fd = fd
	if sa.family != unix.AF_UNIX {
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1) // as Go's net does
	}
	o.hold(i)
	switch err = unix.Connect(fd, sa.addr); err {
	case nil:
		o.connected(i)
	case unix.EINPROGRESS:
		ev := unix.EpollEvent{Events: unix.EPOLLOUT, Fd: i}
		if unix.EpollCtl(o.ep, unix.EPOLL_CTL_ADD, fd, &ev) != nil {
			o.release(i)
			o.failed(i)
			return
		}
		c.st, o.since[i] = stConnecting, o.now()
	default:
		o.release(i)
		o.failed(i)
	}
}

// failed ends a connect that did not open: tried again up to
// connectTries, then counted as a connect error, as conn.connect does.
func (o *opener) failed(i int32) {
	c, e := o.cs[i], o.e
	c.closeFD()
	if o.tries[i] < connectTries && e.ctx.Err() == nil && !e.abort.Load() {
		c.retries.Add(1)
		o.start(i)
		return
	}
	if !e.abort.Load() && e.ctx.Err() == nil {
		c.connectErr.Add(1)
		c.errs.Add(1)
	}
}

// connected finishes cs[i]'s connect and, when the engine primes, sends
// its first request.
func (o *opener) connected(i int32) {
	c, e := o.cs[i], o.e
	soErr, err := unix.GetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err == nil && soErr != 0 {
		err = unix.Errno(soErr)
	}
	if err != nil {
		o.release(i)
		o.failed(i)
		return
	}
	c.markOpen()
	if !e.prime {
		o.done(i)
		return
	}
	c.rr.reset()
	if n, errno := rawIO1(unix.SYS_WRITE, c.fd, e.primeReq); errno != 0 || n < len(e.primeReq) {
		o.drop(i)
		return
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: i}
	if _, _, errno := unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(o.ep), unix.EPOLL_CTL_MOD, uintptr(c.fd), uintptr(unsafe.Pointer(&ev)), 0, 0); errno == unix.ENOENT {
		// Connected at once (a unix socket): not watched yet.
		if unix.EpollCtl(o.ep, unix.EPOLL_CTL_ADD, c.fd, &ev) != nil {
			o.drop(i)
			return
		}
	} else if errno != 0 {
		o.drop(i)
		return
	}
	c.st, o.since[i] = stPrime, o.now()
}

// answer reads what cs[i]'s first answer has ready.
func (o *opener) answer(i int32) {
	c := o.cs[i]
	done, err := c.readRaw()
	switch {
	case !done:
	case err != nil || c.rr.resp.close:
		o.drop(i) // as conn.prime: closed, dialed again in the measured time
	default:
		o.done(i)
	}
}

// expire gives up on a connect older than the request timeout (a failed
// try, as the dialer's timeout) and on a first answer older than
// primeTimeout (the connection is closed, as conn.prime closes it).
func (o *opener) expire() {
	e := o.e
	now := o.now()
	connect, prime := int64(e.opt.Timeout), int64(max(e.opt.Timeout, primeTimeout))
	for k := 0; k < len(o.busy); k++ {
		i := o.busy[k]
		c := o.cs[i]
		switch age := now - o.since[i]; {
		case c.st == stConnecting && age >= connect:
			o.release(i)
			o.failed(i)
		case c.st == stPrime && age >= prime:
			o.drop(i)
		default:
			continue
		}
		k-- // release moved the last index here
	}
}

// done hands an open cs[i] to its loop: registered with the loop's
// epoll, idle.
func (o *opener) done(i int32) {
	c := o.cs[i]
	o.release(i)
	unix.EpollCtl(o.ep, unix.EPOLL_CTL_DEL, c.fd, nil)
	if c.loop.register(c, unix.EPOLLIN) != nil {
		c.closeFD()
		return
	}
	c.st = stIdle
}

// drop closes cs[i], opened but not primed.
func (o *opener) drop(i int32) {
	o.release(i)
	o.cs[i].closeFD()
}

// hold takes a slot for cs[i]; release gives it back.
func (o *opener) hold(i int32) { o.busy = append(o.busy, i) }

func (o *opener) release(i int32) {
	for k, j := range o.busy {
		if j == i {
			o.busy[k] = o.busy[len(o.busy)-1]
			o.busy = o.busy[:len(o.busy)-1]
			return
		}
	}
}

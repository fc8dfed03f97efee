package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/hdr"
	"golang.org/x/sys/unix"
)

// A pool is one target's connections in a session: opened once, kept
// across windows. Only one of a session's pools sends at a time.
type pool struct {
	name string
	e    *engine
	n    int // windows measured
	sum  PoolTotals
}

// openPool dials opt.Connections connections to opt's target, paced
// (DialsInFlight at a time), before anything is measured.
func openPool(ctx context.Context, name string, opt Options) (*pool, Opened, error) {
	if opt.Rate > 0 {
		return nil, Opened{}, fieldErr("rate", "a session's pools are closed loop")
	}
	if opt.Duration == 0 && opt.Requests == 0 {
		opt.Duration = time.Second // a window gives the real one
	}
	if err := opt.fill(); err != nil {
		return nil, Opened{}, err
	}
	if err := opt.Target.onLink(opt.Allow); err != nil {
		return nil, Opened{}, err
	}
	p := &pool{name: name, e: newEngine(ctx, opt)}
	if err := p.e.startLoops(); err != nil {
		p.e.closeLoops()
		return nil, Opened{}, err
	}
	t0 := time.Now()
	p.e.open(opt.Connections)
	o := Opened{Pool: name, Elapsed: time.Since(t0)}
	for _, c := range p.e.conns {
		if c.isOpen() {
			o.Connections++
		}
		o.ConnectErrors += c.connectErr.Load()
		o.Retries += c.retries.Load()
	}
	p.sum = PoolTotals{Pool: name, Opened: o.Connections, Errors: Errors{Connect: o.ConnectErrors}}
	return p, o, nil
}

// window runs the pool closed loop for lead and then d: every connection
// sends its next request when the previous answer is in. Before it,
// connections the server closed while the pool was idle are dialed
// again; after it, the pool stops sending and waits for the answers still
// out (the drain), so that the next window, of whichever pool, starts with
// none. The lead is the load's start from idle: 5000 requests at once
// from a drained pool, nginx opening upstream connections anew, which a
// server in its stride does not see; only d is measured. Neither the
// lead nor the drain is measured time; their answers are counted apart.
func (p *pool) window(lead, d time.Duration, slices int, counters []string) (Window, error) {
	e := p.e
	if d <= 0 || d > time.Hour {
		return Window{}, fmt.Errorf("window %v: want more than 0, at most 1h", d)
	}
	if slices < 0 || slices > 1000 || (slices > 1 && d/time.Duration(slices) < 10*time.Millisecond) {
		return Window{}, fmt.Errorf("slices %d: want 1 to 1000, each at least 10ms of the %v", slices, d)
	}
	if lead < 0 || lead > time.Hour {
		return Window{}, fmt.Errorf("lead %v: want 0 or more, at most 1h", lead)
	}
	if err := e.ctx.Err(); err != nil {
		return Window{}, err
	}
	cs := e.snapshot()
	for _, c := range cs {
		c.reset()
	}
	for _, s := range e.shards {
		s.h.Reset()
	}
	p.refresh(cs)

	e.stop.Store(false)
	e.stopAt.Store(0)
	e.cpuAt.Store(nil)
	e.window, e.lead = lead+d, lead
	done := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(1)
	cpu0 := readCPU()
	callCPU0 := cpu0
	cw := newCounterWindow(counters)
	// The measured CPU starts when the lead ends.
	var lt *time.Timer
	leadCPU := make(chan cpuTimes, 1)
	e.start = time.Now()
	go func() { defer aux.Done(); e.watchdog(done) }()
	var sl *slicer
	if slices > 1 {
		sl = &slicer{e: e, cs: cs, paths: counters, n: slices, lead: lead, d: d}
		aux.Add(1)
		go func() { defer aux.Done(); sl.run(done) }()
	}
	var leadErrs Errors // the errors before the first slice
	var leadMu sync.Mutex
	if lead > 0 {
		lt = time.AfterFunc(lead, func() {
			cw.readStart()
			if sl != nil {
				m := e.mark(cs, nil)
				leadMu.Lock()
				leadErrs = m.errs
				leadMu.Unlock()
			}
			leadCPU <- readCPU()
		})
	} else {
		cw.readStart()
	}
	// A clock that fired is waited for below: run late, it would end
	// the next window.
	fired := make(chan struct{})
	t := time.AfterFunc(lead+d, func() { defer close(fired); e.end(); cw.readEnd() })
	// The session's end (SIGINT) cuts the window short.
	defer context.AfterFunc(e.ctx, e.cut)()
	e.runClosed(cs)
	e.wg.Wait()
	e.restore()
	if !t.Stop() {
		<-fired
	}
	e.end() // when every connection failed to dial, nothing ended the window
	drainEnd := time.Now()
	callCPU := readCPU().sub(callCPU0)
	cw.readStart() // no-ops unless the window was cut short
	cw.readEnd()
	close(done)
	aux.Wait()

	stopAt := time.Duration(e.stopAt.Load())
	if lt != nil && !lt.Stop() {
		cpu0 = <-leadCPU // the lead ended: its reading is (or is about to be) sent
	}
	cpu := e.cpuAt.Load().sub(cpu0)
	// Cut within its lead, a window measured nothing.
	measured := max(stopAt-lead, 0)
	for _, c := range cs {
		c.flush()
	}
	h := hdr.New()
	for _, s := range e.shards {
		h.Merge(s.h)
	}
	var enc bytes.Buffer
	if err := hdr.WriteEncoded(&enc, h); err != nil {
		return Window{}, err
	}
	p.n++
	var cut []Slice
	if sl != nil {
		first := mark{at: int64(lead), cpu: cpu0}
		leadMu.Lock()
		first.errs = leadErrs
		leadMu.Unlock()
		first.counters, first.failed = cw.marks(false)
		last := e.mark(cs, nil)
		last.at, last.cpu = max(int64(stopAt), int64(lead)), *e.cpuAt.Load()
		last.counters, last.failed = cw.marks(true)
		cut = sl.slices(first, last, e.start)
	}
	w := Window{
		Slices: cut,
		Pool:   p.name, Index: p.n,
		Start: e.start.Add(lead), End: e.start.Add(max(stopAt, lead)),
		DurationNs: int64(measured), DrainNs: int64(drainEnd.Sub(e.start) - stopAt),
		LeadNs:    int64(min(lead, stopAt)),
		CPUUserNs: int64(cpu.user), CPUSysNs: int64(cpu.sys),
		CallCPUNs: int64(callCPU.total()), Counters: cw.readings(),
		Histogram: string(bytes.TrimSpace(enc.Bytes())),
		Summary:   e.summarize(h, measured, 0, cpu.total(), 0, 0, e.ctx.Err() != nil),
	}
	w.setMeasuredCPU(cpu)
	for _, c := range cs {
		w.Drained += c.drained.Load()
		w.LeadAnswers += c.led.Load()
	}
	p.sum.add(w)
	return w, nil
}

// refresh dials again, before the measured time, each connection that
// is not open: closed by the server while idle, or never opened.
func (p *pool) refresh(cs []*conn) {
	var dead []*conn
	for _, c := range cs {
		if !c.alive() {
			c.close()
			c.closeFD()
			dead = append(dead, c)
		}
	}
	p.e.dialEach(dead)
}

// alive peeks at an idle connection without blocking: a connection the
// server closed reads end of file, one with bytes waiting is out of step
// (nothing was asked); either must be dialed again.
func (c *conn) alive() bool {
	if c.fd >= 0 {
		var buf [1]byte
		n, _, err := unix.Recvfrom(c.fd, buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return n < 0 && errors.Is(err, unix.EAGAIN)
	}
	if c.nc == nil {
		return false
	}
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return true
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var buf [1]byte
	ok = false
	err = rc.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		ok = n < 0 && errors.Is(rerr, syscall.EAGAIN)
		return true // never wait for readiness
	})
	return err == nil && ok
}

// reset zeroes the counters of an idle connection for a new window.
func (c *conn) reset() {
	for _, v := range []*atomic.Int64{&c.sent, &c.answered, &c.errs, &c.connectErr, &c.readErr, &c.writeErr,
		&c.timeoutErr, &c.statusErr, &c.framingErr, &c.reconnects, &c.retries, &c.drained, &c.late, &c.led} {
		v.Store(0)
	}
	c.nlat = 0
}

func (p *pool) close() PoolTotals {
	p.e.closeAll()
	p.e.closeLoops()
	return p.sum
}

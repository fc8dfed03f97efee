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
	if err := checkWindow(lead, d, slices); err != nil {
		return Window{}, err
	}
	if err := p.e.ctx.Err(); err != nil {
		return Window{}, err
	}
	r := &windowRun{p: p, cs: p.fresh(), lead: lead, d: d}
	stopCut := r.run(slices, counters)
	defer stopCut()
	return r.result()
}

// checkWindow refuses a window, its slices or its lead out of bounds.
func checkWindow(lead, d time.Duration, slices int) error {
	if d <= 0 || d > time.Hour {
		return fmt.Errorf("window %v: want more than 0, at most 1h", d)
	}
	if slices < 0 || slices > 1000 || (slices > 1 && d/time.Duration(slices) < 10*time.Millisecond) {
		return fmt.Errorf("slices %d: want 1 to 1000, each at least 10ms of the %v", slices, d)
	}
	if lead < 0 || lead > time.Hour {
		return fmt.Errorf("lead %v: want 0 or more, at most 1h", lead)
	}
	return nil
}

// fresh readies the pool's connections for a window: their counts and
// the histograms reset, those the server closed dialed again.
func (p *pool) fresh() []*conn {
	e := p.e
	cs := e.snapshot()
	for _, c := range cs {
		c.reset()
	}
	for _, s := range e.shards {
		s.h.Reset()
	}
	p.refresh(cs)
	return cs
}

// windowRun is one window of a pool as it runs: what the run reads for
// the Window, and the errors of its lead, which the lead's timer sets.
type windowRun struct {
	p        *pool
	cs       []*conn
	lead, d  time.Duration
	cw       *counterWindow
	sl       *slicer
	cpu0     cpuTimes // at the lead's end, or the start without one
	callCPU  cpuTimes
	drainEnd time.Time
	stopAt   time.Duration

	leadMu   sync.Mutex
	leadErrs Errors // the errors before the first slice
}

// run sends the window's load, from the lead to the drain, and returns
// the stop of its watch of the session's end, for the caller to defer.
func (r *windowRun) run(slices int, counters []string) (stopCut func() bool) {
	e, cs, lead, d := r.p.e, r.cs, r.lead, r.d
	e.stop.Store(false)
	e.stopAt.Store(0)
	e.cpuAt.Store(nil)
	e.window, e.lead = lead+d, lead
	done := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(1)
	r.cpu0 = readCPU()
	callCPU0 := r.cpu0
	r.cw = newCounterWindow(counters)
	e.start = time.Now()
	go func() { defer aux.Done(); e.watchdog(done) }()
	if slices > 1 {
		r.sl = &slicer{e: e, cs: cs, paths: counters, n: slices, lead: lead, d: d}
		aux.Add(1)
		go func() { defer aux.Done(); r.sl.run(done) }()
	}
	lt, leadCPU := r.startLead()
	// A clock that fired is waited for below: run late, it would end
	// the next window.
	fired := make(chan struct{})
	t := time.AfterFunc(lead+d, func() { defer close(fired); e.end(); r.cw.readEnd() })
	// The session's end (SIGINT) cuts the window short.
	stopCut = context.AfterFunc(e.ctx, e.cut)
	e.runClosed(cs)
	e.wg.Wait()
	e.restore()
	if !t.Stop() {
		<-fired
	}
	e.end() // when every connection failed to dial, nothing ended the window
	r.drainEnd = time.Now()
	r.callCPU = readCPU().sub(callCPU0)
	r.cw.readStart() // no-ops unless the window was cut short
	r.cw.readEnd()
	close(done)
	aux.Wait()

	r.stopAt = time.Duration(e.stopAt.Load())
	if lt != nil && !lt.Stop() {
		r.cpu0 = <-leadCPU // the lead ended: its reading is (or is about to be) sent
	}
	return stopCut
}

// startLead starts the clock of the lead, at whose end the measured CPU
// and counters start and the first slice's errors are read.
func (r *windowRun) startLead() (*time.Timer, chan cpuTimes) {
	e := r.p.e
	leadCPU := make(chan cpuTimes, 1)
	if r.lead <= 0 {
		r.cw.readStart()
		return nil, leadCPU
	}
	lt := time.AfterFunc(r.lead, func() {
		r.cw.readStart()
		if r.sl != nil {
			m := e.mark(r.cs, nil)
			r.leadMu.Lock()
			r.leadErrs = m.errs
			r.leadMu.Unlock()
		}
		leadCPU <- readCPU()
	})
	return lt, leadCPU
}

// result is the window's record: its measured time, CPU, histogram,
// slices and counters, and the answers of its lead and drain.
func (r *windowRun) result() (Window, error) {
	p, e, cs, lead, stopAt := r.p, r.p.e, r.cs, r.lead, r.stopAt
	cpu := e.cpuAt.Load().sub(r.cpu0)
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
	if r.sl != nil {
		first := mark{at: int64(lead), cpu: r.cpu0}
		r.leadMu.Lock()
		first.errs = r.leadErrs
		r.leadMu.Unlock()
		first.counters, first.failed = r.cw.marks(false)
		last := e.mark(cs, nil)
		last.at, last.cpu = max(int64(stopAt), int64(lead)), *e.cpuAt.Load()
		last.counters, last.failed = r.cw.marks(true)
		cut = r.sl.slices(first, last, e.start)
	}
	w := Window{
		Slices: cut,
		Pool:   p.name, Index: p.n,
		Start: e.start.Add(lead), End: e.start.Add(max(stopAt, lead)),
		DurationNs: int64(measured), DrainNs: int64(r.drainEnd.Sub(e.start) - stopAt),
		LeadNs:    int64(min(lead, stopAt)),
		CPUUserNs: int64(cpu.user), CPUSysNs: int64(cpu.sys),
		CallCPUNs: int64(r.callCPU.total()), Counters: r.cw.readings(),
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
		&c.timeoutErr, &c.statusErr, &c.framingErr, &c.reconnects, &c.retries, &c.drained, &c.late, &c.led, &c.handshakes, &c.resumed, &c.handshakeNs} {
		v.Store(0)
	}
	c.nlat = 0
}

func (p *pool) close() PoolTotals {
	p.e.closeAll()
	p.e.closeLoops()
	return p.sum
}

package load

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/topobench/topobench/internal/hdr"
)

// ProbeOptions configure a concurrency-level probe (Probe).
type ProbeOptions struct {
	// Target must ask the server to wait Wait before answering (cmd/hello's
	// ?wait=, see Target.WithQuery).
	Target Target
	// Allow is the one address besides loopback the target may have (see
	// Options.Allow, Options.AllowRemote).
	Allow       netip.Addr
	AllowRemote bool
	// Requests are opened at once, each on its own connection.
	Requests int
	Wait     time.Duration
	// Within bounds the answer time of a request served concurrently
	// (default ProbeWithin(Wait)).
	Within time.Duration
	// Timeout ends a request without an answer this long after it was
	// sent (default Within + Wait, at most 60 s).
	Timeout time.Duration
	// Dials bounds the connections being opened at once (default 256), so
	// the probe does not overflow the server's accept queue while it sets
	// up; the requests are sent only once every connection is open.
	Dials int
	// TLS is how to speak to an https:// target (see Options.TLS).
	TLS TLS
}

// ProbeWithin is the default bound of a concurrently served answer: the
// wait plus half of it, at least one second more. A request the server
// takes on at once answers in about Wait (plus the time to send and read
// it, milliseconds); one it queues behind another answers no earlier than
// 2 x Wait, so any bound between the two separates them, and the margin
// absorbs a busy machine's scheduling delays.
func ProbeWithin(wait time.Duration) time.Duration { return wait + max(wait/2, time.Second) }

// probeSpare are the descriptors a probe leaves to everything else in its
// process (standard streams, the runtime's poller, files it writes).
const probeSpare = 64

// ErrTooManyFiles is returned by Probe when the open-files limit does not
// allow the requests asked for.
var ErrTooManyFiles = errors.New("more connections than the open-files limit allows")

// OpenFilesLimit is the process's soft RLIMIT_NOFILE (which the Go runtime
// raises to the hard limit at start).
func OpenFilesLimit() (int, error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, fmt.Errorf("reading the open-files limit: %w", err)
	}
	return int(min(rl.Cur, 1<<30)), nil
}

// MaxProbe is the most requests a probe can open under the open-files
// limit.
func MaxProbe() (int, error) {
	n, err := OpenFilesLimit()
	return max(n-probeSpare, 0), err
}

// fill checks opt and sets its defaults; errors are *FieldError, named as
// Spec names them (Requests is "probe").
func (opt *ProbeOptions) fill() error {
	if opt.Target.Network == "" {
		return fieldErr("target", "none given")
	}
	if err := CheckAllow(opt.Allow, opt.AllowRemote); err != nil {
		return err
	}
	if err := opt.Target.check(opt.Allow, opt.AllowRemote); err != nil {
		return &FieldError{"target", fmt.Errorf("%s: %w", opt.Target, err)}
	}
	if opt.Requests < 1 {
		return fieldErr("probe", "%d requests: want at least 1", opt.Requests)
	}
	if opt.Wait <= 0 || opt.Wait > hdr.HighestMicros*time.Microsecond {
		return fieldErr("wait", "%v: want more than 0, at most 60s (a probe tells concurrent answers from queued ones by the wait)", opt.Wait)
	}
	if limit, err := MaxProbe(); err != nil {
		return err
	} else if opt.Requests > limit {
		return &FieldError{"probe", fmt.Errorf("%d requests: %w (at most %d here: ulimit -n less %d spare)", opt.Requests, ErrTooManyFiles, limit, probeSpare)}
	}
	if opt.Within == 0 {
		opt.Within = ProbeWithin(opt.Wait)
	}
	if opt.Within < opt.Wait {
		return fieldErr("within", "%v is below the wait %v", opt.Within, opt.Wait)
	}
	if opt.Timeout == 0 {
		opt.Timeout = min(opt.Within+opt.Wait, hdr.HighestMicros*time.Microsecond)
	}
	if opt.Timeout < 0 || opt.Timeout > hdr.HighestMicros*time.Microsecond {
		return fieldErr("timeout", "%v: want more than 0, at most 60s", opt.Timeout)
	}
	if opt.Dials <= 0 {
		opt.Dials = 256
	}
	_, err := opt.TLS.clientConfig(opt.Target)
	return err
}

// Probe opens opt.Requests connections, then sends one request on each at
// once and waits for every answer: how many requests a server takes on
// at the same time, as the 2016 study's concurrency-level probe asked. A
// request served concurrently answers within opt.Within (Summary.
// Concurrent counts them); the latency histogram runs from each send.
// Failures are counted in the summary's error classes; an error means the
// options were invalid. When ctx ends, the probe stops and reports what it
// saw (Summary.Interrupted).
func Probe(ctx context.Context, opt ProbeOptions) (*Result, error) {
	if err := opt.fill(); err != nil {
		return nil, err
	}
	if err := opt.Target.onLink(opt.Allow); err != nil {
		return nil, err
	}
	// The engine's connections, closed mode, with one request each: the
	// same reader, error classes and histogram as a load run.
	eopt := Options{Target: opt.Target, Allow: opt.Allow, AllowRemote: opt.AllowRemote, Connections: opt.Requests, Requests: int64(opt.Requests), Timeout: opt.Timeout,
		TLS: opt.TLS, Goroutines: true}
	if err := eopt.fill(); err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	e := newEngine(runCtx, eopt)
	e.dials = make(chan struct{}, opt.Dials)
	e.shards = e.shards[:1]
	// A probe's timeout already bounds a queued answer: give up on it then.
	e.giveUp = opt.Timeout
	e.prime = false // a request with the handler wait would take as long as the probe
	cpu0 := readCPU()

	conns := e.open(opt.Requests)
	e.start = time.Now()

	done := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(1)
	go func() { defer aux.Done(); e.watchdog(done) }()
	go func() {
		select {
		case <-ctx.Done():
			e.cut()
		case <-done:
		}
	}()
	within := int64(opt.Within)
	var concurrent atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		if c.nc == nil {
			continue // its connect error is counted
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			before := c.answered.Load()
			c.do(0)
			if c.answered.Load() > before && c.statusErr.Load() == 0 && c.lat[0] <= within {
				concurrent.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(e.start)
	if at := e.stopAt.Load(); at > 0 {
		elapsed = time.Duration(at)
	}
	close(done)
	aux.Wait()
	e.closeAll()
	cpu := readCPU().sub(cpu0).total()

	res := &Result{Histogram: e.shards[0].h}
	res.Summary = e.summarize(res.Histogram, elapsed, elapsed, cpu, 0, 0, ctx.Err() != nil)
	res.Summary.Mode = "probe"
	res.Summary.ProbeWaitMs = float64(opt.Wait) / 1e6
	res.Summary.ProbeWithinMs = float64(opt.Within) / 1e6
	res.Summary.Concurrent = concurrent.Load()
	return res, nil
}

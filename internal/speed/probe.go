package speed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// Defaults of Options.
const (
	DefaultPeriod   = 100 * time.Millisecond
	DefaultSpin     = time.Millisecond
	DefaultPriority = 50
)

// Options are one probe's rhythm.
type Options struct {
	// Period is how often it spins, Spin how long each time.
	Period, Spin time.Duration
	// Priority is its SCHED_FIFO priority (1-99).
	Priority int
}

// ErrPriority marks a probe that could not take real-time priority: it
// would then measure its share of a busy CPU, not the CPU's speed.
var ErrPriority = errors.New("the speed probe needs real-time priority (SCHED_FIFO): run as root or with CAP_SYS_NICE")

// Run probes the CPU it runs on until ctx ends, a line to w per spin
// (the package doc), and returns nil then; an error when it cannot take
// real-time priority or write.
func Run(ctx context.Context, w io.Writer, opt Options) error {
	if opt.Period <= 0 || opt.Spin <= 0 || opt.Spin >= opt.Period {
		return fmt.Errorf("speed probe: spin %s must be positive and shorter than the period %s", opt.Spin, opt.Period)
	}
	if opt.Priority < 1 || opt.Priority > 99 {
		return fmt.Errorf("speed probe: priority %d, want 1-99", opt.Priority)
	}
	// The policy belongs to this thread; it ends with the goroutine, as
	// the goroutine never unlocks it.
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: uint32(opt.Priority)}
	if err := unix.SchedSetAttr(0, &attr, 0); err != nil {
		return fmt.Errorf("%w: %w", ErrPriority, err)
	}
	bw := bufio.NewWriter(w)
	tick := time.NewTicker(opt.Period)
	defer tick.Stop()
	var s spinner
	for {
		select {
		case <-ctx.Done():
			return bw.Flush()
		case <-tick.C:
		}
		start := time.Now()
		turns, took := s.spin(opt.Spin)
		fmt.Fprintf(bw, "%d %d %d\n", start.UnixNano(), took.Nanoseconds(), turns)
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("speed probe: %w", err)
		}
	}
}

// spinner keeps the arithmetic's result, so that the compiler keeps the
// arithmetic.
type spinner struct{ x uint64 }

// spin counts turns of a fixed loop (100 steps of a linear congruential
// generator, which no step can skip) for at least d, and says how long it
// took.
func (s *spinner) spin(d time.Duration) (turns int64, took time.Duration) {
	start := time.Now()
	x := s.x | 1
	for {
		for range 100 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		turns++
		if took = time.Since(start); took >= d {
			s.x = x
			return turns, took
		}
	}
}

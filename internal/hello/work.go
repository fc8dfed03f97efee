package hello

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// MaxWork bounds the work=DURATION query parameter: a handler that costs
// more than 100 ms of CPU a request is not what topobench compares, and a
// bound keeps one request from pinning a core for long.
const MaxWork = 100 * time.Millisecond

// Calibration says how much handler work fits in a microsecond of CPU
// time on this machine: Units (one SHA-256 of a 32-byte block each) per
// microsecond of the calibrating thread's own CPU time. Thread CPU time,
// not wall time, so that a calibration on a busy machine (the thread
// preempted half the time) still says what one unit costs when it runs.
type Calibration struct {
	UnitsPerMicrosecond float64
}

// Units is how many units of work take d of CPU time.
func (c Calibration) Units(d time.Duration) int {
	return int(math.Round(float64(d) / float64(time.Microsecond) * c.UnitsPerMicrosecond))
}

func (c Calibration) String() string {
	return fmt.Sprintf("%.4g units/us", c.UnitsPerMicrosecond)
}

// calibrationRounds, calibrationBursts and calibrationBurst size
// Calibrate: rounds of short bursts of CPU, each after a short sleep. A
// handler's work runs in bursts between the network's system calls, which
// leave the core's caches and predictors colder than a long loop finds
// them: a unit costs more CPU that way, so the calibration measures it
// that way.
const (
	calibrationRounds = 25
	calibrationBursts = 10
	calibrationBurst  = 200 * time.Microsecond
	calibrationPause  = 50 * time.Microsecond
)

// Calibrate measures Spin against the CPU time of the calling goroutine's
// thread (CLOCK_THREAD_CPUTIME_ID, locked for the duration): rounds of
// handler-sized bursts after a pause (see calibrationBurst), the median
// rate of 25. Time the thread spends preempted
// does not count, so a busy machine does not shrink the work; what the
// machine cannot hide — a slower clock, a core shared with a sibling
// thread — does, as it would slow a real handler.
func Calibrate() (Calibration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, err := threadCPU(); err != nil {
		return Calibration{}, fmt.Errorf("calibrating work: thread CPU clock: %w", err)
	}
	// Find a burst of at least calibrationBurst, warming up on the way.
	n := 64
	for {
		d, err := timeUnits(n)
		if err != nil {
			return Calibration{}, err
		}
		if d >= calibrationBurst {
			break
		}
		if n > 1<<30 {
			return Calibration{}, errors.New("calibrating work: the thread CPU clock does not advance")
		}
		n *= 2
	}
	rates := make([]float64, 0, calibrationRounds)
	for range calibrationRounds {
		var d time.Duration
		for range calibrationBursts {
			time.Sleep(calibrationPause)
			b, err := timeUnits(n)
			if err != nil {
				return Calibration{}, err
			}
			d += b
		}
		if d <= 0 {
			continue
		}
		rates = append(rates, float64(calibrationBursts*n)/(float64(d)/float64(time.Microsecond)))
	}
	if len(rates) == 0 {
		return Calibration{}, errors.New("calibrating work: the thread CPU clock does not advance")
	}
	slices.Sort(rates)
	return Calibration{UnitsPerMicrosecond: rates[len(rates)/2]}, nil
}

// timeUnits runs n units and returns the thread CPU time they took.
func timeUnits(n int) (time.Duration, error) {
	t0, err := threadCPU()
	if err != nil {
		return 0, err
	}
	Spin(n)
	t1, err := threadCPU()
	if err != nil {
		return 0, err
	}
	return t1 - t0, nil
}

// threadCPU is the calling thread's CPU time.
func threadCPU() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}

// Spin does n units of deterministic CPU work — each a SHA-256 of the
// previous digest — and returns the last digest, so the compiler cannot
// drop the loop. It allocates nothing and touches no shared memory.
func Spin(n int) [sha256.Size]byte {
	var d [sha256.Size]byte
	for range n {
		d = sha256.Sum256(d[:])
	}
	return d
}

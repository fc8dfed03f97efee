package main

import (
	"context"
	"fmt"
	"io"

	"github.com/topobench/topobench/internal/speed"
)

// runSpeed is one speed probe (internal/speed): compare -speed-probe runs
// one per CPU it measures, pinned there, and reads its lines.
func runSpeed(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("speed", stderr)
	period := fs.Duration("period", speed.DefaultPeriod, "how often the probe spins")
	spin := fs.Duration("spin", speed.DefaultSpin, "how long each spin lasts (its share of the CPU is spin/period)")
	prio := fs.Int("priority", speed.DefaultPriority, "its SCHED_FIFO priority, 1-99")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench speed [-period D] [-spin D] [-priority N]")
		fmt.Fprintln(stderr, "\nProbes the speed of the CPU it runs on (pin it: taskset -c N) until\nstopped: every -period it spins for -spin at real-time priority and prints\nthe spin's start (Unix ns), its length (ns) and the turns it made.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *period <= 0:
		return usageError("speed: -period must be positive")
	case *spin <= 0 || *spin >= *period:
		return usageError("speed: -spin must be positive and shorter than -period")
	case *prio < 1 || *prio > 99:
		return usageError("speed: -priority %d, want 1-99", *prio)
	}
	return speed.Run(ctx, stdout, speed.Options{Period: *period, Spin: *spin, Priority: *prio})
}

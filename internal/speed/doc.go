// Package speed measures how fast this machine's CPUs run from one moment
// to the next, so that a run's figures can be read beside the speed they
// were made at.
//
// On a virtual machine the host sets the guest's speed, and nothing in
// the guest shows it: no steal time, and often no performance counters.
// There a spin loop alone on a CPU counts more or less work from one
// block of seconds to the next, and the rate of one server under one load
// follows the probe's speed closely from run to run.
//
// A probe is one process on one CPU (compare -speed-probe starts one per
// CPU it measures, pinned through internal/proc). Every Period it takes
// real-time priority's turn (SCHED_FIFO, so that on its CPU only the
// hypervisor and interrupts can delay it), spins for Spin, counting turns
// of a fixed arithmetic loop, and prints one line: the spin's start in
// Unix nanoseconds, its length in nanoseconds, and the turns it made. It
// takes Spin/Period of its CPU (1% by default), the same share in every
// run, so it moves no ratio between runs.
//
// The probe reads more than the host: its spin loses the time its CPU's
// interrupts take (a kernel without CONFIG_IRQ_TIME_ACCOUNTING has no
// clock that leaves them out), so on a CPU that carries network traffic
// it reads slower the more packets the traffic brings. Compare its
// readings between runs of the same work, not between different work.
//
// A Series reads those lines as they come (ReadFrom; Parse reads a
// finished file) and gives the mean speed over a span of time (Mean), in
// turns per microsecond: a figure to compare between runs on one machine,
// not between machines.
package speed

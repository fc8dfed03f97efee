package sweep

import (
	"fmt"

	"github.com/topobench/topobench/internal/cpulatency"
)

// holdCPULatency keeps this machine's CPUs from sleeping while the sweep
// runs (package cpulatency) and says so; a machine that refuses gets a
// warning, not a stop. The func it returns releases the hold.
func (s *sweep) holdCPULatency() func() {
	h, err := cpulatency.Acquire(cpulatency.Device)
	if err != nil {
		s.warn("%v: idle CPUs may sleep between requests, and on a virtual machine each wake-up adds to latency and spread", err)
		return func() {}
	}
	s.env.CPULatencyHeld = true
	fmt.Fprintf(s.Progress, "cpu latency: held at 0 µs while the sweep runs (%s): idle CPUs poll, not sleep\n", cpulatency.Device)
	return func() { _ = h.Release() }
}

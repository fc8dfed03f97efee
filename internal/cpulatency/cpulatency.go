// Package cpulatency holds the kernel's CPU latency request at zero while a
// sweep runs (Documentation/power/pm_qos_interface.rst): with it the idle
// governor polls instead of halting a CPU between requests. On a virtual
// machine a halted virtual CPU waits for the host to run it again on every
// wake-up, which shows as steal time and adds its wait to each request's
// latency, more on some runs than others.
package cpulatency

import (
	"encoding/binary"
	"fmt"
	"os"
)

// Device is the kernel's CPU latency QoS interface.
const Device = "/dev/cpu_dma_latency"

// Hold is a request for zero CPU wake-up latency, in force until Release.
type Hold struct{ f *os.File }

// Acquire opens dev (Device) and asks for a wake-up latency of 0 µs; the
// kernel keeps the request while the file stays open, and drops it when the
// process exits, however it exits.
func Acquire(dev string) (*Hold, error) {
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("holding cpu latency at 0: %w", err)
	}
	if _, err := f.Write(binary.NativeEndian.AppendUint32(nil, 0)); err != nil {
		f.Close()
		return nil, fmt.Errorf("holding cpu latency at 0: writing %s: %w", dev, err)
	}
	return &Hold{f: f}, nil
}

// Release drops the request; nil on a nil Hold.
func (h *Hold) Release() error {
	if h == nil || h.f == nil {
		return nil
	}
	err := h.f.Close()
	h.f = nil
	return err
}

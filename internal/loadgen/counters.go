package loadgen

import (
	"fmt"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cgroup"
	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// Counters are the counter files a load session reads at a window's
// edges for the servers of one pool: their group's total and, where the
// servers' time is split (cgroup.Hierarchy.AccountsOnly), each part's
// (their total, user and system time). Empty paths are read from nothing.
type Counters struct {
	Total         string
	Nginx, Server [3]string
}

// Files are the counters' non-empty paths, the total first.
func (c Counters) Files() []string {
	var out []string
	for _, p := range append([]string{c.Total}, append(c.Nginx[:], c.Server[:]...)...) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// fill puts the servers' CPU time over a measured span of length window
// into cpu, from the session's readings rs of the counter files: the
// group's total, and nginx's and the backend's apart where the parts
// were read (results.CPU.PartsSpan).
func (c Counters) fill(rs []load.CounterReading, cpu *results.CPU, window time.Duration) error {
	if c.Total == "" {
		return nil
	}
	servers, err := windowServersCPU(rs, c.Total)
	if err != nil {
		return err
	}
	cpu.Servers = &results.GroupCPU{Seconds: servers.Seconds(), Span: results.SpanWindow, Window: window}
	nginx, err := partUsage(rs, c.Nginx)
	if err != nil {
		return err
	}
	server, err := partUsage(rs, c.Server)
	if err != nil || (nginx == nil && server == nil) {
		return err
	}
	cpu.Nginx, cpu.Server, cpu.PartsSpan = nginx, server, results.SpanWindow
	return nil
}

// partUsage is a part's CPU time from the readings of its files (its
// total, user and system time): the total is the scheduler's, exact to
// the nanosecond; the kernel keeps user and system time from its ticks,
// so they only divide the total between them. nil for a part not read.
func partUsage(rs []load.CounterReading, files [3]string) (*results.Usage, error) {
	if files[0] == "" {
		return nil, nil
	}
	var d [3]time.Duration
	for i, f := range files {
		v, err := windowServersCPU(rs, f)
		if err != nil {
			return nil, err
		}
		d[i] = v
	}
	total, user, sys := d[0].Seconds(), d[1].Seconds(), d[2].Seconds()
	if user+sys <= 0 {
		return &results.Usage{User: total}, nil
	}
	return &results.Usage{User: total * user / (user + sys), System: total * sys / (user + sys)}, nil
}

// windowServersCPU is the servers' CPU time over a session window from
// the reading of their group's counter file path.
func windowServersCPU(rs []load.CounterReading, path string) (time.Duration, error) {
	for _, r := range rs {
		if r.Path != path {
			continue
		}
		if r.Error != "" {
			return 0, fmt.Errorf("reading %s: %s", path, r.Error)
		}
		start, err := cgroup.ParseUsage(strings.NewReader(r.Start))
		if err != nil {
			return 0, fmt.Errorf("%s at the window's start: %w", path, err)
		}
		end, err := cgroup.ParseUsage(strings.NewReader(r.End))
		if err != nil {
			return 0, fmt.Errorf("%s at the window's end: %w", path, err)
		}
		if end < start {
			return 0, fmt.Errorf("%s went back from %d to %d ns", path, start, end)
		}
		return end - start, nil
	}
	return 0, fmt.Errorf("the load session did not read %s", path)
}

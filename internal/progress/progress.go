// Package progress writes the lines a sweep prints as it goes: a run's
// result with every error class beside it, its CPU per request, settling
// and noise, and the load nodes of a run on a cluster. Pure functions of
// a record (internal/results); the sweep decides when to print them.
package progress

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/numfmt"
	"github.com/topobench/topobench/internal/results"
)

// RunLine is the one-line result printed as a cell finishes: the rate,
// latency, and every error class beside it.
func RunLine(run results.Run) string {
	var f results.Figures
	if run.Figures != nil {
		f = *run.Figures
	}
	e := f.Errors
	// A generator without percentiles (h2load) has its mean and maximum.
	lat := fmt.Sprintf("p50 %s  p99 %s", Latency(f.P50), Latency(f.P99))
	if !f.Latency && f.Mean > 0 {
		lat = fmt.Sprintf("mean %s  max %s", Latency(f.Mean), Latency(f.Max))
	}
	line := fmt.Sprintf("%s req/s  %s  errors: connect %d read %d write %d timeout %d non-2xx %d",
		numfmt.Count(f.ReqPerSec), lat, e.Connect, e.Read, e.Write, e.Timeout, e.Status)
	if f.Protocol != "" {
		line += fmt.Sprintf("  %s, %d in flight a connection", f.Protocol, f.Streams)
	}
	switch {
	case run.Probe:
		line = fmt.Sprintf("%d of %d served concurrently  max %s  ", f.Concurrent, run.Requests, Latency(f.Max)) + line
	case f.TargetRate > 0:
		line += fmt.Sprintf("  (target %s req/s, late %d, dropped %d)", numfmt.Count(f.TargetRate), f.Late, f.Dropped)
	}
	if f.ReadyPerWake > 0 {
		line += fmt.Sprintf("  %.2f ready per wake-up on %d loops", f.ReadyPerWake, f.Threads)
	}
	return line
}

// Latency is a latency for a progress line: "1.23s", "4.5ms" or "120us".
func Latency(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dus", d/time.Microsecond)
	}
}

// HalfWidth is an interval's half width for a progress line, after "±":
// "7%", or ">100%" where the first runs leave it wider than the figure
// itself, "∞" where it is unknown.
func HalfWidth(hw float64) string {
	switch {
	case math.IsInf(hw, 1):
		return "∞"
	case math.IsNaN(hw) || hw > 1:
		return ">100%"
	}
	return numfmt.Pct(hw)
}

// Round is d rounded for a progress line: to the second past a minute,
// else to a tenth.
func Round(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

// Width is how many digits n prints in.
func Width(n int) int { return len(strconv.Itoa(n)) }

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Failure is a failed cell's error for the terminal: its first line and
// the tail of the child's stderr below it (proc's errors carry the last
// 10 lines, indented), so the cause shows where the failure does, not only
// in summary.md.
func Failure(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > maxFailureLines {
		lines = append(lines[:1], lines[len(lines)-maxFailureLines+1:]...)
	}
	return strings.Join(lines, "\n")
}

// maxFailureLines bounds a failed cell's message on the terminal.
const maxFailureLines = 12

// CPUNote is what a cell's progress line adds about settling, CPU per
// request and noise.
func CPUNote(run results.Run) string {
	var parts []string
	if st := run.Settle; st != nil && !st.Settled {
		parts = append(parts, fmt.Sprintf("NOT SETTLED: servers at %.0f%% of a CPU after %s", 100*st.CPUShare, Round(st.Waited)))
	}
	if f := run.Figures; run.CPU != nil && f != nil {
		n := f.Requests
		parts = append(parts, fmt.Sprintf("cpu/req: load %.1fus nginx %s server %s",
			results.PerRequest(run.CPU.Load, n), perRequest(run.CPU.Nginx, run.PartsRequests()), perRequest(run.CPU.Server, run.PartsRequests())))
		if g := run.CPU.Servers; g != nil {
			if g.Span != results.SpanWindow {
				n = run.ServedRequests()
			}
			parts = append(parts, fmt.Sprintf("servers' group %.1fus over the %s, utilization %.2f", g.PerRequest(n), g.Span, g.Utilization))
		}
	}
	if n := NodeNote(run); n != "" {
		parts = append(parts, n)
	}
	if run.Noise != nil && run.Noise.Flagged != "" {
		parts = append(parts, "NOISY: "+run.Noise.Flagged)
	}
	if sp := run.Noise.SpeedOf(); sp != nil {
		parts = append(parts, fmt.Sprintf("speed: servers' CPUs %.2f, load's %.2f turns/us", sp.Servers, sp.Load))
	}
	if run.LoadBound() {
		parts = append(parts, "LOAD-BOUND: the load generator "+run.LoadUse())
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, "; ")
}

// perRequest is a process group's CPU µs per request for the progress
// line; "–" when it was not measured.
func perRequest(u *results.Usage, requests int64) string {
	if u == nil {
		return "–"
	}
	return fmt.Sprintf("%.1fus", results.PerRequest(*u, requests))
}

// NodeNote is the progress line's account of each load node: its start
// skew, p99 and p99.9, and whether it was load-bound.
func NodeNote(run results.Run) string {
	if len(run.Nodes) == 0 {
		return ""
	}
	var parts []string
	for i, n := range run.Nodes {
		p := fmt.Sprintf("node%d skew %s p99 %s p99.9 %s", i, fmtMs(n.StartSkew), fmtMs(n.Figures.P99), fmtMs(n.Figures.P999))
		if n.LoadBound {
			p += " LOAD-BOUND"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func fmtMs(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}

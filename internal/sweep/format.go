package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
)

// cellLine is the one-line result printed as a cell finishes: the rate,
// latency, and every error class beside it.
func cellLine(run results.Run) string {
	var f results.Figures
	if run.Figures != nil {
		f = *run.Figures
	}
	e := f.Errors
	line := fmt.Sprintf("%s req/s  p50 %s  p99 %s  errors: connect %d read %d write %d timeout %d non-2xx %d",
		groupThousands(f.ReqPerSec), fmtLatency(f.P50), fmtLatency(f.P99), e.Connect, e.Read, e.Write, e.Timeout, e.Status)
	switch {
	case run.Probe:
		line = fmt.Sprintf("%d of %d served concurrently  max %s  ", f.Concurrent, run.Requests, fmtLatency(f.Max)) + line
	case f.TargetRate > 0:
		line += fmt.Sprintf("  (target %s req/s, late %d, dropped %d)", groupThousands(f.TargetRate), f.Late, f.Dropped)
	}
	if f.ReadyPerWake > 0 {
		line += fmt.Sprintf("  %.2f ready per wake-up on %d loops", f.ReadyPerWake, f.Threads)
	}
	return line
}

func fmtLatency(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dus", d/time.Microsecond)
	}
}

func groupThousands(f float64) string {
	s := strconv.FormatInt(int64(f+0.5), 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}

func width(n int) int { return len(strconv.Itoa(n)) }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// failure is a failed cell's error for the terminal: its first line and
// the tail of the child's stderr below it (proc's errors carry the last
// 10 lines, indented), so the cause shows where the failure does, not only
// in summary.md.
func failure(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > maxFailureLines {
		lines = append(lines[:1], lines[len(lines)-maxFailureLines+1:]...)
	}
	return strings.Join(lines, "\n")
}

// maxFailureLines bounds a failed cell's message on the terminal.
const maxFailureLines = 12

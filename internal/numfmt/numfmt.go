// Package numfmt prints figures for people: counts with thousands
// separators, percentages, latencies and sizes in a readable unit. The
// analysis writes its warnings with it and every renderer its tables, so a
// figure reads the same everywhere.
package numfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Plural is "1 CPU" or "2 CPUs".
func Plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func Figure(v float64) string {
	if math.Abs(v) >= 100 {
		return Count(v)
	}
	return fmt.Sprintf("%.3f", v)
}

func HalfWidth(hw float64) string {
	if math.IsInf(hw, 0) {
		return "∞"
	}
	return Pct(hw)
}

// Bytes prints a memory size in MiB or KiB.
func Bytes(b int64) string {
	switch {
	case b <= 0:
		return "unknown"
	case b >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
	default:
		return fmt.Sprintf("%.0f KiB", float64(b)/(1<<10))
	}
}

// Micros prints µs with two significant digits below 10.
func Micros(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// Count prints a rate or count rounded to an integer with thousands
// separators: 42,745.
func Count(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	if v < 0 && s != "0" {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func Pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// Dur prints a latency with three significant digits in µs, ms or s.
func Dur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

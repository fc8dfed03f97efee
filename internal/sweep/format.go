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
	r := *run.Result
	p50, _ := r.Percentile(50)
	p99, _ := r.Percentile(99)
	e := r.Errors
	return fmt.Sprintf("%s req/s  p50 %s  p99 %s  errors: connect %d read %d write %d timeout %d non-2xx %d",
		groupThousands(r.RequestsPerSec), fmtLatency(p50), fmtLatency(p99), e.Connect, e.Read, e.Write, e.Timeout, e.Status)
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

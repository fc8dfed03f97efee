package loadgen

import (
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
)

// WithSchedule asks the server to work and wait before answering (cmd/hello's
// ?work= and ?wait=), as the schedule says; durations in ASCII ("200us").
func WithSchedule(url string, sc results.Schedule) string {
	var q []string
	for _, p := range []struct {
		key string
		d   time.Duration
	}{{"work", sc.Work}, {"wait", sc.Wait}} {
		if p.d > 0 {
			q = append(q, p.key+"="+strings.ReplaceAll(p.d.String(), "µ", "u"))
		}
	}
	if len(q) == 0 {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&" // the plan's -path has a query of its own
	}
	return url + sep + strings.Join(q, "&")
}

// withoutSchedule drops from url the query WithSchedule added for the
// schedule (work=, wait=), keeping a query of the plan's -path.
func withoutSchedule(url string) string {
	base, query, ok := strings.Cut(url, "?")
	if !ok {
		return url
	}
	var keep []string
	for _, kv := range strings.Split(query, "&") {
		if !strings.HasPrefix(kv, "work=") && !strings.HasPrefix(kv, "wait=") {
			keep = append(keep, kv)
		}
	}
	if len(keep) == 0 {
		return base
	}
	return base + "?" + strings.Join(keep, "&")
}

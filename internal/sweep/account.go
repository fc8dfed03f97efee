package sweep

import (
	"fmt"
	"strings"

	"github.com/topobench/topobench/internal/results"
)

// cpuNote is what a cell's progress line adds about settling, CPU per
// request and noise.
func cpuNote(run results.Run) string {
	var parts []string
	if st := run.Settle; st != nil && !st.Settled {
		parts = append(parts, fmt.Sprintf("NOT SETTLED: servers at %.0f%% of a CPU after %s", 100*st.CPUShare, roundDur(st.Waited)))
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
	if n := nodeNote(run); n != "" {
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

package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cpuset"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stats"
	"github.com/topobench/topobench/internal/target"
)

// The parsers of a flag's value return the value's error alone, which the
// command prefixes with its flag; ParseLeads and ParseWindows, read after
// the flags, return a FieldError.

// ParseCPUs turns -cpus into the load generator's and the servers' CPU
// lists on a machine whose harness may run on the CPUs allowed
// (cpuset.Allowed): "first" gives the load generator the first and the
// servers the rest (both unpinned with fewer than 2 CPUs), so every
// topology gets the same CPU budget; "auto" is the same here, and the
// sweep then replaces it with a calibrated split (the sweep's
// Options.CalibrateCPUs); "none" leaves both unpinned;
// "LOAD/SERVER" names both lists, e.g. "0/1-3", each within allowed.
func ParseCPUs(spec string, allowed cpuset.CPUSet) (load, server string, err error) {
	switch spec {
	case "none":
		return "", "", nil
	case "auto", "first":
		cpus := allowed.CPUs()
		if len(cpus) < 2 {
			return "", "", nil
		}
		return strconv.Itoa(cpus[0]), cpuset.Of(cpus[1:]...).String(), nil
	}
	load, server, ok := strings.Cut(spec, "/")
	if !ok {
		return "", "", fmt.Errorf("%q: want auto, first, none or LOAD/SERVER CPU lists such as 0/1-3", spec)
	}
	ls, err := cpuset.Parse(load)
	if err == nil {
		err = ls.Within(allowed)
	}
	if err != nil {
		return "", "", fmt.Errorf("load generator: %w", err)
	}
	ss, err := cpuset.Parse(server)
	if err == nil {
		err = ss.Within(allowed)
	}
	if err != nil {
		return "", "", fmt.Errorf("servers: %w", err)
	}
	for _, c := range ls.CPUs() {
		if ss.Contains(c) {
			return "", "", fmt.Errorf("%q: CPU %d is in both sets; the point is to keep them apart", spec, c)
		}
	}
	return ls.String(), ss.String(), nil
}

// ParseInts parses a comma-separated list of integers ("1,8").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no numbers in %q", s)
	}
	return out, nil
}

// ParseList splits a comma-separated list, trimming spaces and dropping
// empty entries.
func ParseList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Defaults of -reps auto.
const (
	DefaultMaxReps = 12
	DefaultWithin  = 0.05
)

// ParseReps reads -reps: a count ("3"), "auto" (from the fewest rounds
// that give a 95% interval up to DefaultMaxReps), or "auto:N" (up to N).
func ParseReps(v string) (reps int, auto *results.RepsAuto, err error) {
	rest, isAuto := strings.CutPrefix(v, "auto")
	if !isAuto {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, nil, fmt.Errorf("%q is not a count, auto or auto:N", v)
		}
		return n, nil, nil
	}
	max := DefaultMaxReps
	if rest != "" {
		m, ok := strings.CutPrefix(rest, ":")
		n, err := strconv.Atoi(m)
		if !ok || err != nil {
			return 0, nil, fmt.Errorf("%q: want auto or auto:N with N the most repetitions", v)
		}
		max = n
	}
	d, err := stats.SequentialUpTo(max)
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %w", v, err)
	}
	return d.Min, &results.RepsAuto{Max: max, Within: DefaultWithin, Confidence: d.Confidence()}, nil
}

// KnownTargets lists the servers a plan may name: Go's cmd/hello and the
// seeds' servers of internal/target.
func KnownTargets() []string { return append([]string{results.TargetGo}, target.Names()...) }

// ParseTargets reads -targets: a comma-separated list, or "all". A
// command target with a comma in it is quoted (target.SplitNames):
// -targets "go,cmd:'./api -tags a,b -listen {addr}'".
func ParseTargets(v string) ([]string, error) {
	if strings.TrimSpace(v) == "all" {
		return KnownTargets(), nil
	}
	return target.SplitNames(strings.TrimRight(strings.TrimSpace(v), ","))
}

// ParseKeepalives reads -upstream-keepalive: a comma-separated list of
// pools, each auto or a count of connections ("300,auto").
func ParseKeepalives(s string) ([]results.Keepalive, error) {
	var out []results.Keepalive
	for _, f := range ParseList(s) {
		k, err := results.ParseKeepalive(f)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no pools in %q, want auto or counts such as 300,auto", s)
	}
	return out, nil
}

// DefaultPairs is each topology's pairs without a budget.
const DefaultPairs = 10

// DefaultWindow is a measured window's length under -design paired until
// it is chosen from measurement (the spread of per-window rates against
// window length at -c5000).
const DefaultWindow = 2 * time.Second

// DefaultLead is each window's unmeasured load before its measured time:
// a pool starting from idle reads a slow path low by a fixed time a
// window, so without it the shorter the window the lower the ratio.
const DefaultLead = time.Second

// CrossCheckTopologies are the topologies of a cross-check (-cross-check
// wrk): one run each, CrossCheckDuration long as 2013's, at the first
// processor value.
func CrossCheckTopologies() []string { return []string{"standalone", "nginx-http"} }

// CrossCheckDuration is a cross-check run's length.
const CrossCheckDuration = 15 * time.Second

// ParseLeads reads -lead: a lead for every topology, and TOPOLOGY=D for
// those of tops with their own ("1s,standalone=250ms").
func ParseLeads(s string, tops []string) (lead time.Duration, own map[string]time.Duration, err error) {
	return parseOwn(Lead, s, tops, DefaultLead, func(d time.Duration) bool { return d >= 0 && d <= time.Minute }, "a duration from 0 to 1m")
}

// ParseWindows reads -window: a window's length for every topology, and
// TOPOLOGY=D for those of tops whose pairs have their own
// ("3s,nginx-fcgi-tcp=6s"), each whole seconds from 1s to MaxDuration.
func ParseWindows(s string, tops []string) (window time.Duration, own map[string]time.Duration, err error) {
	return parseOwn(Windows, s, tops, DefaultWindow, func(d time.Duration) bool {
		return d >= time.Second && d%time.Second == 0 && d <= MaxDuration
	}, fmt.Sprintf("whole seconds from 1s to %s (wrk measures in whole seconds)", MaxDuration))
}

// parseOwn reads a field of one duration for every topology (def where
// none is given) and TOPOLOGY=D for those of tops with their own; ok
// says which durations the field takes, want how its error says so.
func parseOwn(field Field, s string, tops []string, def time.Duration, ok func(time.Duration) bool, want string) (all time.Duration, own map[string]time.Duration, err error) {
	all, set := def, false
	for _, f := range strings.Split(s, ",") {
		name, v, named := strings.Cut(strings.TrimSpace(f), "=")
		if !named {
			v = name
		}
		d, err := time.ParseDuration(v)
		if err != nil || !ok(d) {
			return 0, nil, Errorf(field, "%q, want %s, or TOPOLOGY=DURATION", f, want)
		}
		switch {
		case !named && set:
			return 0, nil, Errorf(field, "%q: one duration for every topology, the others TOPOLOGY=DURATION", s)
		case !named:
			all, set = d, true
		case !slices.Contains(tops, name):
			return 0, nil, Errorf(field, "%q is not a topology of the plan (%s)", name, strings.Join(tops, ", "))
		default:
			if own == nil {
				own = map[string]time.Duration{}
			}
			own[name] = d
		}
	}
	return all, own, nil
}

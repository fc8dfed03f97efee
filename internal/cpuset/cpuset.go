// Package cpuset reads and writes CPU lists in the form taskset -c takes and
// the kernel prints (Cpus_allowed_list, /sys/devices/system/cpu/online):
// comma-separated CPU numbers and ranges, "0", "0-3,8", "0-7:2".
//
// The harness pins wrk, cmd/hello and nginx with taskset. A list taskset
// cannot use fails only when the pinned program starts, once per cell, so
// Parse checks the syntax and Set.Within checks the CPUs against those the
// harness may run on, before anything starts.
package cpuset

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// MaxCPU is the highest CPU number Parse accepts: more than any kernel's
// NR_CPUS, and it keeps "0-999999999" from meaning anything.
const MaxCPU = 1<<16 - 1

// CPUSet is a set of CPU numbers. The zero value is the empty set, which
// the harness reads as "not pinned".
type CPUSet struct {
	// spans are sorted, disjoint and not adjacent: String prints them as
	// they are.
	spans []span
}

type span struct{ lo, hi int } // inclusive

// ParseError is a CPU list Parse cannot read; Item is the comma-separated
// element at fault (empty when the whole list is).
type ParseError struct {
	List string
	Item string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Item == "" {
		return fmt.Sprintf("CPU list %q: %s", e.List, e.Msg)
	}
	return fmt.Sprintf("CPU list %q: %q %s", e.List, e.Item, e.Msg)
}

// Parse reads a CPU list: elements N, N-M or N-M:S (every S-th CPU from N
// to M, as taskset reads it) separated by commas, with no spaces inside;
// spaces around the list are ignored. An empty list is an error: callers
// that let "" mean "unpinned" check for it first.
func Parse(list string) (CPUSet, error) {
	s := strings.TrimSpace(list)
	if s == "" {
		return CPUSet{}, &ParseError{List: list, Msg: "is empty; want CPU numbers such as 0 or 0-1,3"}
	}
	var spans []span
	for _, item := range strings.Split(s, ",") {
		bad := func(msg string) error { return &ParseError{List: list, Item: item, Msg: msg} }
		if item == "" {
			return CPUSet{}, &ParseError{List: list, Msg: "has an empty element; want CPU numbers such as 0 or 0-1,3"}
		}
		rng, stride, hasStride := strings.Cut(item, ":")
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, err := cpuNumber(loS)
		if err != nil {
			return CPUSet{}, bad(err.Error())
		}
		hi := lo
		if isRange {
			if hi, err = cpuNumber(hiS); err != nil {
				return CPUSet{}, bad(err.Error())
			}
			if hi < lo {
				return CPUSet{}, bad("is a range that runs backwards")
			}
		}
		step := 1
		if hasStride {
			if !isRange {
				return CPUSet{}, bad("has a stride but no range; want N-M:S")
			}
			if step, err = strconv.Atoi(stride); err != nil || step < 1 || !digits(stride) {
				return CPUSet{}, bad("has a stride that is not a positive integer")
			}
		}
		if step == 1 {
			spans = append(spans, span{lo, hi})
			continue
		}
		for c := lo; c <= hi; c += step {
			spans = append(spans, span{c, c})
		}
	}
	return normalize(spans), nil
}

func cpuNumber(s string) (int, error) {
	if !digits(s) {
		return 0, fmt.Errorf("is not a CPU number or range; want CPU numbers such as 0 or 0-1,3")
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxCPU {
		return 0, fmt.Errorf("names a CPU beyond %d", MaxCPU)
	}
	return n, nil
}

func digits(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

// normalize sorts spans and merges those that overlap or touch.
func normalize(spans []span) CPUSet {
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
	var out []span
	for _, sp := range spans {
		if n := len(out); n > 0 && sp.lo <= out[n-1].hi+1 {
			out[n-1].hi = max(out[n-1].hi, sp.hi)
			continue
		}
		out = append(out, sp)
	}
	return CPUSet{spans: out}
}

// Of returns the set of the given CPUs.
func Of(cpus ...int) CPUSet {
	spans := make([]span, len(cpus))
	for i, c := range cpus {
		spans[i] = span{c, c}
	}
	return normalize(spans)
}

// String is the canonical list, ranges coalesced ("0-3,8"); "" for the
// empty set. Parse(s.String()) gives s back.
func (s CPUSet) String() string {
	var b strings.Builder
	for i, sp := range s.spans {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(sp.lo))
		if sp.hi > sp.lo {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(sp.hi))
		}
	}
	return b.String()
}

// Set parses v into s, so a CPUSet can be a flag (flag.Var); "" leaves the
// set empty (unpinned).
func (s *CPUSet) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		*s = CPUSet{}
		return nil
	}
	p, err := Parse(v)
	if err != nil {
		return err
	}
	*s = p
	return nil
}

// IsEmpty reports whether the set has no CPU.
func (s CPUSet) IsEmpty() bool { return len(s.spans) == 0 }

// Len is the number of CPUs in the set.
func (s CPUSet) Len() int {
	n := 0
	for _, sp := range s.spans {
		n += sp.hi - sp.lo + 1
	}
	return n
}

// CPUs lists the CPU numbers in ascending order.
func (s CPUSet) CPUs() []int {
	out := make([]int, 0, s.Len())
	for _, sp := range s.spans {
		for c := sp.lo; c <= sp.hi; c++ {
			out = append(out, c)
		}
	}
	return out
}

// Contains reports whether cpu is in the set.
func (s CPUSet) Contains(cpu int) bool {
	for _, sp := range s.spans {
		if sp.lo <= cpu && cpu <= sp.hi {
			return true
		}
	}
	return false
}

// Within checks that every CPU of s is in allowed (typically Allowed()),
// naming the first that is not: taskset refuses such a list only when the
// pinned program starts.
func (s CPUSet) Within(allowed CPUSet) error {
	for _, sp := range s.spans {
		for c := sp.lo; c <= sp.hi; c++ {
			if !allowed.Contains(c) {
				return fmt.Errorf("CPU list %q: CPU %d is not one this process may run on (%s)", s.String(), c, allowed.String())
			}
		}
	}
	return nil
}

// Allowed returns the CPUs this process may run on (its affinity, which a
// container's cpuset or a taskset around the harness narrows), as the
// kernel lists them in /proc/self/status.
func Allowed() (CPUSet, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return CPUSet{}, fmt.Errorf("reading the CPUs this process may use: %w", err)
	}
	return allowedFromStatus(b)
}

func allowedFromStatus(status []byte) (CPUSet, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			s, err := Parse(v)
			if err != nil {
				return CPUSet{}, fmt.Errorf("reading Cpus_allowed_list: %w", err)
			}
			return s, nil
		}
	}
	return CPUSet{}, fmt.Errorf("no Cpus_allowed_list in /proc/self/status")
}

package load

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Counter files. A session's window may name files holding counters that
// the harness wants over exactly the measured time, not the lead or the
// drain, e.g. the servers' control group's CPU time (cgroup v1
// cpuacct.usage, v2 cpu.stat):
//
//	window NAME DURATION [lead DURATION] [counters PATH[,PATH...]]
//
// The session reads each file whole when the measured time starts (the
// lead's end) and again when it ends (when sending stops), and returns
// both texts (Window.Counters); what they mean is the harness's business.
// The reads are a few microseconds each, on a timer's goroutine beside
// the connections.

// CounterReading is one counter file's text at the measured time's start
// and end; Error says why a reading failed (then its text is empty).
type CounterReading struct {
	Path  string `json:"path"`
	Start string `json:"start"`
	End   string `json:"end"`
	Error string `json:"error,omitempty"`
}

// WindowSpec is a window command's arguments: its measured duration,
// the lead before it, the slices it is cut into (0 or 1: none) and the
// counter files read at its edges.
type WindowSpec struct {
	Duration, Lead time.Duration
	Slices         int
	Counters       []string
}

// windowArgs parses what follows a window's pool name: its duration,
// then optionally "lead DURATION", "slices N" and
// "counters PATH[,PATH...]".
func windowArgs(arg string) (WindowSpec, error) {
	var ws WindowSpec
	f := strings.Fields(arg)
	if len(f) == 0 || len(f)%2 != 1 {
		return ws, fmt.Errorf("%q: want window NAME DURATION [lead DURATION] [slices N] [counters PATH,...]", arg)
	}
	var err error
	if ws.Duration, err = time.ParseDuration(f[0]); err != nil {
		return ws, fmt.Errorf("duration %q: want a Go duration such as 2s", f[0])
	}
	seen := map[string]bool{}
	for i := 1; i < len(f); i += 2 {
		k, v := f[i], f[i+1]
		if seen[k] {
			return ws, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		switch k {
		case "lead":
			if ws.Lead, err = time.ParseDuration(v); err != nil {
				return ws, fmt.Errorf("lead %q: want a Go duration such as 1s", v)
			}
		case "slices":
			if ws.Slices, err = strconv.Atoi(v); err != nil || ws.Slices < 1 {
				return ws, fmt.Errorf("slices %q: want a count, at least 1", v)
			}
		case "counters":
			for _, p := range strings.Split(v, ",") {
				if p == "" {
					return ws, fmt.Errorf("counters %q: an empty path", v)
				}
				ws.Counters = append(ws.Counters, p)
			}
		default:
			return ws, fmt.Errorf("%q: want lead, slices or counters after the duration", k)
		}
	}
	return ws, nil
}

// counterWindow reads counter files at the measured time's two ends;
// each end is read once, whichever of the timer and the window's own end
// gets there first, and a second call waits for the first.
type counterWindow struct {
	paths      []string
	start, end sync.Once
	mu         sync.Mutex // the two ends are read from two timers' goroutines
	r          []CounterReading
}

func newCounterWindow(paths []string) *counterWindow {
	cw := &counterWindow{paths: paths, r: make([]CounterReading, len(paths))}
	for i, p := range paths {
		cw.r[i].Path = p
	}
	return cw
}

func (cw *counterWindow) readStart() {
	cw.start.Do(func() { cw.read(func(r *CounterReading) *string { return &r.Start }) })
}
func (cw *counterWindow) readEnd() {
	cw.end.Do(func() { cw.read(func(r *CounterReading) *string { return &r.End }) })
}

func (cw *counterWindow) read(into func(*CounterReading) *string) {
	texts, failed := readCounters(cw.paths)
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for i := range cw.r {
		r := &cw.r[i]
		if failed[i] != "" {
			if r.Error == "" {
				r.Error = failed[i]
			}
			continue
		}
		*into(r) = texts[i]
	}
}

// readCounters reads each counter file: its text, or why it could not.
func readCounters(paths []string) (texts, failed []string) {
	texts, failed = make([]string, len(paths)), make([]string, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			failed[i] = err.Error()
			continue
		}
		texts[i] = strings.TrimSpace(string(b))
	}
	return texts, failed
}

// marks are the readings at the measured time's start (or end), as the
// marks of a window's slices.
func (cw *counterWindow) marks(end bool) (texts, failed []string) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for _, r := range cw.r {
		t := r.Start
		if end {
			t = r.End
		}
		texts, failed = append(texts, t), append(failed, r.Error)
	}
	return texts, failed
}

// readings are the window's readings; nil for none asked.
func (cw *counterWindow) readings() []CounterReading {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if len(cw.r) == 0 {
		return nil
	}
	return slices.Clone(cw.r)
}

// WindowCounting is WindowAfter that also reads the counter files at
// the measured time's start and end (Window.Counters). Paths may hold
// neither spaces nor commas.
func (c *SessionClient) WindowCounting(ctx context.Context, name string, lead, d time.Duration, counters []string) (Window, error) {
	if err := checkPoolName(name); err != nil {
		return Window{}, err
	}
	line, err := windowLine("window", name, WindowSpec{Duration: d, Lead: lead, Counters: counters})
	if err != nil {
		return Window{}, err
	}
	var w Window
	return w, c.roundTrip(ctx, line, &w)
}

// windowLine is the command line cmd NAMES D [lead L] [slices N]
// [counters P,...].
func windowLine(cmd, names string, ws WindowSpec) (string, error) {
	line := cmd + " " + names + " " + ws.Duration.String()
	if ws.Lead != 0 {
		line += " lead " + ws.Lead.String()
	}
	if ws.Slices > 1 {
		line += " slices " + strconv.Itoa(ws.Slices)
	}
	for _, p := range ws.Counters {
		if p == "" || strings.ContainsAny(p, ", \t\r\n") {
			return "", fmt.Errorf("load session: counter file %q: want a path without spaces or commas", p)
		}
	}
	if len(ws.Counters) > 0 {
		line += " counters " + strings.Join(ws.Counters, ",")
	}
	return line, nil
}

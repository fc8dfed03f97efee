package load

import (
	"context"
	"fmt"
	"os"
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

// windowArgs parses what follows a window's pool name: its duration,
// then optionally "lead DURATION" and "counters PATH[,PATH...]".
func windowArgs(arg string) (d, lead time.Duration, counters []string, err error) {
	f := strings.Fields(arg)
	if len(f) == 0 || len(f)%2 != 1 {
		return 0, 0, nil, fmt.Errorf("%q: want window NAME DURATION [lead DURATION] [counters PATH,...]", arg)
	}
	if d, err = time.ParseDuration(f[0]); err != nil {
		return 0, 0, nil, fmt.Errorf("duration %q: want a Go duration such as 2s", f[0])
	}
	seen := map[string]bool{}
	for i := 1; i < len(f); i += 2 {
		k, v := f[i], f[i+1]
		if seen[k] {
			return 0, 0, nil, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		switch k {
		case "lead":
			if lead, err = time.ParseDuration(v); err != nil {
				return 0, 0, nil, fmt.Errorf("lead %q: want a Go duration such as 1s", v)
			}
		case "counters":
			for _, p := range strings.Split(v, ",") {
				if p == "" {
					return 0, 0, nil, fmt.Errorf("counters %q: an empty path", v)
				}
				counters = append(counters, p)
			}
		default:
			return 0, 0, nil, fmt.Errorf("%q: want lead or counters after the duration", k)
		}
	}
	return d, lead, counters, nil
}

// counterWindow reads counter files at the measured time's two ends;
// each end is read once, whichever of the timer and the window's own end
// gets there first, and a second call waits for the first.
type counterWindow struct {
	r          []CounterReading
	start, end sync.Once
}

func newCounterWindow(paths []string) *counterWindow {
	cw := &counterWindow{r: make([]CounterReading, len(paths))}
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
	for i := range cw.r {
		r := &cw.r[i]
		b, err := os.ReadFile(r.Path)
		if err != nil {
			if r.Error == "" {
				r.Error = err.Error()
			}
			continue
		}
		*into(r) = strings.TrimSpace(string(b))
	}
}

// readings are the window's readings; nil for none asked.
func (cw *counterWindow) readings() []CounterReading {
	if len(cw.r) == 0 {
		return nil
	}
	return cw.r
}

// WindowCounting is WindowAfter that also reads the counter files at
// the measured time's start and end (Window.Counters). Paths may hold
// neither spaces nor commas.
func (c *SessionClient) WindowCounting(ctx context.Context, name string, lead, d time.Duration, counters []string) (Window, error) {
	if err := checkPoolName(name); err != nil {
		return Window{}, err
	}
	line, err := windowLine("window", name, lead, d, counters)
	if err != nil {
		return Window{}, err
	}
	var w Window
	return w, c.roundTrip(ctx, line, &w)
}

// windowLine is the command line cmd NAMES D [lead L] [counters P,...].
func windowLine(cmd, names string, lead, d time.Duration, counters []string) (string, error) {
	line := cmd + " " + names + " " + d.String()
	if lead != 0 {
		line += " lead " + lead.String()
	}
	for _, p := range counters {
		if p == "" || strings.ContainsAny(p, ", \t\r\n") {
			return "", fmt.Errorf("load session: counter file %q: want a path without spaces or commas", p)
		}
	}
	if len(counters) > 0 {
		line += " counters " + strings.Join(counters, ",")
	}
	return line, nil
}

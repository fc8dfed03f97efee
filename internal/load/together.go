package load

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// Together is the reply to together: one window of each named pool, all
// run at once (a duet's two sides), in the order named.
//
// Each window is what window gives alone, with one difference: the load
// process's CPU time (CPUUserNs, CPUSysNs, CallCPUNs) is the process's
// over the span, so it counts every pool of the command, not the window's
// alone.
type Together struct {
	Windows []Window `json:"windows"`
}

// together runs one window of each pool at the same time: each starts its
// lead and its measured time on its own clock, launched in the order
// given, a few microseconds apart.
func (s *session) together(names []string, ws WindowSpec) (Together, error) {
	ps := make([]*pool, len(names))
	seen := map[string]bool{}
	for i, n := range names {
		if seen[n] {
			return Together{}, fmt.Errorf("pool %s named twice", n)
		}
		seen[n] = true
		if ps[i] = s.pools[n]; ps[i] == nil {
			return Together{}, fmt.Errorf("no pool %s", n)
		}
	}
	out := make([]Window, len(ps))
	errs := make([]error, len(ps))
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() { out[i], errs[i] = p.window(ws.Lead, ws.Duration, ws.Slices, ws.Counters) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return Together{}, fmt.Errorf("%s: %w", names[i], err)
		}
	}
	return Together{Windows: out}, nil
}

// Together measures one window of each named pool at the same time, each
// after ws.Lead and cut into ws.Slices, and returns their records in the
// order named.
func (c *SessionClient) Together(ctx context.Context, names []string, ws WindowSpec) (Together, error) {
	if len(names) < 2 {
		return Together{}, fmt.Errorf("load session: together %v: want two pools or more", names)
	}
	for _, n := range names {
		if err := checkPoolName(n); err != nil {
			return Together{}, err
		}
		if strings.Contains(n, ",") {
			return Together{}, fmt.Errorf("load session: pool name %q: no commas in a pool together", n)
		}
	}
	line, err := windowLine("together", strings.Join(names, ","), ws)
	if err != nil {
		return Together{}, err
	}
	var t Together
	if err := c.roundTrip(ctx, line, &t); err != nil {
		return Together{}, err
	}
	if len(t.Windows) != len(names) {
		return Together{}, fmt.Errorf("load session: together %s: %d windows in the reply", strings.Join(names, ","), len(t.Windows))
	}
	return t, nil
}

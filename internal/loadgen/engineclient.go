package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/topobench/topobench/internal/load"
	"github.com/topobench/topobench/internal/results"
)

// engineAdapter is the engine's own client (load.SessionClient) as the
// sweep's engineClient.
type engineAdapter struct{ c *load.SessionClient }

// newEngineClient speaks to a "topobench load -session" child.
func newEngineClient(w io.Writer, r io.Reader) engineClient {
	return engineAdapter{load.NewSessionClient(w, r)}
}

// Open dials the pool; a pool some of whose connections did not open is
// refused, since its windows would load fewer than the cell's.
func (a engineAdapter) Open(ctx context.Context, name string, s load.Spec) error {
	o, err := a.c.Open(ctx, name, s)
	if err != nil {
		return err
	}
	if o.ConnectErrors > 0 {
		return fmt.Errorf("%d of %d connections did not open in %s", o.ConnectErrors, s.Connections, o.Elapsed.Round(time.Millisecond))
	}
	return nil
}

func (a engineAdapter) Window(ctx context.Context, name string, lead, d time.Duration, counters []string) (engineWindow, error) {
	w, err := a.c.WindowCounting(ctx, name, lead, d, counters)
	if err != nil {
		return engineWindow{}, err
	}
	raw, err := json.Marshal(w)
	if err != nil {
		return engineWindow{}, err
	}
	ew := windowOf(w)
	ew.Raw = append(raw, '\n')
	return ew, nil
}

// Together runs one window of each pool at once (load's together).
func (a engineAdapter) Together(ctx context.Context, pools []string, ws load.WindowSpec) ([]engineWindow, []byte, error) {
	t, err := a.c.Together(ctx, pools, ws)
	if err != nil {
		return nil, nil, err
	}
	raw, err := json.Marshal(t)
	if err != nil {
		return nil, nil, err
	}
	var out []engineWindow
	for _, w := range t.Windows {
		out = append(out, windowOf(w))
	}
	return out, append(raw, '\n'), nil
}

// windowOf is a session's window as the sweep records it.
func windowOf(w load.Window) engineWindow {
	return engineWindow{
		Figures:     w.Summary.Figures(),
		CPU:         results.Usage{User: time.Duration(w.CPUUserNs).Seconds(), System: time.Duration(w.CPUSysNs).Seconds()},
		CallCPU:     time.Duration(w.CallCPUNs).Seconds(),
		Counters:    w.Counters,
		Window:      time.Duration(w.DurationNs),
		Reconnects:  w.Reconnects,
		Drain:       time.Duration(w.DrainNs),
		Drained:     w.Drained,
		Lead:        time.Duration(w.LeadNs),
		LeadAnswers: w.LeadAnswers,
		Histogram:   []byte(w.Histogram + "\n"),
		Slices:      w.Slices,
		Start:       w.Start,
	}
}

func (a engineAdapter) Close(_ context.Context, name string) error {
	_, err := a.c.Close(name)
	return err
}

func (a engineAdapter) Quit() error { return a.c.Quit() }

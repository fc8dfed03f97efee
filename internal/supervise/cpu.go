package supervise

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/procstat"
)

// CPU is the CPU time the supervised program's process tree has used so
// far — the program and what it forked, as nginx its workers — read from
// /proc where it runs. The harness in another container cannot see those
// processes; it reads this before and after a measured run instead.
type CPU struct {
	Pid    int     `json:"pid"`
	User   float64 `json:"user_s"`
	System float64 `json:"system_s"`
}

// Times converts c to procstat's form.
func (c CPU) Times() procstat.Times {
	return procstat.Times{User: seconds(c.User), System: seconds(c.System)}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ErrNotRunning is the CPU error when no program runs.
var ErrNotRunning = errors.New("the program is not running")

// CPU reads the running program's process tree from /proc.
func (s *Supervisor) CPU() (CPU, error) {
	st := s.Status()
	if !st.Running || st.Pid == 0 {
		return CPU{}, ErrNotRunning
	}
	fsys := s.cfg.Proc
	if fsys == "" {
		fsys = "/proc"
	}
	t, err := fsys.Tree(st.Pid)
	if err != nil {
		return CPU{}, fmt.Errorf("reading %s's CPU time: %w", s.Name(), err)
	}
	times := t.CPU()
	return CPU{Pid: st.Pid, User: times.User.Seconds(), System: times.System.Seconds()}, nil
}

// cpuError is the body of a /cpu answer that has no figures.
type cpuError struct {
	Error string `json:"error"`
}

func (s *Supervisor) serveCPU(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	c, err := s.CPU()
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(cpuError{err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(c)
}

// CPU asks the agent for its program's CPU time so far (GET /cpu). An
// agent older than the endpoint answers 404, which is an error: the
// figure was not measured.
func (c Client) CPU(ctx context.Context) (CPU, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.URL, "/")+"/cpu", nil)
	if err != nil {
		return CPU{}, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return CPU{}, fmt.Errorf("asking %s for CPU time: %w", c.URL, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return CPU{}, fmt.Errorf("asking %s for CPU time: %w", c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e cpuError
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			return CPU{}, fmt.Errorf("asking %s for CPU time: %s", c.URL, e.Error)
		}
		return CPU{}, fmt.Errorf("asking %s for CPU time: %s", c.URL, resp.Status)
	}
	var out CPU
	if err := json.Unmarshal(data, &out); err != nil {
		return CPU{}, fmt.Errorf("asking %s for CPU time: %w", c.URL, err)
	}
	return out, nil
}

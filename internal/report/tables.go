package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
)

// WriteCSV renders summary.csv: one row per cell, the 2013 figures beside
// the cells the reference has. Unknown values are empty.
func (s Summary) WriteCSV(w io.Writer) error {
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	f4 := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	// when leaves a figure empty unless ok: a cell without successful
	// runs has no rate, one without samples no latency.
	when := func(ok bool, v string) string {
		if !ok {
			return ""
		}
		return v
	}
	type column struct {
		name  string
		value func(c Cell, ref *RefCell) string
	}
	cols := []column{
		{"topology", func(c Cell, _ *RefCell) string { return c.Topology }},
		{"ceiling", func(c Cell, _ *RefCell) string { return strconv.FormatBool(c.Ceiling) }},
		{"reps", func(c Cell, _ *RefCell) string { return strconv.Itoa(c.Reps) }},
		{"failed", func(c Cell, _ *RefCell) string { return strconv.Itoa(c.Failed) }},
		{"reqps_median", func(c Cell, _ *RefCell) string { return when(c.Reps > 0, f2(c.ReqPerSec.Median)) }},
		{"reqps_min", func(c Cell, _ *RefCell) string { return when(c.Reps > 0, f2(c.ReqPerSec.Min)) }},
		{"reqps_max", func(c Cell, _ *RefCell) string { return when(c.Reps > 0, f2(c.ReqPerSec.Max)) }},
		{"spread", func(c Cell, _ *RefCell) string { return when(c.Reps > 0, f4(c.Spread)) }},
		{"ratio_to_standalone", func(c Cell, _ *RefCell) string {
			if c.Reps == 0 || c.RatioToStandalone == nil {
				return ""
			}
			return f4(*c.RatioToStandalone)
		}},
		{"p50_ms", func(c Cell, _ *RefCell) string { return when(c.Latency.Runs > 0, ms(c.Latency.P50)) }},
		{"p99_ms", func(c Cell, _ *RefCell) string { return when(c.Latency.Runs > 0, ms(c.Latency.P99)) }},
		{"max_ms", func(c Cell, _ *RefCell) string { return when(c.Latency.Runs > 0, ms(c.Latency.Max)) }},
		{"latency_runs", func(c Cell, _ *RefCell) string { return strconv.Itoa(c.Latency.Runs) }},
		{"requests", func(c Cell, _ *RefCell) string { return i(c.Requests) }},
		{"err_connect", func(c Cell, _ *RefCell) string { return i(c.Errors.Connect) }},
		{"err_read", func(c Cell, _ *RefCell) string { return i(c.Errors.Read) }},
		{"err_write", func(c Cell, _ *RefCell) string { return i(c.Errors.Write) }},
		{"err_timeout", func(c Cell, _ *RefCell) string { return i(c.Errors.Timeout) }},
		{"non2xx", func(c Cell, _ *RefCell) string { return i(c.Errors.Status) }},
		{"ref2013_reqps", func(_ Cell, r *RefCell) string {
			if r == nil {
				return ""
			}
			return f2(r.RefReqPerSec)
		}},
		{"ref2013_ratio_to_standalone", func(_ Cell, r *RefCell) string {
			if r == nil {
				return ""
			}
			return f4(r.RefRatio)
		}},
		{"notes", func(c Cell, _ *RefCell) string { return strings.Join(c.Notes, ";") }},
	}

	cw := csv.NewWriter(w)
	header := groupColumns()
	for _, col := range cols {
		header = append(header, col.name)
	}
	cw.Write(header)
	for _, c := range s.Cells {
		ref := s.reference(c.Key)
		row := groupValues(c.Group)
		for _, col := range cols {
			row = append(row, col.value(c, ref))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSON renders summary.json: the whole Summary.
func (s Summary) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteBench renders bench.txt: configuration lines, then one line per
// successful run in Go benchmark format,
//
//	BenchmarkTopology/nginx-fcgi-unix/gomaxprocs=8 <requests> <ns/op> ns/op <req/s> req/s <p50> p50-ns <p99> p99-ns <max> max-ns <n> socket-errors <n> timeouts <n> non2xx
//
// where ns/op is 1e9 / req/s. Failed runs appear as "#" comment lines,
// which benchmark readers skip.
func WriteBench(w io.Writer, env results.Env, runs []results.Run) error {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	cfg := func(key, val string) {
		if val = strings.Join(strings.Fields(val), " "); val != "" {
			p("%s: %s\n", key, val)
		}
	}
	p("# topobench sweep; compare two with: benchstat OLD/bench.txt NEW/bench.txt\n")
	cfg("goos", "linux")
	cfg("pkg", "github.com/topobench/topobench")
	cfg("cpu", env.CPUModel)
	if env.CPUs > 0 {
		cfg("cpus", strconv.Itoa(env.CPUs))
	}
	cfg("kernel", env.Kernel)
	cfg("go", env.GoVersion)
	cfg("nginx", env.NginxVersion)
	cfg("wrk", env.WrkVersion)
	if pl := env.Plan; pl.Threads > 0 {
		load := fmt.Sprintf("-t%d -c%d -d%s", pl.Threads, pl.Connections, pl.Duration)
		if pl.Timeout > 0 {
			load += " --timeout " + pl.Timeout.String()
		}
		cfg("load", load)
	}
	cfg("pin-load", env.Plan.PinLoad)
	cfg("pin-server", env.Plan.PinServer)
	p("Unit req/s better=higher\n")
	for _, u := range []string{"p50-ns", "p99-ns", "max-ns", "socket-errors", "timeouts", "non2xx"} {
		p("Unit %s better=lower\n", u)
	}
	for _, r := range runs {
		name := fmt.Sprintf("BenchmarkTopology/%s/gomaxprocs=%d", r.Topology, r.GOMAXPROCS)
		if r.Failed() {
			msg := r.Error
			if msg == "" {
				msg = "no wrk result"
			}
			first, _, _ := strings.Cut(msg, "\n")
			p("# %s rep %d failed: %s\n", name, r.Rep, first)
			continue
		}
		res := r.Result
		p("%s %d", name, res.Requests)
		if res.RequestsPerSec > 0 {
			p(" %.0f ns/op", 1e9/res.RequestsPerSec)
		}
		p(" %.2f req/s", res.RequestsPerSec)
		if res.MaxLatency() > 0 {
			if p50, ok := res.Percentile(50); ok {
				p(" %d p50-ns", p50.Nanoseconds())
			}
			if p99, ok := res.Percentile(99); ok {
				p(" %d p99-ns", p99.Nanoseconds())
			}
			p(" %d max-ns", res.MaxLatency().Nanoseconds())
		}
		e := res.Errors
		p(" %d socket-errors %d timeouts %d non2xx\n", e.Connect+e.Read+e.Write, e.Timeout, e.Status)
	}
	return nil
}

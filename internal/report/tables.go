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
	cw := csv.NewWriter(w)
	cw.Write([]string{
		"gomaxprocs", "topology", "ceiling", "reps", "failed",
		"reqps_median", "reqps_min", "reqps_max", "spread", "ratio_to_standalone",
		"p50_ms", "p99_ms", "max_ms", "latency_runs", "requests",
		"err_connect", "err_read", "err_write", "err_timeout", "non2xx",
		"ref2013_reqps", "ref2013_ratio_to_standalone", "notes",
	})
	f2 := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	f4 := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	for _, c := range s.Cells {
		row := []string{
			strconv.Itoa(c.GOMAXPROCS), c.Topology, strconv.FormatBool(c.Ceiling), strconv.Itoa(c.Reps), strconv.Itoa(c.Failed),
			"", "", "", "", "",
			"", "", "", strconv.Itoa(c.Latency.Runs), i(c.Requests),
			i(c.Errors.Connect), i(c.Errors.Read), i(c.Errors.Write), i(c.Errors.Timeout), i(c.Errors.Status),
			"", "", strings.Join(c.Notes, ";"),
		}
		if c.Reps > 0 {
			row[5], row[6], row[7], row[8] = f2(c.ReqPerSec.Median), f2(c.ReqPerSec.Min), f2(c.ReqPerSec.Max), f4(c.Spread)
			if c.RatioToStandalone != nil {
				row[9] = f4(*c.RatioToStandalone)
			}
		}
		if c.Latency.Runs > 0 {
			row[10], row[11], row[12] = ms(c.Latency.P50), ms(c.Latency.P99), ms(c.Latency.Max)
		}
		for _, r := range s.Reference {
			if r.GOMAXPROCS == c.GOMAXPROCS && r.Topology == c.Topology {
				row[20], row[21] = f2(r.RefReqPerSec), f4(r.RefRatio)
			}
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
		load := fmt.Sprintf("-t%d -c%s -d%s", pl.Threads, pl.ConnectionsList(), pl.Duration)
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

package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/results"
)

// WriteCSV renders summary.csv: one row per cell, the 2013 figures beside
// the cells the reference has. Unknown values are empty.
func (s summary) WriteCSV(w io.Writer) error {
	cols := csvColumns()
	cw := csv.NewWriter(w)
	header := groupColumns()
	for _, col := range cols {
		header = append(header, col.name)
	}
	cw.Write(header)
	for _, c := range s.Cells {
		ref := s.RefCell(c.Key)
		row := groupValues(c.Group)
		for _, col := range cols {
			row = append(row, col.value(c, ref))
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// csvColumn is a column of summary.csv: its name and its value for a
// cell and the cell's 2013 reference, if any.
type csvColumn struct {
	name  string
	value func(c analysis.Cell, ref *analysis.RefCell) string
}

// csvColumns are summary.csv's columns after the group's, in order: the
// figures, the CPU columns, then the counts and the reference.
func csvColumns() []csvColumn {
	cols := append(csvFigureColumns(), csvCPUColumns()...)
	return append(cols, csvCountColumns()...)
}

// The figures' formats in summary.csv.
func csvF2(v float64) string       { return strconv.FormatFloat(v, 'f', 2, 64) }
func csvF4(v float64) string       { return strconv.FormatFloat(v, 'f', 4, 64) }
func csvMs(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }
func csvInt(v int64) string        { return strconv.FormatInt(v, 10) }

// csvWhen leaves a figure empty unless ok: a cell without successful
// runs has no rate, one without samples no latency.
func csvWhen(ok bool, v string) string {
	if !ok {
		return ""
	}
	return v
}

// csvFigureColumns are the cell's rates, ratios and rank.
func csvFigureColumns() []csvColumn {
	return []csvColumn{
		{"topology", func(c analysis.Cell, _ *analysis.RefCell) string { return c.Topology }},
		{"ceiling", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.FormatBool(c.Ceiling) }},
		{"reps", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.Reps) }},
		{"failed", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.Failed) }},
		{"reqps_median", func(c analysis.Cell, _ *analysis.RefCell) string {
			return csvWhen(c.Reps > 0, csvF2(c.ReqPerSec.Median))
		}},
		{"reqps_min", func(c analysis.Cell, _ *analysis.RefCell) string { return csvWhen(c.Reps > 0, csvF2(c.ReqPerSec.Min)) }},
		{"reqps_max", func(c analysis.Cell, _ *analysis.RefCell) string { return csvWhen(c.Reps > 0, csvF2(c.ReqPerSec.Max)) }},
		{"reqps_ci_lo", func(c analysis.Cell, _ *analysis.RefCell) string { return fptr(csvF2, c.ReqPerSec.CILo) }},
		{"reqps_ci_hi", func(c analysis.Cell, _ *analysis.RefCell) string { return fptr(csvF2, c.ReqPerSec.CIHi) }},
		{"spread", func(c analysis.Cell, _ *analysis.RefCell) string { return csvWhen(c.Reps > 0, csvF4(c.Spread)) }},
		{"ratio_to_standalone", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.RatioToStandalone, csvF4, center) }},
		{"ratio_ci_lo", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.RatioToStandalone, csvF4, lo) }},
		{"ratio_ci_hi", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.RatioToStandalone, csvF4, hi) }},
		{"ratio_differs", func(c analysis.Cell, _ *analysis.RefCell) string {
			if c.RatioToStandalone == nil {
				return ""
			}
			return strconv.FormatBool(c.RatioToStandalone.Differs)
		}},
		{"cost_ratio_to_standalone", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.CostRatio, csvF4, center) }},
		{"cost_ratio_ci_lo", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.CostRatio, csvF4, lo) }},
		{"cost_ratio_ci_hi", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.CostRatio, csvF4, hi) }},
		{"rank", func(c analysis.Cell, _ *analysis.RefCell) string { return csvWhen(c.Rank > 0, strconv.Itoa(c.Rank)) }},
		{"next", func(c analysis.Cell, _ *analysis.RefCell) string { return c.Next }},
		{"vs_next", func(c analysis.Cell, _ *analysis.RefCell) string { return ratioCol(c.VsNext, csvF4, center) }},
		{"vs_next_settled", func(c analysis.Cell, _ *analysis.RefCell) string {
			return csvWhen(c.Rank > 1, strconv.FormatBool(c.Settled()))
		}},
	}
}

// csvCountColumns are the cell's run counts, latency, errors, 2013's
// figures and notes.
func csvCountColumns() []csvColumn {
	return []csvColumn{
		{"cpu_runs", func(c analysis.Cell, _ *analysis.RefCell) string {
			if c.CPU == nil {
				return "0"
			}
			return strconv.Itoa(c.CPU.Load.N)
		}},
		{"noisy_runs", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.NoisyRuns) }},
		{"unsettled_runs", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.UnsettledRuns) }},
		{"retried_runs", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.RetriedRuns) }},
		{"p50_ms", func(c analysis.Cell, _ *analysis.RefCell) string {
			return csvWhen(c.Latency.Runs > 0, csvMs(c.Latency.P50))
		}},
		{"p99_ms", func(c analysis.Cell, _ *analysis.RefCell) string {
			return csvWhen(c.Latency.Runs > 0, csvMs(c.Latency.P99))
		}},
		{"max_ms", func(c analysis.Cell, _ *analysis.RefCell) string {
			return csvWhen(c.Latency.Runs > 0, csvMs(c.Latency.Max))
		}},
		{"latency_runs", func(c analysis.Cell, _ *analysis.RefCell) string { return strconv.Itoa(c.Latency.Runs) }},
		{"requests", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Requests) }},
		{"err_connect", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Errors.Connect) }},
		{"err_read", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Errors.Read) }},
		{"err_write", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Errors.Write) }},
		{"err_timeout", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Errors.Timeout) }},
		{"non2xx", func(c analysis.Cell, _ *analysis.RefCell) string { return csvInt(c.Errors.Status) }},
		{"ref2013_reqps", func(_ analysis.Cell, r *analysis.RefCell) string {
			if r == nil {
				return ""
			}
			return csvF2(r.RefReqPerSec)
		}},
		{"ref2013_ratio_to_standalone", func(_ analysis.Cell, r *analysis.RefCell) string {
			if r == nil {
				return ""
			}
			return csvF4(r.RefRatio)
		}},
		{"notes", func(c analysis.Cell, _ *analysis.RefCell) string { return strings.Join(c.Notes, ";") }},
	}
}

// csvCPUColumns are the CPU columns, per process group (and the
// servers' side, nginx + server run by run): median and interval bounds.
func csvCPUColumns() []csvColumn {
	var cpu []csvColumn
	for _, g := range []struct {
		name string
		of   func(*analysis.CPUPerRequest) *analysis.Interval
	}{
		{"load", func(p *analysis.CPUPerRequest) *analysis.Interval { return &p.Load }},
		{"nginx", func(p *analysis.CPUPerRequest) *analysis.Interval { return p.Nginx }},
		{"server", func(p *analysis.CPUPerRequest) *analysis.Interval { return p.Server }},
		{"servers", func(p *analysis.CPUPerRequest) *analysis.Interval { return p.Servers }},
	} {
		for _, part := range []struct {
			suffix string
			of     func(analysis.Interval) *float64
		}{{"", center}, {"_ci_lo", lo}, {"_ci_hi", hi}} {
			cpu = append(cpu, csvColumn{"cpu_" + g.name + "_us" + part.suffix, func(c analysis.Cell, _ *analysis.RefCell) string {
				return cpuCol(c.CPU, g.of, part.of)
			}})
		}
	}
	return cpu
}

// The parts of an interval a CSV column holds; an unknown bound is empty.
func center(iv analysis.Interval) *float64 { return &iv.Center }
func lo(iv analysis.Interval) *float64     { return iv.Lo }
func hi(iv analysis.Interval) *float64     { return iv.Hi }

func fptr(f func(float64) string, v *float64) string {
	if v == nil {
		return ""
	}
	return f(*v)
}

func ratioCol(r *analysis.Ratio, f func(float64) string, part func(analysis.Interval) *float64) string {
	if r == nil {
		return ""
	}
	return fptr(f, part(r.Interval))
}

func cpuCol(cpu *analysis.CPUPerRequest, group func(*analysis.CPUPerRequest) *analysis.Interval, part func(analysis.Interval) *float64) string {
	if cpu == nil || group(cpu) == nil {
		return ""
	}
	return fptr(func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }, part(*group(cpu)))
}

// WriteJSON renders summary.json: the whole analysis.Summary.
func (s summary) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(s, "", "\t")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteBench renders bench.txt with benchfmt.Writer: the unit metadata,
// the sweep's configuration (machine, versions, load, pinning), then one
// result per successful run,
//
//	BenchmarkTopobench/topology=nginx-http/gomaxprocs=8 <requests> <ns> ns/op <r> req/s <s> p50-sec <s> p99-sec <s> max-sec <n> socket-errors <n> timeouts <n> non2xx
//
// where ns/op is 1e9 / req/s and the name's key=value parts are the
// cell's dimensions (see benchName). Failed runs appear as "#" comment
// lines, which benchmark readers skip.
func WriteBench(w io.Writer, env results.Env, runs []results.Run) error {
	if _, err := fmt.Fprintf(w, "# topobench sweep; compare two with: benchstat OLD/%s NEW/%s\n", BenchFile, BenchFile); err != nil {
		return err
	}
	bw := benchfmt.NewWriter(w)
	for _, u := range benchUnits() {
		if err := bw.Write(u); err != nil {
			return err
		}
	}
	config := benchConfig(env)
	for _, r := range runs {
		name := benchName(analysis.KeyOf(env.Plan, r))
		if r.Failed() {
			msg := r.Error
			if msg == "" {
				msg = "no load generator result"
			}
			first, _, _ := strings.Cut(msg, "\n")
			if _, err := fmt.Fprintf(w, "# Benchmark%s rep %d failed: %s\n", name, r.Rep, first); err != nil {
				return err
			}
			continue
		}
		f := r.Figures
		res := &benchfmt.Result{Config: config, Name: name, Iters: int(f.Requests), Values: benchValues(*f, r.CPU)}
		if err := bw.Write(res); err != nil {
			return err
		}
	}
	return nil
}

// benchUnits says which way is better for each unit of bench.txt other
// than ns/op, so benchstat reports improvements the right way round.
func benchUnits() []*benchfmt.UnitMetadata {
	better := func(unit, way string) *benchfmt.UnitMetadata {
		return &benchfmt.UnitMetadata{
			UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: unit, Key: "better"},
			OrigUnit:        unit, Value: way,
		}
	}
	us := []*benchfmt.UnitMetadata{better("req/s", "higher")}
	for _, u := range []string{"p50-sec", "p99-sec", "max-sec", "socket-errors", "timeouts", "non2xx", "load-us/req", "load-user-us/req", "servers-us/req"} {
		us = append(us, better(u, "lower"))
	}
	return us
}

// benchConfig is the file configuration of bench.txt: what a reader needs
// to know before comparing two sweeps. Empty values are left out.
func benchConfig(env results.Env) []benchfmt.Config {
	var cfg []benchfmt.Config
	add := func(key, val string) {
		if val = strings.Join(strings.Fields(val), " "); val != "" {
			cfg = append(cfg, benchfmt.Config{Key: key, Value: []byte(val), File: true})
		}
	}
	add("goos", "linux")
	add("pkg", "github.com/topobench/topobench")
	add("cpu", env.CPUModel)
	if env.CPUs > 0 {
		add("cpus", strconv.Itoa(env.CPUs))
	}
	add("kernel", env.Kernel)
	add("go", env.GoVersion)
	add("nginx", env.NginxVersion)
	add("wrk", env.WrkVersion)
	add("load", loadArgs(env.Plan))
	add("pin-load", env.Plan.PinLoad)
	add("pin-server", env.Plan.PinServer)
	return cfg
}

// benchValues are one run's measurements. Latencies are left out when the
// run has no samples (every request timed out), rather than written as 0.
// With the run's CPU record come the CPU µs per request answered of the
// load generator (whole process, and its user time) and of the servers
// (nginx and the server together), and with the engine's event loops
// their ready connections per wake-up: benchstat -col /load sets the
// generators side by side with intervals.
func benchValues(res results.Figures, cpu *results.CPU) []benchfmt.Value {
	var vs []benchfmt.Value
	if res.ReqPerSec > 0 {
		vs = append(vs, benchfmt.Value{Value: 1 / res.ReqPerSec, Unit: "sec/op",
			OrigValue: math.Round(1e9 / res.ReqPerSec), OrigUnit: "ns/op"})
	}
	vs = append(vs, benchfmt.Value{Value: res.ReqPerSec, Unit: "req/s"})
	sec := func(d time.Duration) float64 { return float64(d) / float64(time.Second) }
	if res.Latency {
		vs = append(vs, benchfmt.Value{Value: sec(res.P50), Unit: "p50-sec"})
		vs = append(vs, benchfmt.Value{Value: sec(res.P99), Unit: "p99-sec"})
		vs = append(vs, benchfmt.Value{Value: sec(res.Max), Unit: "max-sec"})
	}
	e := res.Errors
	vs = append(vs,
		benchfmt.Value{Value: float64(e.Connect + e.Read + e.Write), Unit: "socket-errors"},
		benchfmt.Value{Value: float64(e.Timeout), Unit: "timeouts"},
		benchfmt.Value{Value: float64(e.Status), Unit: "non2xx"})
	if cpu != nil && res.Requests > 0 {
		var servers results.Usage
		for _, u := range []*results.Usage{cpu.Nginx, cpu.Server} {
			if u != nil {
				servers.User += u.User
				servers.System += u.System
			}
		}
		vs = append(vs,
			benchfmt.Value{Value: results.PerRequest(cpu.Load, res.Requests), Unit: "load-us/req"},
			benchfmt.Value{Value: results.PerRequest(results.Usage{User: cpu.Load.User}, res.Requests), Unit: "load-user-us/req"},
			benchfmt.Value{Value: results.PerRequest(servers, res.Requests), Unit: "servers-us/req"})
	}
	if res.ReadyPerWake > 0 {
		vs = append(vs, benchfmt.Value{Value: res.ReadyPerWake, Unit: "ready/wake"})
	}
	return vs
}

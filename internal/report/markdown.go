package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"
)

// WriteMarkdown renders summary.md.
func (s Summary) WriteMarkdown(out io.Writer) error {
	w := bufio.NewWriter(out)
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	env := s.Env
	plan := env.Plan

	p("# topobench results\n\n")
	p("What it costs to put nginx in front of a Go service, and which connection is fastest, measured on this machine. ")
	p("Every rate is the median over repetitions with the range beside it; errors and timeouts are counted next to every rate.\n\n")
	if len(env.Command) > 0 {
		p("- **Command:** `%s`\n", strings.Join(env.Command, " "))
	}
	if !env.Start.IsZero() {
		if env.End.IsZero() {
			p("- **Ran:** from %s (did not finish)\n", env.Start.UTC().Format("2006-01-02 15:04:05 MST"))
		} else {
			p("- **Ran:** %s to %s (%s)\n", env.Start.UTC().Format("2006-01-02 15:04:05 MST"),
				env.End.UTC().Format("15:04:05 MST"), env.End.Sub(env.Start).Round(time.Second))
		}
	}
	if plan.Threads > 0 {
		load := fmt.Sprintf("wrk -t%d -c%s -d%s", plan.Threads, plan.ConnectionsList(), plan.Duration)
		if plan.Timeout > 0 {
			load += " --timeout " + plan.Timeout.String()
		}
		p("- **Load:** `%s` per run, %d repetition(s) per cell, interleaved across topologies", load, plan.Reps)
		if plan.Warmup > 0 {
			p("; %s warmup before each run (not recorded)", plan.Warmup)
		}
		p("\n")
	}
	p("\n## Machine\n\n| | |\n|---|---|\n")
	cpus := ""
	if env.CPUs > 0 {
		cpus = fmt.Sprintf(" (%d logical CPUs)", env.CPUs)
	}
	p("| CPU | %s%s |\n", md(orUnknown(env.CPUModel)), cpus)
	p("| kernel | %s |\n", md(orUnknown(env.Kernel)))
	p("| Go | %s |\n", md(orUnknown(env.GoVersion)))
	p("| nginx | %s |\n", md(orUnknown(env.NginxVersion)))
	p("| wrk | %s |\n", md(orUnknown(env.WrkVersion)))
	if len(env.Limits) > 0 {
		p("| limits | %s |\n", md(joinMap(env.Limits, " ")))
	}
	p("| pinning | %s |\n", md(pinning(plan.PinLoad, plan.PinServer)))
	if len(env.Sysctls) > 0 {
		p("\nKernel settings in effect:\n\n| sysctl | value |\n|---|---|\n")
		for _, k := range sortedKeys(env.Sysctls) {
			p("| %s | %s |\n", md(k), md(env.Sysctls[k]))
		}
	}

	p("\n## In short\n\n")
	if len(s.Cells) == 0 {
		p("No runs recorded.\n")
	}
	for _, g := range s.GOMAXPROCS() {
		p("- %s\n", s.inShort(g))
	}
	if len(s.Warnings) > 0 {
		p("\nRead the warnings below before drawing conclusions.\n")
	}

	p("\n## Results\n\n")
	if len(s.Cells) == 0 {
		p("No runs recorded.\n")
	}
	for _, g := range s.GOMAXPROCS() {
		p("### GOMAXPROCS=%d", g)
		if env.CPUs > 0 && g > env.CPUs {
			p(" (more than the %d CPUs)", env.CPUs)
		}
		p("\n\n")
		p("| topology | req/s | min–max | spread | n | vs standalone | p50 | p99 | max | errors c/r/w/t | non-2xx | notes |\n")
		p("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n")
		for _, c := range s.Cells {
			if c.GOMAXPROCS != g {
				continue
			}
			name := c.Topology
			if c.Ceiling {
				name += " (ceiling)"
			}
			n := fmt.Sprint(c.Reps)
			if c.Failed > 0 {
				n = fmt.Sprintf("%d (+%d failed)", c.Reps, c.Failed)
			}
			if c.Reps == 0 {
				p("| %s | – | – | – | %s | – | – | – | – | – | – | %s |\n", name, n, strings.Join(c.Notes, ", "))
				continue
			}
			lat := func(d time.Duration) string {
				if c.Latency.Runs == 0 {
					return "–"
				}
				return fmtDur(d)
			}
			p("| %s | %s | %s–%s | %s | %s | %s | %s | %s | %s | %d/%d/%d/%d | %d | %s |\n",
				name, fmtCount(c.ReqPerSec.Median), fmtCount(c.ReqPerSec.Min), fmtCount(c.ReqPerSec.Max),
				fmtPct(c.Spread), n, fmtRatio(c.RatioToStandalone),
				lat(c.Latency.P50), lat(c.Latency.P99), lat(c.Latency.Max),
				c.Errors.Connect, c.Errors.Read, c.Errors.Write, c.Errors.Timeout, c.Errors.Status,
				strings.Join(c.Notes, ", "))
		}
		p("\n")
	}
	if len(s.Cells) > 0 {
		p("How to read the table: **req/s** is the median over the successful runs of the cell (n), **min–max** their range ")
		p("and **spread** that range over the median. **vs standalone** divides the median by standalone's at the same GOMAXPROCS. ")
		p("**p50**, **p99** and **max** are medians over runs of each run's latency percentile. wrk leaves timed-out requests out ")
		p("of its latency figures, so a cell with timeouts looks faster than it was: read the **errors** columns ")
		p("(connect/read/write/timeout, summed over runs) and **non-2xx** first. ")
		p("Rows marked *(ceiling)* have no Go behind them: nginx answers by itself, bounding what wrk and loopback can carry.\n\n")
	}

	source, _, _ := Reference2013()
	p("## Compared with the 2013 reference\n\n")
	for _, l := range source {
		p("> %s\n", md(l))
	}
	p("\n| GOMAXPROCS | topology | 2013 req/s | 2013 vs standalone | 2013 errors | this sweep req/s | this sweep vs standalone |\n")
	p("|--:|---|--:|--:|---|--:|--:|\n")
	for _, r := range s.Reference {
		now, ratio := "not measured", "–"
		if r.ReqPerSec != nil {
			now = fmtCount(*r.ReqPerSec)
			ratio = fmtRatio(r.Ratio)
		}
		p("| %d | %s | %s | %.2f | %s | %s | %s |\n", r.GOMAXPROCS, r.Topology, fmtCount(r.RefReqPerSec), r.RefRatio, errorText(r.RefErrors), now, ratio)
	}
	p("\nThe 2013 run used another machine (4 cores, 8 threads), wrk 3.0.4, Go 1.2 and nginx 1.4.4, so compare the ratios, ")
	p("not the rates. Its FastCGI figures were likely measured without working connection reuse (Go's net/http/fcgi ")
	p("dropped nginx's kept-alive connections until 2014).\n\n")

	p("## Warnings\n\n")
	if len(s.Warnings) == 0 {
		p("None.\n")
	}
	for _, wn := range s.Warnings {
		p("- **%s**: %s\n", wn.Kind, md(wn.Msg))
	}

	p("\n## Charts\n\n")
	p("![Requests per second by topology and GOMAXPROCS: median, with min–max bars](%s.svg)\n\n", ReqPSChart)
	p("![p99 latency by topology and GOMAXPROCS: median over runs](%s.svg)\n\n", P99Chart)
	p("PNG versions: [%s.png](%s.png), [%s.png](%s.png).\n", ReqPSChart, ReqPSChart, P99Chart, P99Chart)

	p("\n## Failed runs\n\n")
	if len(s.Failures) == 0 {
		p("None: every recorded run produced a wrk report.\n")
	}
	for _, f := range s.Failures {
		p("### %s\n\nRecord `runs/%s.json`, wrk output (if any) `runs/%s.txt`.\n\n```\n%s\n```\n", f.Run, f.Run, f.Run, strings.TrimSpace(strings.ReplaceAll(f.Error, "```", "'''")))
	}

	p("\n## Comparing two sweeps\n\n")
	p("`%s` holds one line per run in Go benchmark format (requests, ns/op, req/s, p50/p99/max latency, errors), ", BenchFile)
	p("so benchstat can compare two sweeps with proper statistics:\n\n")
	p("```\ngo install golang.org/x/perf/cmd/benchstat@latest\nbenchstat results/OLD/%s results/NEW/%s\n```\n\n", BenchFile, BenchFile)
	p("Per-cell figures for tools are in `%s` and `%s`; every run's record and raw wrk output are under `runs/`.\n", CSVFile, JSONFile)
	return w.Flush()
}

func pinning(load, server string) string {
	if load == "" && server == "" {
		return "none: wrk, nginx and Go share every CPU"
	}
	or := func(s string) string {
		if s == "" {
			return "unpinned"
		}
		return "CPUs " + s
	}
	return fmt.Sprintf("wrk on %s; nginx and Go on %s", or(load), or(server))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// md makes s safe inside a markdown table cell.
func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinMap(m map[string]string, sep string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+" "+m[k])
	}
	return strings.Join(parts, ","+sep)
}

// fmtCount prints a rate or count rounded to an integer with thousands
// separators: 42,745.
func fmtCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var b strings.Builder
	if v < 0 && s != "0" {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtRatio(r *float64) string {
	if r == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f", *r)
}

func fmtPct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

// fmtDur prints a latency with three significant digits in µs, ms or s.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

// inShort sums up one GOMAXPROCS value in a sentence or three: standalone,
// the nginx topologies fastest first with their ratio, and which of them
// the repetitions cannot tell apart.
func (s Summary) inShort(g int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**GOMAXPROCS=%d:** ", g)
	st, ok := s.Cell(g, Standalone)
	if ok && st.Reps > 0 {
		fmt.Fprintf(&b, "standalone Go serves %s req/s", fmtCount(st.ReqPerSec.Median))
		if e := st.Errors; e.Total() > 0 {
			fmt.Fprintf(&b, " (with %s)", errorText(e))
		}
		b.WriteString(". ")
	} else {
		b.WriteString("standalone was not measured. ")
	}
	var via []Cell
	for _, c := range s.Cells {
		if c.GOMAXPROCS == g && !c.Ceiling && c.Topology != Standalone && c.Reps > 0 {
			via = append(via, c)
		}
	}
	sort.SliceStable(via, func(i, j int) bool { return via[i].ReqPerSec.Median > via[j].ReqPerSec.Median })
	if len(via) > 0 {
		b.WriteString("Behind nginx, fastest first: ")
		for i, c := range via {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %s", c.Topology, fmtCount(c.ReqPerSec.Median))
			var notes []string
			if c.RatioToStandalone != nil {
				notes = append(notes, fmt.Sprintf("%.2f of standalone", *c.RatioToStandalone))
			}
			if c.Errors.Total() > 0 {
				notes = append(notes, "with errors")
			}
			if len(notes) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(notes, ", "))
			}
		}
		b.WriteString(".")
		var overlap []string
		for i := 1; i < len(via); i++ {
			if via[i].ReqPerSec.Max >= via[i-1].ReqPerSec.Min {
				overlap = append(overlap, via[i-1].Topology+" / "+via[i].Topology)
			}
		}
		if len(overlap) > 0 {
			fmt.Fprintf(&b, " The min–max ranges overlap for %s, so these runs do not settle that order.", strings.Join(overlap, ", "))
		}
	}
	if ceil, ok := s.Cell(g, Ceiling); ok && ceil.Reps > 0 {
		fmt.Fprintf(&b, " The %s ceiling is %s req/s.", Ceiling, fmtCount(ceil.ReqPerSec.Median))
	}
	return b.String()
}

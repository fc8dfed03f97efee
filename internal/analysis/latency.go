package analysis

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/hdr"
	"github.com/topobench/topobench/internal/results"
)

// The 2016 JVM study's results and the 2009 hello-world servers'
// comparison, with their source comment lines.
var (
	//go:embed reference/seed-2016-jvm-results.csv
	seed2016 string
	//go:embed reference/seed-2009-hello-servers.csv
	seed2009 string
)

// The 2016 study's target-rate scenarios, by the names the 2016 preset
// gives its schedules (plan.Scenario).
const (
	Slow2016     = "slow-requests"
	HighConc2016 = "realistic-high-concurrency"
	Overhead2016 = "realistic-overhead"
	Probe2016    = "concurrency-level"
)

// LatencyCell is a cell of the built-in engine over its repetitions: the
// figures wrk cannot give (target rate, late and dropped requests, the
// percentiles to p99.99, the probe's count), and where its histograms
// are.
type LatencyCell struct {
	Key
	Runs       int     `json:"runs"`
	Requests   int64   `json:"requests"`
	TargetRate float64 `json:"target_rate,omitempty"`
	// ReqPerSec is the median achieved rate.
	ReqPerSec float64 `json:"req_per_sec"`
	// Mean to P9999 are medians over runs; Max is the largest of all.
	Mean  time.Duration `json:"mean_ns"`
	P50   time.Duration `json:"p50_ns"`
	P90   time.Duration `json:"p90_ns"`
	P99   time.Duration `json:"p99_ns"`
	P999  time.Duration `json:"p99.9_ns"`
	P9999 time.Duration `json:"p99.99_ns"`
	Max   time.Duration `json:"max_ns"`
	// Errors, Late and Dropped are summed over runs.
	Errors        results.Errors `json:"errors"`
	Late, Dropped int64
	// Concurrent is the probe's count served concurrently (the smallest
	// over runs), of Sent requests.
	Concurrent int64 `json:"concurrent,omitempty"`
	Sent       int64 `json:"sent,omitempty"`
	// Histograms are the runs' encoded histograms, relative to the
	// results directory.
	Histograms []string `json:"histograms,omitempty"`
}

// latencyCells summarizes the runs of the built-in engine, in table order.
func latencyCells(p results.Plan, runs []results.Run, order map[string]int) []LatencyCell {
	keys, byKey := groupRuns(p, runs, order, func(r results.Run) bool { return !r.Failed() && r.Figures.Histogram })
	var out []LatencyCell
	for _, k := range keys {
		c := LatencyCell{Key: k}
		var rates []float64
		var lat [6][]time.Duration
		for i, r := range byKey[k] {
			f := r.Figures
			c.Runs++
			c.Requests += f.Requests
			c.TargetRate = f.TargetRate
			rates = append(rates, f.ReqPerSec)
			c.Errors = c.Errors.Add(f.Errors)
			c.Late += f.Late
			c.Dropped += f.Dropped
			if r.Probe && (i == 0 || f.Concurrent < c.Concurrent) {
				c.Concurrent, c.Sent = f.Concurrent, f.Sent
			}
			if f.Latency {
				for j, d := range []time.Duration{f.Mean, f.P50, f.P90, f.P99, f.P999, f.P9999} {
					lat[j] = append(lat[j], d)
				}
				c.Max = max(c.Max, f.Max)
			}
			c.Histograms = append(c.Histograms, filepath.Join(results.RunsDir, r.Name()+hdr.EncodedExt))
		}
		c.ReqPerSec = median(rates)
		if len(lat[0]) > 0 {
			c.Mean, c.P50, c.P90 = medianDur(lat[0]), medianDur(lat[1]), medianDur(lat[2])
			c.P99, c.P999, c.P9999 = medianDur(lat[3]), medianDur(lat[4]), medianDur(lat[5])
		}
		out = append(out, c)
	}
	return out
}

// seedCSV splits an embedded seed CSV into its comment lines (the run's
// setup and machine) and its data records, header dropped, checking the
// header's width and first column.
func seedCSV(name, data string, fields int, first string) (source []string, recs [][]string, err error) {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(data), "\n") {
		if c, ok := strings.CutPrefix(l, "#"); ok {
			source = append(source, strings.TrimSpace(c))
			continue
		}
		lines = append(lines, l)
	}
	all, err := csv.NewReader(strings.NewReader(strings.Join(lines, "\n"))).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s CSV: %w", name, err)
	}
	if len(all) < 2 || len(all[0]) != fields || all[0][0] != first {
		return nil, nil, fmt.Errorf("%s CSV: unexpected header %v", name, all[:min(1, len(all))])
	}
	return source, all[1:], nil
}

// referenceCSV is seedCSV for the files the report embeds and its tests
// cover: a malformed one is a programming error.
func referenceCSV(data string, fields int, first string) (source []string, recs [][]string) {
	source, recs, err := seedCSV("embedded reference", data, fields, first)
	if err != nil {
		panic(err)
	}
	return source, recs
}

// Seed2016 is the 2016 JVM study's results table: its source lines and
// records (server, then the scenarios' figures), header dropped.
func Seed2016() (source []string, recs [][]string) { return referenceCSV(seed2016, 13, "server") }

// Seed2009 is the 2009 hello-world servers' table: its source lines and
// records (server, concurrency, req/s, p99), header dropped.
func Seed2009() (source []string, recs [][]string) { return referenceCSV(seed2009, 4, "server") }

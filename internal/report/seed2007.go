package report

import (
	_ "embed"
	"time"

	"github.com/topobench/topobench/internal/analysis"
	"github.com/topobench/topobench/internal/numfmt"
)

// seed2007Table sets this sweep's standalone cells at 1000 connections and
// GOMAXPROCS 1 beside the 2007 figures, a row per 2007 server and one for
// Go; nil unless the sweep ran the 2007 scenario.
func (s summary) seed2007Table() (source []string, rows [][]string) {
	if s.Env.Plan.Scenario != "2007" {
		return nil, nil
	}
	source, seeds, err := analysis.Seed2007()
	if err != nil {
		panic(err) // embedded and covered by tests
	}
	find := func(target string) (analysis.Cell, bool) {
		for _, c := range s.Cells {
			if c.Target == target && c.Topology == analysis.Standalone && c.Connections == 1000 && c.GOMAXPROCS == 1 && c.Reps > 0 {
				return c, true
			}
		}
		return analysis.Cell{}, false
	}
	row := func(server, target, refRate, refMean string) []string {
		r := []string{md(server), md(target), refRate, refMean, "–", "–", "–", "–"}
		if c, ok := find(target); ok {
			r[4] = numfmt.Count(c.ReqPerSec.Median)
			r[5] = numfmt.Dur(time.Duration(float64(time.Second) * 1000 / c.ReqPerSec.Median))
			r[6] = numfmt.Dur(c.Latency.P99)
			r[7] = "none"
			if c.Errors.Total() > 0 {
				r[7] = md(c.Errors.String())
			}
		}
		return r
	}
	for _, sd := range seeds {
		rows = append(rows, row(sd.Server, sd.Target, numfmt.Count(sd.ReqPerSec), numfmt.Dur(sd.MeanPerRequest)))
	}
	rows = append(rows, row("(not in 2007)", "go", "–", "–"))
	return source, rows
}

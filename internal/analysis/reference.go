package analysis

import (
	_ "embed"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// seed2013 is the published result of the 2013 "nginx + Go" benchmark,
// with its source comment lines.
//
//go:embed reference/seed-2013-nginx-go.csv
var seed2013 string

// RefRow is one row of the 2013 reference.
type RefRow struct {
	GOMAXPROCS   int
	Topology     string
	ReqPerSec    float64
	Requests     int64
	LatencyAvg   time.Duration
	LatencyStdev time.Duration
	LatencyMax   time.Duration
	Errors       results.Errors
}

// Reference2013 returns the 2013 reference rows and the source lines
// (the CSV's comments: run setup and machine).
func Reference2013() (source []string, rows []RefRow, err error) {
	source, recs, err := seedCSV("reference", seed2013, 11, "gomaxprocs")
	if err != nil {
		return nil, nil, err
	}
	for i, r := range recs {
		var row RefRow
		var perr error
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && perr == nil {
				perr = err
			}
			return v
		}
		ms := func(s string) time.Duration { return time.Duration(math.Round(num(s) * float64(time.Millisecond))) }
		row.GOMAXPROCS = int(num(r[0]))
		row.Topology = r[1]
		row.ReqPerSec = num(r[2])
		row.Requests = int64(num(r[3]))
		row.LatencyAvg, row.LatencyStdev, row.LatencyMax = ms(r[4]), ms(r[5]), ms(r[6])
		row.Errors = results.Errors{Connect: int64(num(r[7])), Read: int64(num(r[8])), Write: int64(num(r[9])), Timeout: int64(num(r[10]))}
		if perr != nil {
			return nil, nil, fmt.Errorf("reference CSV row %d: %w", i+2, perr)
		}
		rows = append(rows, row)
	}
	return source, rows, nil
}

// RefCell sets a 2013 reference row beside this sweep's cell.
type RefCell struct {
	// Key is the cell of this sweep the 2013 row corresponds to.
	Key
	// RefReqPerSec, RefRatio (to the 2013 standalone at the same
	// GOMAXPROCS) and RefErrors are the 2013 figures.
	RefReqPerSec float64        `json:"ref_req_per_sec"`
	RefRatio     float64        `json:"ref_ratio_to_standalone"`
	RefErrors    results.Errors `json:"ref_errors"`
	// ReqPerSec and Ratio are this sweep's median and ratio; nil when the
	// cell was not measured. RatioLo and RatioHi are the ratio's interval,
	// nil when unknown.
	ReqPerSec *float64 `json:"req_per_sec"`
	Ratio     *float64 `json:"ratio_to_standalone"`
	RatioLo   *float64 `json:"ratio_lo,omitempty"`
	RatioHi   *float64 `json:"ratio_hi,omitempty"`
}

// RefCell finds the 2013 row of a cell; nil when 2013 had none.
func (s Summary) RefCell(k Key) *RefCell {
	for i, r := range s.Reference {
		if r.Key == k {
			return &s.Reference[i]
		}
	}
	return nil
}

func referenceCells(s Summary) []RefCell {
	_, rows, err := Reference2013()
	if err != nil {
		// The CSV is embedded and covered by tests.
		panic(err)
	}
	standalone := map[int]float64{}
	for _, r := range rows {
		if topology.IsBaseline(r.Topology) {
			standalone[r.GOMAXPROCS] = r.ReqPerSec
		}
	}
	var out []RefCell
	for _, r := range rows {
		rc := RefCell{Key: Key{refGroup(r), r.Topology}, RefReqPerSec: r.ReqPerSec, RefErrors: r.Errors}
		if st := standalone[r.GOMAXPROCS]; st > 0 {
			rc.RefRatio = r.ReqPerSec / st
		}
		// A pair design's pairs measure the row, whatever their load: the
		// cross-check's one run of 2013's is no ratio beside them.
		c, ok := s.pairedCell(r.GOMAXPROCS, r.Topology)
		if !ok {
			c, ok = s.Cell(rc.Key)
		}
		if ok && c.Reps > 0 {
			v := c.ReqPerSec.Median
			rc.ReqPerSec = &v
			if c.RatioToStandalone != nil {
				r := c.RatioToStandalone
				rc.Ratio, rc.RatioLo, rc.RatioHi = &r.Center, r.Lo, r.Hi
			} else if topology.IsBaseline(c.Topology) && s.paired(c) {
				rc.Ratio = new(1.0)
			}
		}
		out = append(out, rc)
	}
	return out
}

// pairedCell is a pair design's cell of cmd/hello at a GOMAXPROCS: its
// load and connections are the sweep's, not 2013's, and its pairs say
// what the 2013 row measured.
func (s Summary) pairedCell(gomaxprocs int, top string) (Cell, bool) {
	if s.Env.Plan.Paired == nil {
		return Cell{}, false
	}
	for _, g := range s.Groups() {
		if g.GOMAXPROCS != gomaxprocs || g.Target != results.TargetGo && g.Target != "" || openLoopGroup(g) {
			continue
		}
		if c, ok := s.Cell(Key{g, top}); ok && s.paired(c) {
			return c, true
		}
	}
	return Cell{}, false
}

// openLoopGroup reports whether a group's rates are set by its schedule.
func openLoopGroup(g Group) bool { return g.Schedule.Probe || g.Schedule.OpenLoop() }

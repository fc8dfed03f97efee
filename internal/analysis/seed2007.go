package analysis

import (
	_ "embed"
	"fmt"
	"strconv"
	"time"
)

// seed2007 is the published result of the 2007 thread-model test (ab
// -c1000, short connections), with its source comment line.
//
//go:embed reference/seed-2007-thread-models.csv
var seed2007 string

// Seed2007Row is one server of the 2007 test.
type Seed2007Row struct {
	// Server is the 2007 name; Target the topobench target that stands
	// for it.
	Server, Target string
	ReqPerSec      float64
	// MeanPerRequest is ab's "time per request" (mean, across all
	// concurrent requests: concurrency / rate).
	MeanPerRequest time.Duration
}

// seed2007Targets maps the 2007 servers to the targets of targets/.
var seed2007Targets = map[string]string{
	"java-thread-per-connection":    "java-threads",
	"java-fixed-pool-5-threads":     "java-pool",
	"erlang-process-per-connection": "erlang",
}

// Seed2007 returns the 2007 rows and the source lines (the CSV's comments).
func Seed2007() (source []string, rows []Seed2007Row, err error) {
	source, recs, err := seedCSV("2007 seed", seed2007, 3, "server")
	if err != nil {
		return nil, nil, err
	}
	for i, r := range recs {
		rate, err1 := strconv.ParseFloat(r[1], 64)
		ms, err2 := strconv.ParseFloat(r[2], 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("2007 seed CSV line %d: bad number in %v", i+len(source)+2, r)
		}
		target, ok := seed2007Targets[r[0]]
		if !ok {
			return nil, nil, fmt.Errorf("2007 seed CSV line %d: unknown server %q", i+len(source)+2, r[0])
		}
		rows = append(rows, Seed2007Row{Server: r[0], Target: target, ReqPerSec: rate,
			MeanPerRequest: time.Duration(ms * float64(time.Millisecond))})
	}
	return source, rows, nil
}

// Package sweep runs the comparison: every topology under wrk, for each
// GOMAXPROCS value, repeated, with cmd/hello restarted per GOMAXPROCS value,
// parity verified before anything is measured, and every finished cell on
// disk the moment it finishes so an interrupted sweep loses nothing.
package sweep

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Plan is what a sweep measures: the plan recorded in env.json, with the
// rules and the order of the sweep attached.
type Plan struct{ results.Plan }

// DefaultPlan is the 2013 reference run's load (wrk -t100 -c5000 -d30s,
// GOMAXPROCS 1 and 8) over every topology, three interleaved repetitions.
func DefaultPlan() Plan {
	return Plan{results.Plan{
		Topologies:  topology.Names(),
		GOMAXPROCS:  []int{1, 8},
		Reps:        3,
		Duration:    30 * time.Second,
		Warmup:      3 * time.Second,
		Threads:     100,
		Connections: 5000,
		Timeout:     2 * time.Second,
	}}
}

// Validate reports the first thing wrong with the plan, naming the flag.
func (p Plan) Validate() error {
	if _, err := topology.Parse(strings.Join(p.Topologies, ",")); err != nil {
		return fmt.Errorf("-topologies: %w", err)
	}
	if len(p.GOMAXPROCS) == 0 {
		return errors.New("-gomaxprocs: no values")
	}
	seen := map[int]bool{}
	for _, g := range p.GOMAXPROCS {
		if g < 1 {
			return fmt.Errorf("-gomaxprocs: %d is not a positive number", g)
		}
		if seen[g] {
			return fmt.Errorf("-gomaxprocs: %d listed twice", g)
		}
		seen[g] = true
	}
	switch {
	case p.Reps < 1:
		return fmt.Errorf("-reps: %d, want at least 1", p.Reps)
	case p.Duration < time.Second:
		return fmt.Errorf("-duration: %s, want at least 1s (wrk measures in whole seconds)", p.Duration)
	case p.Duration%time.Second != 0:
		return fmt.Errorf("-duration: %s, want whole seconds (wrk measures in whole seconds)", p.Duration)
	case p.Warmup < 0:
		return fmt.Errorf("-warmup: %s is negative", p.Warmup)
	case p.Warmup%time.Second != 0:
		return fmt.Errorf("-warmup: %s, want whole seconds", p.Warmup)
	case p.Threads < 1:
		return fmt.Errorf("-threads: %d, want at least 1", p.Threads)
	case p.Connections < p.Threads:
		return fmt.Errorf("-connections: %d is fewer than -threads %d (wrk needs one connection per thread at least)", p.Connections, p.Threads)
	case p.Connections%p.Threads != 0:
		return fmt.Errorf("-connections: %d is not a multiple of -threads %d (wrk gives each thread connections/threads and would open fewer)", p.Connections, p.Threads)
	case p.Timeout < time.Second || p.Timeout%time.Second != 0:
		return fmt.Errorf("-timeout: %s, want whole seconds, at least 1s (wrk reads whole seconds)", p.Timeout)
	}
	return nil
}

// Cell is one measurement: a topology at a GOMAXPROCS value, repetition Rep
// (1-based).
type Cell struct {
	GOMAXPROCS int
	Topology   string
	Rep        int
}

// Key names the cell's files: g8-nginx-fcgi-unix-r2.
func (c Cell) Key() string {
	return fmt.Sprintf("g%d-%s-r%d", c.GOMAXPROCS, c.Topology, c.Rep)
}

func (c Cell) String() string {
	return fmt.Sprintf("GOMAXPROCS=%d %s rep %d", c.GOMAXPROCS, c.Topology, c.Rep)
}

// Cells lists the plan in the order it runs. GOMAXPROCS is the outer loop
// because cmd/hello restarts for each value; within it repetitions are
// interleaved (A B C A B C) so slow drift — thermal, page cache, TIME_WAIT
// build-up — lands on every topology alike instead of on the last one.
func (p Plan) Cells() []Cell {
	var cells []Cell
	for _, g := range p.GOMAXPROCS {
		for r := 1; r <= p.Reps; r++ {
			for _, t := range p.Topologies {
				cells = append(cells, Cell{GOMAXPROCS: g, Topology: t, Rep: r})
			}
		}
	}
	return cells
}

// CellTime is the wall time one cell takes at least: warmup plus measurement.
func (p Plan) CellTime() time.Duration { return p.Warmup + p.Duration }

// ParseInts parses a comma-separated list of integers ("1,8").
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a whole number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no numbers in %q", s)
	}
	return out, nil
}

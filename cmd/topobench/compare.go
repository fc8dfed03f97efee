package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/sweep"
	"github.com/topobench/topobench/internal/topology"
)

// planFlags are the flags that define what is measured; -resume takes them
// from the interrupted sweep instead.
var planFlags = []string{"topologies", "gomaxprocs", "threads", "connections", "duration", "reps", "warmup", "timeout", "pin-load", "pin-server", "out"}

// runCompare translates flags into a sweep; internal/sweep does the rest.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	def := sweep.DefaultPlan()
	topos := fs.String("topologies", strings.Join(def.Topologies, ","), "comma-separated topologies to measure (known: "+strings.Join(topology.Names(), ", ")+")")
	gmp := fs.String("gomaxprocs", "1,8", "comma-separated GOMAXPROCS values; cmd/hello restarts for each")
	threads := fs.Int("threads", def.Threads, "wrk -t: load generator threads (at most the connections)")
	conns := fs.String("connections", "5000", "comma-separated wrk -c values: open connections (each a multiple of -threads)")
	dur := fs.Duration("duration", def.Duration, "wrk -d: measured time per cell, whole seconds")
	reps := fs.Int("reps", def.Reps, "repetitions of every cell, interleaved")
	warmup := fs.Duration("warmup", def.Warmup, "unrecorded load before each cell, whole seconds (0 disables)")
	timeout := fs.Duration("timeout", def.Timeout, "wrk --timeout: a slower response counts as a timeout error")
	pinLoad := fs.String("pin-load", "", "CPU list for wrk, e.g. 0 (default unpinned)")
	pinServer := fs.String("pin-server", "", "CPU list for cmd/hello and nginx, e.g. 1 (default unpinned)")
	out := fs.String("out", "", "results directory (default results/<timestamp>)")
	helloAgent := fs.String("hello-agent", "", "URL of a procd running cmd/hello elsewhere (containers); the harness restarts it there")
	nginxAgent := fs.String("nginx-agent", "", "URL of a procd running nginx elsewhere; needs -hello-agent")
	sockDir := fs.String("sockdir", "/tmp", "with -hello-agent: directory of cmd/hello's unix sockets")
	resume := fs.String("resume", "", "finish the interrupted sweep in this results directory")
	freePorts := fs.Bool("free-ports", false, "listen on loopback ports the kernel reports free instead of the reference ones (8080, 9001, nginx on 8081 and up)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench compare [flags]\n\nRuns every topology under wrk for each GOMAXPROCS value, repeated and\ninterleaved, after checking the machine and response parity; writes raw\nwrk output, one JSON record per run, env.json, summary.{md,csv,json},\ncharts and bench.txt into the results directory.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	o := sweep.Options{
		Plan:       def,
		Dir:        *out,
		FreePorts:  *freePorts,
		HelloAgent: *helloAgent,
		NginxAgent: *nginxAgent,
		SockDir:    *sockDir,
		Command:    os.Args,
		Progress:   stdout,
		Log:        stderr,
	}
	if *resume != "" {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if slices.Contains(planFlags, f.Name) {
				set = append(set, "-"+f.Name)
			}
		})
		if len(set) > 0 {
			return usageError("-resume takes the plan from %s; drop %s", filepath.Join(*resume, results.EnvFile), strings.Join(set, " "))
		}
		o.Dir, o.Resume = *resume, true
	} else {
		p := &o.Plan
		p.Topologies = sweep.ParseList(*topos)
		var err error
		if p.GOMAXPROCS, err = sweep.ParseInts(*gmp); err != nil {
			return usageError("-gomaxprocs: %v", err)
		}
		if p.Connections, err = sweep.ParseInts(*conns); err != nil {
			return usageError("-connections: %v", err)
		}
		p.Threads, p.Duration, p.Reps = *threads, *dur, *reps
		p.Warmup, p.Timeout, p.PinLoad, p.PinServer = *warmup, *timeout, *pinLoad, *pinServer
		if err := p.Validate(); err != nil {
			return usageError("%v", err)
		}
	}
	_, err := sweep.Run(ctx, o)
	if errors.Is(err, sweep.ErrPlan) {
		return usageError("%v", err)
	}
	return err
}

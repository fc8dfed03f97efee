package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/report"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/supervise"
	"github.com/topobench/topobench/internal/sweep"
	"github.com/topobench/topobench/internal/topology"
	"github.com/topobench/topobench/internal/wrk"
)

// planFlags are the flags that define what is measured; -resume takes them
// from the interrupted sweep instead.
var planFlags = []string{"topologies", "gomaxprocs", "threads", "connections", "duration", "reps", "warmup", "timeout", "pin-load", "pin-server"}

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("compare", stderr)
	def := sweep.DefaultPlan()
	topos := fs.String("topologies", strings.Join(def.Topologies, ","), "comma-separated topologies to measure (known: "+strings.Join(topology.Names(), ", ")+")")
	gmp := fs.String("gomaxprocs", "1,8", "comma-separated GOMAXPROCS values; cmd/hello restarts for each")
	threads := fs.Int("threads", def.Threads, "wrk -t: load generator threads")
	conns := fs.Int("connections", def.Connections, "wrk -c: open connections (a multiple of -threads)")
	dur := fs.Duration("duration", def.Duration, "wrk -d: measured time per cell, whole seconds")
	reps := fs.Int("reps", def.Reps, "repetitions of every cell, interleaved")
	warmup := fs.Duration("warmup", def.Warmup, "unrecorded load before each cell, whole seconds (0 disables)")
	timeout := fs.Duration("timeout", def.Timeout, "wrk --timeout: a slower response counts as a timeout error")
	pinLoad := fs.String("pin-load", "", "taskset CPU list for wrk, e.g. 0 (default unpinned)")
	pinServer := fs.String("pin-server", "", "taskset CPU list for cmd/hello and nginx, e.g. 1 (default unpinned)")
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

	var (
		plan sweep.Plan
		env  results.Env
		done = map[string]bool{}
		dir  string
	)
	if *resume != "" {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			for _, p := range planFlags {
				if f.Name == p {
					set = append(set, "-"+p)
				}
			}
			if f.Name == "out" {
				set = append(set, "-out")
			}
		})
		if len(set) > 0 {
			return usageError("-resume takes the plan from %s; drop %s", filepath.Join(*resume, results.EnvFile), strings.Join(set, " "))
		}
		var runs []results.Run
		var err error
		env, runs, err = results.Load(*resume)
		if err != nil {
			return fmt.Errorf("-resume: %w", err)
		}
		dir = *resume
		plan = sweep.Plan{Plan: env.Plan}
		for _, r := range runs {
			if !r.Failed() {
				done[r.Name()] = true
			}
		}
	} else {
		plan = def
		plan.Topologies = strings.Split(*topos, ",")
		for i := range plan.Topologies {
			plan.Topologies[i] = strings.TrimSpace(plan.Topologies[i])
		}
		g, err := sweep.ParseInts(*gmp)
		if err != nil {
			return usageError("-gomaxprocs: %v", err)
		}
		plan.GOMAXPROCS = g
		plan.Threads, plan.Connections, plan.Duration, plan.Reps = *threads, *conns, *dur, *reps
		plan.Warmup, plan.Timeout, plan.PinLoad, plan.PinServer = *warmup, *timeout, *pinLoad, *pinServer
		dir = *out
		if dir == "" {
			dir = filepath.Join("results", time.Now().Format("20060102-150405"))
		}
	}
	if err := plan.Validate(); err != nil {
		return usageError("%v", err)
	}
	if *nginxAgent != "" && *helloAgent == "" {
		return usageError("-nginx-agent needs -hello-agent")
	}
	if *helloAgent != "" {
		switch {
		case plan.PinServer != "":
			return usageError("-pin-server: the servers run elsewhere (-hello-agent); pin them there")
		case *freePorts:
			return usageError("-free-ports: with -hello-agent the servers listen on the reference ports")
		case *nginxAgent == "" && len(nginxconf.Vhosts(mustTopologies(plan.Topologies))) > 0:
			return usageError("-nginx-agent: topologies through nginx need it with -hello-agent")
		}
	}

	// Refuse a run that cannot work before creating anything.
	pf, err := preflight.Check(ctx, preflight.Options{Connections: plan.Connections})
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if *helloAgent != "" {
		// nginx runs in its own container; this one has none.
		pf.Rows = slices.DeleteFunc(pf.Rows, func(r preflight.Row) bool { return r.Setting == "nginx" })
	}
	if err := pf.Fatal(); err != nil {
		_ = pf.Write(stderr)
		return fmt.Errorf("preflight: %w (see topobench preflight)", err)
	}
	wrkBin, err := exec.LookPath("wrk")
	if err != nil {
		return errors.New("wrk not found in PATH: install it (make tools, or apt-get install wrk)")
	}
	tops, _ := topology.Parse(strings.Join(plan.Topologies, ","))
	nginxBin := ""
	for _, t := range tops {
		if *helloAgent != "" {
			break
		}
		if t.ViaNginx() {
			if nginxBin, err = nginx.Find(); err != nil {
				return fmt.Errorf("topology %s needs nginx: %w", t.Name, err)
			}
			break
		}
	}
	for _, g := range plan.GOMAXPROCS {
		if g > runtime.NumCPU() {
			fmt.Fprintf(stderr, "warning: GOMAXPROCS=%d exceeds the %d CPUs here; expect scheduler contention, not parallelism\n", g, runtime.NumCPU())
		}
	}

	if *resume == "" {
		if err := results.Create(dir); err != nil {
			return err
		}
		env = results.Env{Command: os.Args, Start: time.Now().UTC(), Plan: plan.Plan}
		results.FillHost(&env)
		env.Sysctls = results.ReadSysctls(sysctlNames(pf))
		if v, err := wrk.Version(ctx, wrkBin); err == nil {
			env.WrkVersion = v
		}
		if nginxBin != "" {
			if v, err := nginx.GetVersion(ctx, nginxBin); err == nil {
				env.NginxVersion = v.String()
			}
		}
		if *nginxAgent != "" {
			if st, err := (supervise.Client{URL: *nginxAgent}).Status(ctx); err == nil {
				if v, err := nginx.ParseVersion(st.Version); err == nil {
					env.NginxVersion = v.String()
				}
			}
		}
	} else {
		env.Interrupted = false
		env.End = time.Time{}
	}
	if err := results.WriteEnv(dir, env); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "topobench: results in %s\n", dir)

	var layout *topology.Layout
	if *helloAgent != "" {
		l := topology.DefaultLayout(*sockDir)
		layout = &l
	}
	if *freePorts {
		sock, err := filepath.Abs(filepath.Join(dir, "sock"))
		if err != nil {
			return err
		}
		l, err := topology.FreeLayout(sock)
		if err != nil {
			return err
		}
		layout = &l
	}
	o, runErr := sweep.Run(ctx, sweep.Config{
		Plan:       plan,
		Dir:        dir,
		Layout:     layout,
		Done:       done,
		Progress:   stdout,
		Log:        stderr,
		NginxBin:   nginxBin,
		WrkBin:     wrkBin,
		HelloAgent: *helloAgent,
		NginxAgent: *nginxAgent,
	})
	env.Interrupted = o.Interrupted || runErr != nil
	if !env.Interrupted {
		env.End = time.Now().UTC()
	}
	if err := results.WriteEnv(dir, env); err != nil {
		return errors.Join(runErr, err)
	}
	// Whatever finished is reported, even after an error or Ctrl-C.
	if err := writeReport(dir, stdout); err != nil {
		return errors.Join(runErr, err)
	}
	switch {
	case runErr != nil:
		hint := ""
		if strings.Contains(runErr.Error(), "already in use") && !*freePorts {
			hint = " (-free-ports picks ports nothing else holds)"
		}
		return fmt.Errorf("%w%s\n%d of %d cells kept in %s; finish with: topobench compare -resume %s", runErr, hint, o.Measured+o.Failed+o.Skipped, o.Total, dir, dir)
	case o.Interrupted:
		return fmt.Errorf("interrupted: %d of %d cells kept in %s; finish with: topobench compare -resume %s", o.Measured+o.Failed+o.Skipped, o.Total, dir, dir)
	case o.Failed > 0:
		return fmt.Errorf("%d of %d cells failed; see %s", o.Failed, o.Total, filepath.Join(dir, "summary.md"))
	}
	return nil
}

// writeReport renders the summary of everything in dir.
func writeReport(dir string, stdout io.Writer) error {
	env, runs, err := results.Load(dir)
	if err != nil {
		return err
	}
	if err := report.Write(dir, env, runs); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "summary.md"))
	return nil
}

func sysctlNames(r preflight.Report) []string {
	var names []string
	for _, row := range r.Rows {
		if strings.Contains(row.Setting, ".") && !strings.Contains(row.Setting, " ") {
			names = append(names, row.Setting)
		}
	}
	return names
}

// mustTopologies parses names already validated by Plan.Validate.
func mustTopologies(names []string) []topology.Topology {
	ts, _ := topology.Parse(strings.Join(names, ","))
	return ts
}

package sweep

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/stack"
	"github.com/topobench/topobench/internal/target"
	"github.com/topobench/topobench/internal/topology"
)

// checkTargets refuses, before anything starts, a target whose toolchain
// is not installed (the machine's); the error names the Debian package.
func checkTargets(names []string) error {
	for _, name := range names {
		if name == results.TargetGo {
			continue
		}
		t, err := target.Lookup(name)
		if err == nil {
			err = t.Check()
		}
		if err != nil {
			return &plan.FieldError{Field: plan.Targets, Err: err}
		}
	}
	return nil
}

// buildTargets compiles every target other than Go once per run, into
// Dir/bin/<target>, and records in env.json what each runs with.
func (s *sweep) buildTargets(ctx context.Context, tops []topology.Topology) error {
	s.programs = map[string]*target.Program{}
	var others []string
	for _, name := range s.plan.TargetList() {
		if name != results.TargetGo {
			others = append(others, name)
		}
	}
	if len(others) == 0 {
		return nil
	}
	if s.env.Targets == nil {
		s.env.Targets = map[string]string{}
	}
	for _, name := range others {
		t, err := target.Lookup(name)
		if err != nil {
			return &plan.FieldError{Field: plan.Targets, Err: err}
		}
		fmt.Fprintf(s.Log, "building %s\n", name)
		p, err := t.Build(ctx, filepath.Join(s.Dir, "bin", t.Slug()))
		if err != nil {
			return err
		}
		s.programs[name] = p
		// Keyed as the report labels the target: a command target by its
		// file-safe name; its description holds the command.
		s.env.Targets[t.Slug()] = s.describeTarget(p)
	}
	return results.WriteEnv(s.Dir, s.env)
}

// describeTarget is what the report says a target ran with: its model,
// java-pool's pool size, the JVM's heap, and the command line at the
// plan's first processor value.
func (s *sweep) describeTarget(p *target.Program) string {
	if p.Target.Runtime == target.Running {
		return p.Target.Model + "; not started by the sweep, its processors its own"
	}
	cfg := stack.Config{Layout: s.layout, GOMAXPROCS: s.plan.GOMAXPROCS[0], PoolThreads: target.DefaultPoolThreads}
	tc := cfg.TargetConfig()
	parts := []string{p.Target.Model}
	if p.Target.Name == "java-pool" {
		parts = append(parts, "pool of "+strconv.Itoa(target.DefaultPoolThreads)+" threads")
	}
	switch p.Target.Runtime {
	case target.Java:
		parts = append(parts, "fixed heap "+target.JVMHeap+", -XX:ActiveProcessorCount follows GOMAXPROCS")
	case target.Erlang:
		parts = append(parts, "schedulers (+S) follow GOMAXPROCS")
	}
	if p.Target.Deviation != "" {
		parts = append(parts, p.Target.Deviation)
	}
	parts = append(parts, "command at GOMAXPROCS="+strconv.Itoa(tc.Procs)+": "+strings.Join(p.Command(tc), " "))
	return strings.Join(parts, "; ")
}

// targetPrefix starts a block's progress line with its target, unless Go
// (a command target by its file-safe name: the line names the command).
func targetPrefix(name string) string {
	if name == "" || name == results.TargetGo {
		return ""
	}
	return results.TargetFile(name) + " "
}

// parityLineFor is parityLine, saying for a command target what its
// parity is: the same answer to path as the service gives standalone.
func parityLineFor(name, path string, tops []topology.Topology, refused map[string]error) string {
	if !target.IsOwn(name) || len(refused) > 0 {
		return parityLine(tops, refused)
	}
	return fmt.Sprintf("%d topologies answer GET and HEAD %s as the service does standalone (status, body, header names)", len(tops), path)
}

// withPath puts the plan's -path (empty: "/") in place of the layout's
// "/" at the end of url.
func withPath(url, path string) string {
	if path == "" {
		return url
	}
	return strings.TrimSuffix(url, "/") + path
}

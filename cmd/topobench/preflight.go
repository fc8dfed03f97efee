package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/results"
)

// runPreflight prints the kernel settings, open-files limits, cores and
// tools in effect against sysctl.conf and limits.conf, with what each
// shortfall means for a run at -connections. It fails only when such a run
// cannot work. With -apply (root only) it first writes the sysctls that fall
// short and reports those the kernel refused.
func runPreflight(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("preflight", stderr)
	conns := fs.Int("connections", 5000, "judge the machine for a run at this many connections (wrk -c)")
	apply := fs.Bool("apply", false, "write the sysctls that fall short (needs root)")
	procSys := fs.String("procsys", "/proc/sys", "where the sysctls are read and written (a host's /proc/sys mounted elsewhere)")
	isolate := fs.String("isolate", "", "judge a compare run with this -isolate: netns (the run's namespaces get nginx's backlog, so the host's somaxconn caps nothing it listens on) or none; default as compare: netns as root with ip, else none")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench preflight [-connections N] [-isolate netns|none] [-apply]")
		fmt.Fprintln(stderr, "\nCompares the machine with sysctl.conf and limits.conf and says what\nfalls short means for a run at N connections. Exits non-zero when such a\nrun cannot work (too few open files, no wrk or nginx).")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *conns <= 0 {
		return usageError("preflight: -connections must be positive, got %d", *conns)
	}
	namespaces, _ := netns.Possible()
	switch *isolate {
	case "":
	case results.IsolateNetns:
		namespaces = true
	case results.IsolateNone:
		namespaces = false
	default:
		return usageError("preflight: -isolate must be netns or none, got %q", *isolate)
	}
	// As compare does, so the limits read are those its children get.
	if _, _, err := preflight.RaiseOpenFiles(); err != nil {
		fmt.Fprintf(stderr, "preflight: warning: %v\n", err)
	}
	opt := preflight.Options{Connections: *conns, ProcSys: *procSys, Namespaces: namespaces}
	rep, err := preflight.Check(ctx, opt)
	if err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	if *apply {
		if os.Geteuid() != 0 && *procSys == "/proc/sys" {
			return errors.New("preflight: -apply writes /proc/sys and needs root")
		}
		todo := rep.ToApply()
		if len(todo) == 0 {
			fmt.Fprintln(stdout, "apply: nothing falls short")
		}
		refused := 0
		for _, a := range preflight.Apply(todo, *procSys) {
			if a.Err != nil {
				refused++
				fmt.Fprintf(stdout, "apply: kernel refused %v\n", a.Err)
				continue
			}
			fmt.Fprintf(stdout, "apply: wrote %s = %s\n", a.Setting.Name(), a.Setting.Value)
		}
		fmt.Fprintln(stdout)
		if rep, err = preflight.Check(ctx, opt); err != nil {
			return fmt.Errorf("preflight: %w", err)
		}
		defer func() {
			if refused > 0 {
				fmt.Fprintf(stderr, "preflight: the kernel refused %d setting(s); see above\n", refused)
			}
		}()
	}
	if err := rep.Write(stdout); err != nil {
		return err
	}
	if err := rep.Fatal(); err != nil {
		return fmt.Errorf("preflight: %w", err)
	}
	return nil
}

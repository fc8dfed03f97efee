package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagGroup is a heading of a command's -h and its flags, in the order
// they print. A heading that says "with -X" is the one place the group's
// flags say they apply only with -X.
type flagGroup struct {
	heading string
	flags   []string
}

// compareFirst is compare -h: the decisions a run takes; -help-all shows
// the rest.
var compareFirst = []flagGroup{
	{"flags", []string{"preset", "design", "targets", "topologies", "gomaxprocs", "connections", "load", "budget", "precision", "reps", "window", "out", "resume", "format", "help-all"}},
}

// compareHelp is compare -help-all: it assigns each of compare's flags its
// group, a new flag is a name in one list here (TestCompareHelpGroups
// holds every flag but the plumbing and the removed ones to exactly one
// group).
var compareHelp = []flagGroup{
	{"what to measure", []string{"preset", "scale", "targets", "path", "topologies", "gomaxprocs", "work", "wait", "upstream-keepalive", "close", "tls-key", "tls-version", "tls-resume"}},
	{"load", []string{"load", "engine", "streams", "connections", "threads", "rate", "max-connections", "duration", "warmup", "timeout"}},
	{"design and when to stop", []string{"design", "budget", "precision", "reps"}},
	{"design, with -design paired or duet", []string{"window", "lead", "seed", "cross-check", "standalone-process", "latency-rate"}},
	{"where things run", []string{"isolate", "link-delay", "cpus", "pin-load", "pin-server", "swarm", "speed-probe"}},
	{"where things run, with -swarm", []string{"swarm-allow", "swarm-engines", "swarm-image", "swarm-base", "swarm-lead", "swarm-tolerance"}},
	{"output", []string{"out", "format", "resume", "fail-if", "help-all"}},
}

// printFlagGroups writes each group's heading and its flags as
// flag.PrintDefaults writes a flag, then any flag no group lists and not
// hidden under "other"; a name fs does not have is skipped (the tests
// catch both).
func printFlagGroups(w io.Writer, fs *flag.FlagSet, groups []flagGroup, hidden []string) {
	listed := map[string]bool{}
	for _, name := range hidden {
		listed[name] = true
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.heading)
		for _, name := range g.flags {
			listed[name] = true
			if f := fs.Lookup(name); f != nil {
				fmt.Fprintln(w, flagHelp(f))
			}
		}
	}
	heading := "\nother:\n"
	fs.VisitAll(func(f *flag.Flag) {
		if !listed[f.Name] {
			fmt.Fprint(w, heading)
			fmt.Fprintln(w, flagHelp(f))
			heading = ""
		}
	})
}

// flagHelp is one flag's entry as flag.PrintDefaults prints it: the name
// and its argument's kind, then the usage and a default that is not the
// zero value.
func flagHelp(f *flag.Flag) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  -%s", f.Name)
	kind, usage := flag.UnquoteUsage(f)
	if kind != "" {
		b.WriteString(" " + kind)
	}
	if b.Len() <= 4 {
		b.WriteString("\t")
	} else {
		b.WriteString("\n    \t")
	}
	b.WriteString(strings.ReplaceAll(usage, "\n", "\n    \t"))
	switch f.DefValue {
	case "", "0", "false", "0s":
	default:
		if g, ok := f.Value.(flag.Getter); ok {
			if _, isString := g.Get().(string); isString {
				fmt.Fprintf(&b, " (default %q)", f.DefValue)
				break
			}
		}
		fmt.Fprintf(&b, " (default %v)", f.DefValue)
	}
	return b.String()
}

package results

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mattn/go-shellwords"

	"github.com/topobench/topobench/internal/topology"
)

// commandPrefix starts the name of a command target, the user's own
// server ("cmd:PATH ARGS"). The rules below are internal/target's
// (Target.Slug and Target.Serves), restated for what a record needs
// without that package; internal/sweep's tests hold the two to agree.
const commandPrefix = "cmd:"

var unsafeFile = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// commandArgv splits a command target's name as internal/target does: a
// shell's words; nil for any other name or one that does not split.
func commandArgv(target string) []string {
	line, ok := strings.CutPrefix(target, commandPrefix)
	if !ok {
		return nil
	}
	argv, err := shellwords.NewParser().Parse(line)
	if err != nil || len(argv) == 0 {
		return nil
	}
	return argv
}

// TargetFile is a target's name made fit for a file name and a label:
// the name itself, or for a command target "cmd-PROGRAM" (its program's
// base name), since the whole command has spaces and slashes.
func TargetFile(target string) string {
	if rest, ok := strings.CutPrefix(target, runningPrefix); ok {
		return runningFile(rest)
	}
	argv := commandArgv(target)
	if argv == nil {
		return target
	}
	base := unsafeFile.ReplaceAllString(filepath.Base(argv[0]), "_")
	return "cmd-" + strings.Trim(base, "._")
}

// runningPrefix starts the name of a running target, a service the user
// already runs ("listen:IP:PORT", "listen:unix:PATH"): internal/target's
// ParseRunning and Target.Slug.
const runningPrefix = "listen:"

// OwnTarget reports whether a target is the user's own server rather
// than one topobench builds: a command ("cmd:...") or a service already
// running ("listen:..."), internal/target's IsOwn.
func OwnTarget(target string) bool {
	return strings.HasPrefix(target, commandPrefix) || strings.HasPrefix(target, runningPrefix)
}

// runningFile is a running target's file name: "listen-IP-PORT", or
// "listen-unix-NAME" with the socket's base name.
func runningFile(where string) string {
	if path, ok := strings.CutPrefix(where, "unix:"); ok {
		return "listen-unix-" + strings.Trim(unsafeFile.ReplaceAllString(filepath.Base(path), "_"), "._")
	}
	return "listen-" + unsafeFile.ReplaceAllString(strings.ReplaceAll(where, ":", "-"), "_")
}

// runningServes reports whether a running target listens where a
// topology's backend connects: a unix socket's serves HTTPUnix, a TCP
// address's HTTPTCP.
func runningServes(where string, b topology.Backend) bool {
	if strings.HasPrefix(where, "unix:") {
		return b == topology.HTTPUnix
	}
	return b == topology.HTTPTCP
}

// commandServes reports whether a command target listens where a
// topology's backend connects: on TCP when it names {addr} or {port}, on
// a unix socket when it names {unix}.
func commandServes(argv []string, b topology.Backend) bool {
	uses := func(phs ...string) bool {
		for _, a := range argv {
			for _, ph := range phs {
				if strings.Contains(a, ph) {
					return true
				}
			}
		}
		return false
	}
	switch b {
	case topology.HTTPTCP:
		return uses("{addr}", "{port}")
	case topology.HTTPUnix:
		return uses("{unix}")
	}
	return false
}

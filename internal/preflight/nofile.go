package preflight

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// RaiseOpenFiles raises this process's soft open-files limit to its hard
// limit, explicitly, so that the children it starts — wrk, nginx,
// cmd/hello — inherit it. The Go runtime raises its own soft limit at
// start-up but gives children the limit the shell had (1024, say) unless
// the program sets the limit itself (go.dev/issue/46279); wrk at -c 2000
// would then fail with "Too many open files" after a preflight that read
// the harness's raised limit and said ok. It returns the limits in effect.
func RaiseOpenFiles() (soft, hard uint64, err error) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("reading the open-files limit: %w", err)
	}
	rl.Cur = rl.Max
	// Set even when Cur already equals Max: it also tells os/exec to
	// leave the children's limit alone.
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, 0, fmt.Errorf("raising the open-files limit to %d: %w", rl.Max, err)
	}
	return rl.Cur, rl.Max, nil
}

// ChildOpenFiles is the open-files limits a child of this process starts
// with, read by starting one (sh -c 'ulimit -Sn; ulimit -Hn'): what wrk
// and the servers will have, which this process's own limit need not be.
func ChildOpenFiles(ctx context.Context) (soft, hard uint64, err error) {
	out, err := exec.CommandContext(ctx, "sh", "-c", "ulimit -Sn; ulimit -Hn").Output()
	if err != nil {
		return 0, 0, fmt.Errorf("reading a child's open-files limit: %w", err)
	}
	return parseUlimits(string(out))
}

// parseUlimits reads two lines of ulimit output: soft, then hard.
func parseUlimits(out string) (soft, hard uint64, err error) {
	f := strings.Fields(out)
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("reading a child's open-files limit: want two values, got %q", out)
	}
	if soft, err = parseLimit(f[0]); err == nil {
		hard, err = parseLimit(f[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("reading a child's open-files limit: %w", err)
	}
	return soft, hard, nil
}

func parseLimit(s string) (uint64, error) {
	if s == "unlimited" {
		return ^uint64(0), nil
	}
	return strconv.ParseUint(s, 10, 64)
}

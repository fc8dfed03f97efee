package preflight

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// helperEnv makes the test binary a harness in miniature: it reads (and
// with "raise" first raises) its open-files limit and prints what a child
// of it gets.
const helperEnv = "TOPOBENCH_NOFILE_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		if mode == "raise" {
			if _, _, err := RaiseOpenFiles(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		soft, hard, err := ChildOpenFiles(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		rd := ReadTools(context.Background(), nil, "/nonexistent", []Tool{})
		fmt.Printf("%d %d %d\n", soft, hard, rd.NofileSoft)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestChildrenGetTheRaisedLimit starts the helper under a lowered soft
// limit (ulimit -Sn 1024, as a login shell has it). Without the raise its
// child starts with 1024, although the Go runtime raised the helper's own
// limit; with it, the child has the hard limit, and the preflight's
// reading is the child's.
func TestChildrenGetTheRaisedLimit(t *testing.T) {
	var rl syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
	const low = 1024
	if rl.Max <= low {
		t.Skipf("the hard open-files limit (%d) is not above %d: nothing to raise", rl.Max, low)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	run := func(mode string) (child, hard, read uint64) {
		t.Helper()
		cmd := exec.Command("sh", "-c", `ulimit -Sn `+strconv.Itoa(low)+` && exec "$0"`, self)
		cmd.Env = append(os.Environ(), helperEnv+"="+mode)
		out, err := cmd.Output()
		require.NoError(t, err, "%s", out)
		f := strings.Fields(string(out))
		require.Len(t, f, 3, "%s", out)
		vs := make([]uint64, 3)
		for i := range f {
			vs[i], err = strconv.ParseUint(f[i], 10, 64)
			require.NoError(t, err)
		}
		return vs[0], vs[1], vs[2]
	}
	child, _, read := run("keep")
	assert.Equal(t, uint64(low), child, "without the raise a child gets the shell's soft limit back")
	assert.Equal(t, uint64(low), read, "and the preflight says so")

	child, hard, read := run("raise")
	assert.Equal(t, rl.Max, hard)
	assert.Equal(t, hard, child, "after the raise a child has the hard limit")
	assert.Equal(t, child, read, "the preflight reads what the child has")
}

func TestParseUlimits(t *testing.T) {
	for _, tt := range []struct {
		out        string
		soft, hard uint64
		err        bool
	}{
		{"1024\n20000\n", 1024, 20000, false},
		{"unlimited\nunlimited\n", ^uint64(0), ^uint64(0), false},
		{"1024\n", 0, 0, true},
		{"x\n20000\n", 0, 0, true},
	} {
		t.Run(strings.ReplaceAll(tt.out, "\n", " "), func(t *testing.T) {
			soft, hard, err := parseUlimits(tt.out)
			if tt.err {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.soft, soft)
			assert.Equal(t, tt.hard, hard)
		})
	}
}

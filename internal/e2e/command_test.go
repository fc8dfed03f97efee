package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
)

// TestShortDuetCommandTarget runs make compare's design on a service of
// the user's own, started by the sweep from its command line: its rows
// carry the same figures as cmd/hello's.
func TestShortDuetCommandTarget(t *testing.T) {
	testenv.NeedNetns(t)
	bin, api := testenv.TopobenchBin(t), testenv.JSONAPIBin(t)
	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "compare", "-targets", "cmd:"+api+" -listen {addr}",
		"-topologies", "standalone,nginx-http", "-gomaxprocs", "1", "-connections", "500",
		"-reps", "6", "-window", "1s", "-out", out)
	cmd.WaitDelay = 10 * time.Second
	log, err := cmd.CombinedOutput()
	require.NoError(t, err, "compare: %s", tail(log))

	md := read(t, filepath.Join(out, "summary.md"))
	assert.Contains(t, md, "**Design:** duet")
	heading := regexp.MustCompile(`(?m)^### target=cmd-\S+ GOMAXPROCS=1 connections=500 load=builtin$`).FindString(md)
	require.NotEmpty(t, heading, "the command target's group:\n%s", md)
	rows := resultRows(t, md, heading)
	require.Len(t, rows, 2, md)
	r := rows[1]
	require.Equal(t, "nginx-http", r["topology"])
	assert.Regexp(t, `^0\.[0-9]+ ± [0-9]+%`, r["vs standalone"])
	cpu := strings.Split(r["CPU µs/req load / nginx / server"], " / ")
	require.Len(t, cpu, 3)
	for _, part := range cpu[1:] {
		assert.Regexp(t, `^[0-9][0-9,.]* ± [0-9]+%$`, part, "the command's nginx and backend µs: %v", cpu)
	}
}

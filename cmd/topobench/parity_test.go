package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParityCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/hello, runs it and nginx")
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"parity"}, &stdout, &stderr)
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Len(t, lines, 1+6+2, stdout.String())
	for i, name := range strings.Split(defaultParityTopologies, ",") {
		f := strings.Fields(lines[1+i])
		assert.Equal(t, name, f[0])
		assert.Equal(t, "200/200", f[2], lines[1+i])
		assert.Equal(t, "141/141", f[3], lines[1+i])
		assert.Equal(t, "12", f[4], lines[1+i])
		assert.Equal(t, "d2a84f4b8b65", f[5], lines[1+i])
	}
	assert.Contains(t, lines[len(lines)-1], "parity ok: 6 topologies")
}

func TestParityCommandReferencesOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx")
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"parity", "-topologies", "nginx-return,nginx-static", "-hello", "/nonexistent"}, &stdout, &stderr)
	require.NoError(t, err, "no cmd/hello needed: %s", stderr.String())
	assert.Contains(t, stdout.String(), "parity ok: 2 topologies")
}

func TestParityCommandBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"parity", "-topologies", "nginx-grpc"}, `-topologies: unknown topology "nginx-grpc"`, 2},
		{[]string{"parity", "-topologies", "standalone,standalone"}, `topology "standalone" listed twice`, 2},
		{[]string{"parity", "-topologies", "standalone,nginx-tls-http"}, `-topologies: nginx-tls-http speaks TLS`, 2},
		{[]string{"parity", "-timeout", "0s"}, "-timeout must be positive", 2},
		{[]string{"parity", "extra"}, `unexpected argument "extra"`, 2},
		{[]string{"parity", "-topologies", "nginx-return", "-nginx", "/nonexistent/nginx"}, "/nonexistent/nginx", 1},
		{[]string{"parity", "-topologies", "standalone", "-hello", "/nonexistent/hello"}, "/nonexistent/hello", 1},
		{[]string{"parity", "-at", "10.0.0.2"}, `-at "10.0.0.2": want a link-local address`, 2},
		{[]string{"parity", "-at", "node-b"}, `-at "node-b": want a link-local address`, 2},
		{[]string{"parity", "-at", "10.0.0.2"}, "or another machine's with -allow-remote", 2},
		{[]string{"parity", "-allow-remote"}, "-allow-remote: applies with -at only", 2},
		{[]string{"parity", "-allow-remote", "-at", "224.0.0.1"}, `-at "224.0.0.1": want the unicast address of another machine`, 2},
		{[]string{"parity", "-allow-remote", "-at", "127.0.0.1"}, `-at "127.0.0.1": want the unicast address of another machine`, 2},
		{[]string{"parity", "-allow-remote", "-at", "node-b"}, `-at "node-b": want the unicast address`, 2},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, tc.code, exitCode(err))
		})
	}
}

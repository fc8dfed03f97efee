package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNginxConfCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nginx -t")
	}
	dir := filepath.Join(t.TempDir(), "conf")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"nginx-conf", "-out", dir}, &stdout, &stderr), stderr.String())
	assert.Contains(t, stdout.String(), "checked: ")
	for _, f := range []string{"nginx.conf", "fastcgi_params", "go.http", "go.fcgi.tcp", "go.fcgi.unix", "nginx.return", "nginx.static",
		"go.fcgi.fast.tcp", "go.fcgi.fast.unix", "go.http.unix", "static/hello"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	// The reference layout: Go HTTP on 8080, FastCGI on 9001 and /tmp/go.sock.
	b, err := os.ReadFile(filepath.Join(dir, "go.fcgi.unix"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "server unix:/tmp/go.sock;")
	b, err = os.ReadFile(filepath.Join(dir, "go.http"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "server 127.0.0.1:8080;")
	assert.Contains(t, string(b), "listen 127.0.0.1:8081 backlog=5000;")

	// A cluster's server node: the vhosts listen on every address, the
	// upstream hop stays on loopback.
	dir = filepath.Join(t.TempDir(), "conf")
	require.NoError(t, run(context.Background(), []string{"nginx-conf", "-out", dir, "-host", "169.254.201.2"}, &stdout, &stderr), stderr.String())
	b, err = os.ReadFile(filepath.Join(dir, "go.http"))
	require.NoError(t, err)
	assert.Contains(t, string(b), "server 127.0.0.1:8080;")
	assert.Contains(t, string(b), "listen 0.0.0.0:8081 backlog=5000;")
}

func TestNginxConfCommandBadInput(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"nginx-conf", "-out", ""}, "-out must name a directory", 2},
		{[]string{"nginx-conf", "-out", file}, "-out " + file, 1},
		{[]string{"nginx-conf", "stray"}, `unexpected argument "stray"`, 2},
		{[]string{"nginx-conf", "-host", "node-b"}, `-host "node-b": not an IP address`, 2},
	} {
		err := run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err, tc.args)
		assert.Contains(t, err.Error(), tc.want)
		assert.Equal(t, tc.code, exitCode(err))
	}
}

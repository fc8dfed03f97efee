package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/topobench/topobench/internal/testenv"
	"github.com/topobench/topobench/internal/tlscert"
)

// offArgs turns every default listener off, so a test opens only its own.
var offArgs = []string{"-http=", "-fcgi-tcp=", "-fcgi-unix="}

func TestRunFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"gomaxprocs not a number", []string{"-gomaxprocs", "abc"}, `invalid value "abc" for flag -gomaxprocs`},
		{"gomaxprocs negative", []string{"-gomaxprocs=-1"}, "-gomaxprocs: must be 0 or more"},
		{"socket mode not octal", []string{"-socket-mode", "rw"}, `invalid value "rw" for flag -socket-mode: not an octal number`},
		{"socket mode with 8", []string{"-socket-mode", "0668"}, "-socket-mode: not an octal number"},
		{"socket mode too big", []string{"-socket-mode", "01777"}, "-socket-mode: more than permission bits"},
		{"grace zero", []string{"-grace", "0s"}, "-grace: must be positive"},
		{"grace not a duration", []string{"-grace", "5"}, `invalid value "5" for flag -grace`},
		{"idle negative", []string{"-idle-timeout=-1s"}, "-idle-timeout: must be positive"},
		{"write zero", []string{"-write-timeout=0s"}, "-write-timeout: must be positive"},
		{"http not host:port", []string{"-http", "8080"}, `-http: "8080" is not a host:port address`},
		{"fast tcp without port", []string{"-fcgi-fast-tcp", "127.0.0.1:"}, `-fcgi-fast-tcp: "127.0.0.1:" is not a host:port`},
		{"all off", offArgs, "every listener is off"},
		{"https without a certificate", append(offArgs, "-https", "127.0.0.1:0", "-tls-key", "k.pem"), "-https: needs -tls-cert and -tls-key"},
		{"https not host:port", []string{"-https", "443", "-tls-cert", "c", "-tls-key", "k"}, `-https: "443" is not a host:port address`},
		{"tls version", []string{"-tls-version", "1.1"}, `invalid value "1.1" for flag -tls-version: unknown TLS version "1.1" (want 1.3 or 1.2)`},
		{"tls key type", []string{"-tls-key-type", "ed25519"}, `invalid value "ed25519" for flag -tls-key-type: unknown TLS key type "ed25519" (want p256 or rsa2048)`},
		{"unknown flag", []string{"-port", "1"}, "flag provided but not defined: -port"},
		{"stray argument", []string{"serve"}, `unexpected argument "serve"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "\n", "one line")
			assert.Equal(t, 2, exitCode(err))
			assert.Empty(t, stderr.String(), "no usage dump on errors")
		})
	}
}

func TestRunHelp(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, 0, exitCode(err))
	for _, f := range []string{"-http", "-fcgi-tcp", "-fcgi-unix", "-http-unix", "-fcgi-fast-tcp", "-fcgi-fast-unix", "-gomaxprocs", "-socket-mode", "-grace"} {
		assert.Contains(t, stderr.String(), f+" ")
	}
	assert.Contains(t, stderr.String(), `(default "127.0.0.1:8080")`)
	assert.Contains(t, stderr.String(), "(default 0666)")
}

// runAsync starts run in the background and waits for its ready line.
func runAsync(t *testing.T, args []string) (stderr *testenv.Buffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &testenv.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, &bytes.Buffer{}, stderr) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				err = errors.New("run did not return after cancel")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		return strings.Contains(stderr.String(), "hello: ready")
	}, 10*time.Second, 5*time.Millisecond)
	require.Contains(t, stderr.String(), "hello: ready", "run ended early")
	return stderr, stop
}

func TestRunServesAndStops(t *testing.T) {
	dir := testenv.ShortDir(t)
	httpAddr, fcgiAddr := testenv.FreeAddr(t), testenv.FreeAddr(t)
	sock, httpSock := filepath.Join(dir, "go.sock"), filepath.Join(dir, "h.sock")
	stderr, stop := runAsync(t, []string{"-http", httpAddr, "-fcgi-tcp", fcgiAddr, "-fcgi-unix", sock,
		"-http-unix", httpSock, "-socket-mode", "0660", "-gomaxprocs", "1"})

	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	require.Len(t, lines, 5, stderr.String())
	assert.Equal(t, "hello: http on tcp "+httpAddr+" (-http, GOMAXPROCS 1)", lines[0])
	assert.Equal(t, "hello: fcgi on tcp "+fcgiAddr+" (-fcgi-tcp, GOMAXPROCS 1)", lines[1])
	assert.Equal(t, "hello: fcgi on unix "+sock+" (-fcgi-unix, GOMAXPROCS 1)", lines[2])
	assert.Equal(t, "hello: http on unix "+httpSock+" (-http-unix, GOMAXPROCS 1)", lines[3])
	assert.True(t, strings.HasPrefix(lines[4], "hello: ready"), lines[4])

	for _, p := range []string{sock, httpSock} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.Equal(t, os.ModeSocket, fi.Mode().Type())
		assert.Equal(t, os.FileMode(0o660), fi.Mode().Perm())
	}

	require.NoError(t, stop())
	for _, p := range []string{sock, httpSock} {
		_, err := os.Lstat(p)
		assert.True(t, os.IsNotExist(err), "%s left behind", p)
	}
	assert.Contains(t, stderr.String(), "hello: stopped")
}

func TestRunGOMAXPROCSWarning(t *testing.T) {
	stderr, stop := runAsync(t, []string{"-http", testenv.FreeAddr(t), "-fcgi-tcp=", "-fcgi-unix=", "-gomaxprocs", "4096"})
	require.NoError(t, stop())
	assert.Contains(t, stderr.String(), "hello: warning: GOMAXPROCS 4096 exceeds the")
	assert.Contains(t, stderr.String(), "GOMAXPROCS 4096)")
}

func TestRunListenerErrors(t *testing.T) {
	dir := testenv.ShortDir(t)

	t.Run("port in use", func(t *testing.T) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		// -http opens before -fcgi-tcp fails; it must be closed again.
		httpAddr := testenv.FreeAddr(t)
		err = run(context.Background(), []string{"-http", httpAddr, "-fcgi-tcp", busy.Addr().String(), "-fcgi-unix="},
			&bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		assert.Equal(t, "-fcgi-tcp: address "+busy.Addr().String()+" already in use", err.Error())
		assert.Equal(t, 1, exitCode(err))
		l, err := net.Listen("tcp", httpAddr)
		require.NoError(t, err, "the -http listener opened before the failure was not closed")
		l.Close()
	})

	t.Run("socket opened before the failure is removed", func(t *testing.T) {
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		sock := filepath.Join(dir, "b.sock")
		err = run(context.Background(), append(offArgs, "-fcgi-unix", sock, "-fcgi-fast-tcp", busy.Addr().String()),
			&bytes.Buffer{}, &bytes.Buffer{})
		require.ErrorContains(t, err, "-fcgi-fast-tcp: address "+busy.Addr().String()+" already in use")
		_, err = os.Lstat(sock)
		assert.True(t, os.IsNotExist(err), "socket of the listener opened first was left behind")
	})

	t.Run("live socket is left alone", func(t *testing.T) {
		sock := filepath.Join(dir, "live.sock")
		other, err := net.Listen("unix", sock)
		require.NoError(t, err)
		defer other.Close()
		err = run(context.Background(), append(offArgs, "-fcgi-unix", sock), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		assert.Equal(t, "-fcgi-unix: unix socket "+sock+": another server is listening on it", err.Error())
		c, err := net.Dial("unix", sock)
		require.NoError(t, err, "the other server's socket must survive")
		c.Close()
	})

	t.Run("not a socket is refused", func(t *testing.T) {
		path := filepath.Join(dir, "file")
		require.NoError(t, os.WriteFile(path, []byte("keep me"), 0o644))
		err := run(context.Background(), append(offArgs, "-http-unix", path), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-http-unix: unix socket "+path+": file exists and is not a socket")
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, "keep me", string(data))
	})

	t.Run("stale socket is replaced", func(t *testing.T) {
		sock := filepath.Join(dir, "stale.sock")
		l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
		require.NoError(t, err)
		l.SetUnlinkOnClose(false)
		l.Close()
		_, stop := runAsync(t, append(offArgs, "-fcgi-unix", sock))
		c, err := net.Dial("unix", sock)
		require.NoError(t, err)
		c.Close()
		require.NoError(t, stop())
		_, err = os.Lstat(sock)
		assert.True(t, os.IsNotExist(err))
	})

	t.Run("socket directory missing", func(t *testing.T) {
		sock := filepath.Join(dir, "nope", "x.sock")
		err := run(context.Background(), append(offArgs, "-fcgi-unix", sock), &bytes.Buffer{}, &bytes.Buffer{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "-fcgi-unix: unix socket "+sock)
		assert.NotContains(t, err.Error(), "\n")
	})
}

func TestPrefixWriter(t *testing.T) {
	tests := []struct{ in, want string }{
		{"one\n", "hello: one\n"},
		{"first\nsecond\n", "hello: first\nhello: second\n"},
		{"no newline", "hello: no newline"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var b bytes.Buffer
			n, err := prefixWriter{&b}.Write([]byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, len(tt.in), n)
			assert.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	fmt.Fprintln(prefixWriter{&b}, errors.Join(errors.New("a"), errors.New("b")))
	assert.Equal(t, "hello: a\nhello: b\n", b.String())
}

func TestRunTLSErrors(t *testing.T) {
	dir := testenv.ShortDir(t)
	p, err := tlscert.Generate(dir, tlscert.P256)
	require.NoError(t, err)
	missing := filepath.Join(dir, "none.pem")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"certificate missing", []string{"-tls-cert", missing, "-tls-key", p.Key},
			"-https: loading tls certificate " + missing + " and key " + p.Key + ": open " + missing + ": no such file or directory"},
		{"key of another type", []string{"-tls-cert", p.Cert, "-tls-key", p.Key, "-tls-key-type", "rsa2048"},
			"-https: tls key " + p.Key + " is p256, the settings want rsa2048"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// -http comes first: the certificate is loaded before any
			// listener opens.
			httpAddr := testenv.FreeAddr(t)
			args := append([]string{"-http", httpAddr, "-fcgi-tcp=", "-fcgi-unix=", "-https", "127.0.0.1:0"}, tc.args...)
			var stderr bytes.Buffer
			err := run(context.Background(), args, &bytes.Buffer{}, &stderr)
			require.Error(t, err)
			assert.Equal(t, tc.want, err.Error())
			assert.Equal(t, 1, exitCode(err))
			assert.NotContains(t, stderr.String(), "http on tcp", "a listener opened")
		})
	}
}

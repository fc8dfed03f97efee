package load

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in      string
		want    Target
		loopErr bool
		err     bool
	}{
		{in: "http://127.0.0.1:8080/", want: Target{Network: "tcp", Address: "127.0.0.1:8080", Host: "127.0.0.1:8080", Path: "/"}},
		{in: "http://127.0.0.1:8080", want: Target{Network: "tcp", Address: "127.0.0.1:8080", Host: "127.0.0.1:8080", Path: "/"}},
		{in: "http://127.1.2.3:81/a/b?wait=1s", want: Target{Network: "tcp", Address: "127.1.2.3:81", Host: "127.1.2.3:81", Path: "/a/b?wait=1s"}},
		{in: "http://[::1]:9000/x", want: Target{Network: "tcp", Address: "[::1]:9000", Host: "[::1]:9000", Path: "/x"}},
		{in: "http://localhost:9000/", want: Target{Network: "tcp", Address: "127.0.0.1:9000", Host: "localhost:9000", Path: "/"}},
		{in: "unix:/tmp/s.sock:/p?q=1", want: Target{Network: "unix", Address: "/tmp/s.sock", Host: "localhost", Path: "/p?q=1"}},
		{in: "unix:/tmp/s.sock", want: Target{Network: "unix", Address: "/tmp/s.sock", Host: "localhost", Path: "/"}},
		{in: "http://10.0.0.1:80/", loopErr: true},
		{in: "http://192.168.1.1/", loopErr: true},
		{in: "http://example.com:80/", loopErr: true},
		{in: "http://0.0.0.0:80/", loopErr: true},
		{in: "https://127.0.0.1:8443/x", want: Target{Network: "tcp", Address: "127.0.0.1:8443", Host: "127.0.0.1:8443", Path: "/x", TLS: true}},
		{in: "https://localhost/", want: Target{Network: "tcp", Address: "127.0.0.1:443", Host: "localhost", Path: "/", TLS: true}},
		{in: "https://10.0.0.1/", loopErr: true},
		{in: "ftp://127.0.0.1/", err: true},
		{in: "127.0.0.1:8080", err: true},
		{in: "unix:", err: true},
		{in: "http://127.0.0.1:99999/", err: true},
		{in: "http://127.0.0.1:0/", err: true},
		{in: "http://127.0.0.1:http/", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTarget(tt.in)
			switch {
			case tt.loopErr:
				require.ErrorIs(t, err, ErrNotLoopback)
			case tt.err:
				require.Error(t, err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestTargetRequestAndQuery(t *testing.T) {
	tg, err := ParseTarget("http://127.0.0.1:8080/")
	require.NoError(t, err)
	assert.Equal(t, "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n", string(tg.request(false)))
	assert.Equal(t, "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nConnection: close\r\n\r\n", string(tg.request(true)))
	assert.Equal(t, "/?wait=100ms", tg.WithQuery("wait", "100ms").Path)
	tg.Path = "/x?a=1"
	assert.Equal(t, "/x?a=1&wait=1s", tg.WithQuery("wait", "1s").Path)
}

func TestTargetString(t *testing.T) {
	for _, in := range []string{"http://127.0.0.1:8080/a?b=1", "https://127.0.0.1:8443/", "unix:/tmp/s.sock:/p"} {
		tg, err := ParseURL(in)
		require.NoError(t, err)
		assert.Equal(t, in, tg.String())
	}
}

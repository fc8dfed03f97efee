package topology

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	tests := []struct {
		list    string
		want    []string
		wantErr string
	}{
		{list: "standalone", want: []string{"standalone"}},
		{list: " nginx-http , nginx-fcgi-unix ,", want: []string{"nginx-http", "nginx-fcgi-unix"}},
		{list: "nginx-php", wantErr: `unknown topology "nginx-php"`},
		{list: "standalone,standalone", wantErr: "listed twice"},
		{list: ",", wantErr: "no topologies"},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			ts, err := Parse(tt.list)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, x := range ts {
				names = append(names, x.Name)
			}
			assert.Equal(t, tt.want, names)
		})
	}
}

func TestDefaultLayoutIsTheReference(t *testing.T) {
	l := DefaultLayout("/tmp")
	assert.Equal(t, "127.0.0.1:8080", l.HTTP)
	assert.Equal(t, "127.0.0.1:9001", l.FCGITCP)
	assert.Equal(t, "/tmp/go.sock", l.FCGIUnix)
	assert.Equal(t, "127.0.0.1:8443", l.HTTPS)
	seen := map[int]string{}
	for _, tp := range Known() {
		if !tp.ViaNginx() {
			want := "http://127.0.0.1:8080/"
			if tp.TLS {
				want = "https://127.0.0.1:8443/"
			}
			assert.Equal(t, want, l.URL(tp))
			continue
		}
		port := l.NginxPorts[tp.Vhost]
		require.NotZero(t, port, tp.Name)
		assert.Empty(t, seen[port], "%s and %s share port %d", tp.Name, seen[port], port)
		seen[port] = tp.Name
	}
}

func TestFreeLayoutPortsAreDistinct(t *testing.T) {
	l, err := FreeLayout(t.TempDir())
	require.NoError(t, err)
	addrs := []string{l.HTTP, l.FCGITCP, l.FastTCP, l.HTTPS}
	for _, p := range l.NginxPorts {
		addrs = append(addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		assert.False(t, seen[a], "port %s picked twice", a)
		seen[a] = true
		assert.True(t, strings.HasPrefix(a, "127.0.0.1:"), a)
	}
}

func TestHelloArgsOpenOnlyWhatTopologiesNeed(t *testing.T) {
	l := DefaultLayout("/s")
	ts, err := Parse("nginx-fcgi-unix,nginx-return")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"-http=", "-fcgi-tcp=", "-fcgi-unix=/s/go.sock",
		"-fcgi-fast-tcp=", "-fcgi-fast-unix=", "-http-unix=", "-https=",
	}, l.HelloArgs(ts))
	ts, err = Parse("standalone-tls,nginx-tls-http-unix")
	require.NoError(t, err)
	assert.Equal(t, []string{
		"-http=", "-fcgi-tcp=", "-fcgi-unix=",
		"-fcgi-fast-tcp=", "-fcgi-fast-unix=", "-http-unix=/s/go-http.sock", "-https=127.0.0.1:8443",
	}, l.HelloArgs(ts), "the HTTPS listener for standalone-tls; nginx-tls-http-unix ends at the plain unix one")

	for _, tp := range Known() {
		network, addr, ok := l.BackendAddr(tp)
		assert.Equal(t, !tp.Reference, ok, tp.Name)
		if ok {
			assert.Contains(t, []string{"tcp", "unix"}, network, tp.Name)
			assert.NotEmpty(t, addr, tp.Name)
		}
	}
}

// TestLayoutHost checks the addresses of a run whose clients come over a
// veth: the load-facing listeners bind every address and are dialled on
// the veth, the upstream hop stays on loopback; without Host nothing
// changes.
func TestLayoutHost(t *testing.T) {
	standalone, _ := Lookup("standalone")
	viaNginx, _ := Lookup("nginx-http")
	tests := []struct {
		name                            string
		host                            string
		listen, standURL, nginxURL, arg string
	}{
		{"loopback", "", "127.0.0.1", "http://127.0.0.1:8080/", "http://127.0.0.1:8081/", "-http=127.0.0.1:8080"},
		{"veth", "169.254.77.1", "0.0.0.0", "http://169.254.77.1:8080/", "http://169.254.77.1:8081/", "-http=0.0.0.0:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := DefaultLayout("/tmp")
			l.Host = tt.host
			assert.Equal(t, tt.listen, l.ListenHost())
			assert.Equal(t, tt.standURL, l.URL(standalone))
			assert.Equal(t, tt.nginxURL, l.URL(viaNginx))
			assert.Contains(t, l.HelloArgs([]Topology{standalone}), tt.arg)
			_, addr, _ := l.BackendAddr(viaNginx)
			assert.Equal(t, "127.0.0.1:8080", addr, "the upstream hop stays on loopback")
		})
	}
}

// TestTLSTopologiesStayOutOfTheDefaults: every list the defaults, "all"
// and the 2013 table are made of is the plain topologies', and their ports
// are the reference run's; the TLS ones are TLS()'s and Lookup's.
func TestTLSTopologiesStayOutOfTheDefaults(t *testing.T) {
	plain := []string{"standalone", "nginx-http", "nginx-fcgi-tcp", "nginx-fcgi-unix", "nginx-return",
		"nginx-static", "nginx-fcgi-fast-tcp", "nginx-fcgi-fast-unix", "nginx-http-unix"}
	assert.Equal(t, plain, Names())
	assert.Equal(t, []string{"standalone-tls", "nginx-tls-http", "nginx-tls-http-unix"}, TLSNames())
	for _, tp := range All() {
		assert.False(t, tp.TLS, tp.Name)
	}
	l := DefaultLayout("/tmp")
	for i, tp := range All()[1:] {
		assert.Equal(t, 8081+i, l.NginxPorts[tp.Vhost], "%s keeps its reference port", tp.Name)
	}

	tests := []struct {
		name, vhost, url string
		backend          Backend
	}{
		{"standalone-tls", "", "https://127.0.0.1:8443/", HTTPSTCP},
		{"nginx-tls-http", "go.tls.http", "https://127.0.0.1:8089/", HTTPTCP},
		{"nginx-tls-http-unix", "go.tls.http.unix", "https://127.0.0.1:8090/", HTTPUnix},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Lookup(tt.name)
			require.NoError(t, err)
			assert.True(t, tp.TLS)
			assert.Equal(t, tt.vhost, tp.Vhost)
			assert.Equal(t, tt.backend, tp.Backend)
			assert.Equal(t, tt.url, l.URL(tp))
		})
	}
	_, err := Lookup("nginx-tls-fcgi")
	assert.ErrorContains(t, err, "over TLS: standalone-tls, nginx-tls-http, nginx-tls-http-unix")
}

// TestBaseline: every plain topology's ratios are to standalone, every
// TLS one's to standalone-tls (Go's own TLS), itself among them.
func TestBaseline(t *testing.T) {
	for _, tp := range All() {
		assert.Equal(t, Standalone, tp.BaselineName(), tp.Name)
	}
	for _, tp := range TLS() {
		assert.Equal(t, StandaloneTLS, tp.BaselineName(), tp.Name)
	}
	assert.Equal(t, StandaloneTLS, BaselineOf("nginx-tls-http"))
	assert.Equal(t, Standalone, BaselineOf("nginx-http"))
	assert.Equal(t, Standalone, BaselineOf("nginx-gone"), "an older sweep's topology")
}

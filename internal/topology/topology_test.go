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
	seen := map[int]string{}
	for _, tp := range All() {
		if !tp.ViaNginx() {
			assert.Equal(t, "http://127.0.0.1:8080/", l.URL(tp))
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
	addrs := []string{l.HTTP, l.FCGITCP, l.FastTCP}
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
		"-fcgi-fast-tcp=", "-fcgi-fast-unix=", "-http-unix=",
	}, l.HelloArgs(ts))

	for _, tp := range All() {
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

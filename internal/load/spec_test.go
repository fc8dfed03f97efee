package load

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/tlscert"
)

// validSpec is a load run that passes Validate; the cases change one
// field each.
func validSpec(t *testing.T) Spec {
	t.Helper()
	s := DefaultSpec()
	tg, err := ParseTarget("http://127.0.0.1:8080/")
	require.NoError(t, err)
	s.Target = tg
	return s
}

func TestSpecValidate(t *testing.T) {
	limit, err := MaxProbe()
	require.NoError(t, err)
	probe := func(s *Spec) { s.Probe, s.Wait = 10, time.Second }
	ca := testCert(t).Cert
	https := func(s *Spec) {
		s.Target.TLS, s.TLS.CA = true, ca
	}
	for _, tc := range []struct {
		name  string
		edit  func(*Spec)
		field string // "" when valid
	}{
		{"default", func(s *Spec) {}, ""},
		{"unix socket", func(s *Spec) {
			s.Target = Target{Network: "unix", Address: "/tmp/x.sock", Host: "localhost", Path: "/"}
		}, ""},
		{"open loop", func(s *Spec) { s.Rate, s.Connections, s.MaxConnections = 100, 0, 5 }, ""},
		{"probe", probe, ""},
		{"no target", func(s *Spec) { s.Target = Target{} }, "target"},
		{"target off loopback", func(s *Spec) { s.Target.Address = "10.0.0.1:80" }, "target"},
		{"target on an unknown network", func(s *Spec) { s.Target.Network = "udp" }, "target"},
		{"allowed link-local target", func(s *Spec) {
			s.Target.Address, s.Allow = "169.254.1.2:80", netip.MustParseAddr("169.254.1.2")
		}, ""},
		{"allow not link-local", func(s *Spec) { s.Allow = netip.MustParseAddr("10.0.0.1") }, "allow"},
		{"link-local target not allowed", func(s *Spec) { s.Target.Address = "169.254.1.2:80" }, "target"},
		// Another machine's address, named with allow-remote: Validate
		// only, nothing is sent to it.
		{"routable target with allow-remote", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "10.0.0.2:80", netip.MustParseAddr("10.0.0.2"), true
		}, ""},
		{"routable IPv6 target with allow-remote", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "[2001:db8::2]:80", netip.MustParseAddr("2001:db8::2"), true
		}, ""},
		{"link-local target with allow-remote", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "169.254.1.2:80", netip.MustParseAddr("169.254.1.2"), true
		}, ""},
		{"routable target without allow-remote", func(s *Spec) {
			s.Target.Address, s.Allow = "10.0.0.2:80", netip.MustParseAddr("10.0.0.2")
		}, "allow"},
		{"allow-remote, target another address", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "10.0.0.3:80", netip.MustParseAddr("10.0.0.2"), true
		}, "target"},
		{"allow-remote without allow", func(s *Spec) { s.Target.Address, s.AllowRemote = "10.0.0.2:80", true }, "allow-remote"},
		{"allow-remote, allow multicast", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "224.0.0.1:80", netip.MustParseAddr("224.0.0.1"), true
		}, "allow"},
		{"allow-remote, allow unspecified", func(s *Spec) {
			s.Target.Address, s.Allow, s.AllowRemote = "0.0.0.0:80", netip.MustParseAddr("0.0.0.0"), true
		}, "allow"},
		{"allow-remote, allow loopback", func(s *Spec) { s.Allow, s.AllowRemote = netip.MustParseAddr("127.0.0.2"), true }, "allow"},
		{"probe at a routable target with allow-remote", func(s *Spec) {
			probe(s)
			s.Target.Address, s.Allow, s.AllowRemote = "10.0.0.2:80", netip.MustParseAddr("10.0.0.2"), true
		}, ""},
		{"probe at a routable target without allow-remote", func(s *Spec) {
			probe(s)
			s.Target.Address, s.Allow = "10.0.0.2:80", netip.MustParseAddr("10.0.0.2")
		}, "allow"},
		{"closed loop without connections", func(s *Spec) { s.Connections = 0 }, "connections"},
		{"negative connections, open loop", func(s *Spec) { s.Rate, s.Connections = 10, -1 }, "connections"},
		{"negative rate", func(s *Spec) { s.Rate = -1 }, "rate"},
		{"rate NaN", func(s *Spec) { s.Rate = math.NaN() }, "rate"},
		{"unknown arrivals", func(s *Spec) { s.Rate, s.Arrivals = 10, "bursty" }, "arrivals"},
		{"unknown arrivals, closed loop", func(s *Spec) { s.Arrivals = "bursty" }, "arrivals"},
		{"negative max-connections", func(s *Spec) { s.Rate, s.MaxConnections = 10, -1 }, "max-connections"},
		{"max-connections below connections", func(s *Spec) { s.Rate, s.Connections, s.MaxConnections = 10, 20, 5 }, "max-connections"},
		{"negative requests", func(s *Spec) { s.Requests = -1 }, "requests"},
		{"negative duration", func(s *Spec) { s.Duration = -time.Second }, "duration"},
		{"negative timeout", func(s *Spec) { s.Timeout = -time.Second }, "timeout"},
		{"timeout past the histogram", func(s *Spec) { s.Timeout = 2 * time.Minute }, "timeout"},
		{"no procs", func(s *Spec) { s.Procs = 0 }, "procs"},
		{"negative wait", func(s *Spec) { s.Wait = -time.Second }, "wait"},
		{"wait past 60s", func(s *Spec) { s.Wait = 61 * time.Second }, "wait"},
		{"within without probe", func(s *Spec) { s.Within = time.Second }, "within"},
		{"negative probe", func(s *Spec) { s.Probe = -1 }, "probe"},
		{"probe without wait", func(s *Spec) { s.Probe = 10 }, "wait"},
		{"probe with rate", func(s *Spec) { probe(s); s.Rate = 5 }, "rate"},
		{"probe with requests", func(s *Spec) { probe(s); s.Requests = 5 }, "requests"},
		{"probe with duration", func(s *Spec) { probe(s); s.Duration = time.Second }, "duration"},
		{"probe past the open-files limit", func(s *Spec) { probe(s); s.Probe = limit + 1 }, "probe"},
		{"within below wait", func(s *Spec) { probe(s); s.Within = time.Millisecond }, "within"},
		{"probe timeout past 60s", func(s *Spec) { probe(s); s.Timeout = time.Hour }, "timeout"},
		{"buffer too small", func(s *Spec) { s.BufferSize = 10 }, "buffer-size"},
		{"tls, goroutines", func(s *Spec) { https(s); s.Goroutines = true }, ""},
		{"tls, open loop", func(s *Spec) { https(s); s.Rate = 10 }, ""},
		{"tls, probe", func(s *Spec) { https(s); probe(s) }, ""},
		{"tls 1.2 rsa, resumed, closing", func(s *Spec) {
			https(s)
			s.Goroutines, s.Close, s.TLS.Version, s.TLS.Key, s.TLS.Resume = true, true, tlscert.TLS12, tlscert.RSA2048, true
		}, ""},
		{"tls on the event loops", https, "goroutines"},
		{"tls, plain target", func(s *Spec) { s.TLS.CA, s.Goroutines = ca, true }, "tls-ca"},
		{"https target without a ca", func(s *Spec) { https(s); s.Goroutines, s.TLS.CA = true, "" }, "tls-ca"},
		{"ca file missing", func(s *Spec) { https(s); s.Goroutines, s.TLS.CA = true, ca+".gone" }, "tls-ca"},
		{"ca file not pem", func(s *Spec) { https(s); s.Goroutines, s.TLS.CA = true, "spec_test.go" }, "tls-ca"},
		{"probe, https target without a ca", func(s *Spec) { https(s); probe(s); s.TLS.CA = "" }, "tls-ca"},
		{"unknown tls version", func(s *Spec) { https(s); s.Goroutines, s.TLS.Version = true, 7 }, "tls-version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec(t)
			tc.edit(&s)
			err := s.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field, "%v", err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.field+": "), "%v", err)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// fullSpec sets every field a spec carries in JSON to a value other than
// its default.
func fullSpec(t *testing.T) Spec {
	t.Helper()
	tg, err := ParseTargetAllow("http://169.254.7.1:8081/x?a=1", netip.MustParseAddr("169.254.7.1"))
	require.NoError(t, err)
	return Spec{
		Options: Options{
			Target: tg, Allow: netip.MustParseAddr("169.254.7.1"), AllowRemote: true,
			Connections: 7, Rate: 1500.5, Arrivals: Uniform, MaxConnections: 900,
			Requests: 12345, Duration: 1500 * time.Millisecond, Timeout: 3 * time.Second, Seed: 42,
		},
		Wait: 250 * time.Millisecond, Probe: 3, Within: 2 * time.Second,
		Procs: 2, Out: "/tmp/out dir", JSON: true, Quiet: true,
	}
}

func TestSpecJSONRoundTrip(t *testing.T) {
	for name, s := range map[string]Spec{
		"full":    fullSpec(t),
		"default": DefaultSpec(),
		"unix": {Options: Options{Target: Target{Network: "unix", Address: "/tmp/go.sock", Host: "localhost", Path: "/p?q=1"},
			Rate: 10, Connections: 0, Seed: 0}, Procs: 1},
		"tls": tlsSpec(),
		"tls 1.3 defaults": {Options: Options{Target: Target{Network: "tcp", Address: "127.0.0.1:8443", Host: "127.0.0.1:8443", Path: "/", TLS: true},
			TLS: TLS{CA: "/run/tls-cert.pem"}, Connections: 1}, Procs: 1},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := json.Marshal(s)
			require.NoError(t, err)
			got, err := ReadSpec(bytes.NewReader(b))
			require.NoError(t, err, string(b))
			assert.Equal(t, s, got, string(b))
		})
	}
}

// tlsSpec is a spec with every TLS field and the close option set.
func tlsSpec() Spec {
	s := DefaultSpec()
	s.Target = Target{Network: "tcp", Address: "127.0.0.1:8443", Host: "localhost:8443", Path: "/", TLS: true}
	s.TLS = TLS{CA: "/run/tls-cert.pem", ServerName: "localhost", Settings: tlscert.Settings{Key: tlscert.RSA2048, Version: tlscert.TLS12, Resume: true}}
	s.Close, s.Goroutines = true, true
	return s
}

// testCert is a fresh self-signed certificate and key for 127.0.0.1.
func testCert(t *testing.T) tlscert.Pair {
	t.Helper()
	p, err := tlscert.Generate(t.TempDir(), tlscert.P256)
	require.NoError(t, err)
	return p
}

// TestSpecJSONForm pins the keys and value forms: the load command's flag
// names, durations as Go duration strings. A rename breaks recorded specs.
func TestSpecJSONForm(t *testing.T) {
	b, err := json.Marshal(fullSpec(t))
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"target": "http://169.254.7.1:8081/x?a=1", "allow": "169.254.7.1", "allow-remote": true,
		"connections": 7, "rate": 1500.5, "arrivals": "uniform", "max-connections": 900,
		"requests": 12345, "duration": "1.5s", "timeout": "3s", "seed": 42,
		"wait": "250ms", "probe": 3, "within": "2s",
		"procs": 2, "out": "/tmp/out dir", "json": true, "quiet": true}`, string(b))

	// Every duration the spec carries, now and later, is written as a
	// string: a field added to Options without a string form fails here.
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m))
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if key == "-" || f.Type != reflect.TypeFor[time.Duration]() {
				continue
			}
			assert.IsType(t, "", m[key], "duration %s", key)
		}
	}
	walk(reflect.TypeFor[Spec]())

	b, err = json.Marshal(tlsSpec())
	require.NoError(t, err)
	assert.JSONEq(t, `{
		"target": "https://localhost:8443/", "connections": 10, "seed": 1, "procs": 1,
		"goroutines": true, "close": true, "tls-ca": "/run/tls-cert.pem", "tls-server-name": "localhost",
		"tls-version": "1.2", "tls-key-type": "rsa2048", "tls-resume": true}`, string(b))
}

func TestReadSpec(t *testing.T) {
	t.Run("left-out keys keep the defaults", func(t *testing.T) {
		s, err := ReadSpec(strings.NewReader(`{"target": "http://localhost:8080/", "rate": 100}`))
		require.NoError(t, err)
		want := DefaultSpec()
		want.Target = Target{Network: "tcp", Address: "127.0.0.1:8080", Host: "localhost:8080", Path: "/"}
		want.Rate = 100
		assert.Equal(t, want, s)
		require.NoError(t, s.Validate())
	})
	for _, tc := range []struct {
		in, field, msg string
	}{
		{`{"connections": "ten"}`, "connections", "want a JSON int"},
		{`{"seed": -1}`, "seed", "want a JSON uint64"},
		{`{"json": 1}`, "json", "want a JSON bool"},
		{`{"duration": "10"}`, "duration", `"10": want a Go duration`},
		{`{"timeout": 5}`, "timeout", "want a JSON string"},
		{`{"wait": "soon"}`, "wait", "want a Go duration"},
		{`{"within": "x"}`, "within", "want a Go duration"},
		{`{"target": "http://127.0.0.1:99999/"}`, "target", "port 99999: want 1 to 65535"},
		{`{"target": "http://127.0.0.1:0/"}`, "target", "port 0"},
		{`{"target": "ftp://127.0.0.1/"}`, "target", "want http://"},
		{`{"tls-ca": "x", "tls-version": "1.1"}`, "tls-version", `unknown TLS version "1.1"`},
		{`{"tls-key-type": "ed25519"}`, "tls-key-type", `unknown TLS key type "ed25519"`},
		{`{"tls-ca": 1}`, "tls-ca", "want a JSON string"},
		{`{"tls-resume": "on"}`, "tls-resume", "want a JSON bool"},
		{`{"close": 1}`, "close", "want a JSON bool"},
		{`{"allow": "not-an-ip"}`, "allow", "not-an-ip"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ReadSpec(strings.NewReader(tc.in))
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	for _, in := range []string{`{"conections": 10}`, `{"connections": 1} {}`, ``, `[]`} {
		t.Run(in, func(t *testing.T) {
			_, err := ReadSpec(strings.NewReader(in))
			require.Error(t, err)
		})
	}
	_, err := ReadSpec(strings.NewReader(`{"conections": 10}`))
	assert.ErrorContains(t, err, `"conections"`, "an unknown key is named")
}

func TestSpecOptions(t *testing.T) {
	s := validSpec(t)
	s.Wait = 100 * time.Millisecond
	o := s.RunOptions()
	assert.Equal(t, "/?wait=100ms", o.Target.Path, "the wait goes to the server in the query")
	assert.Equal(t, "/", s.Target.Path, "the spec keeps its target")
	assert.Equal(t, DefaultDuration, o.Duration, "a run with no bound gets the default")
	s.Requests = 5
	assert.Zero(t, s.RunOptions().Duration)

	s.Requests, s.Probe, s.Within, s.Timeout = 0, 4, time.Second, 3*time.Second
	p := s.ProbeOptions()
	assert.Equal(t, ProbeOptions{Target: o.Target, Requests: 4, Wait: s.Wait, Within: time.Second, Timeout: 3 * time.Second}, p)

	// Options and Spec are one: any Options is a spec's.
	full := fullSpec(t)
	assert.Equal(t, full.Options, Spec{Options: full.Options}.Options)
}

func TestSpecRunNoneSucceeded(t *testing.T) {
	// A port nothing listens on: every request is a connect error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	errSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer errSrv.Close()
	okSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer okSrv.Close()

	for _, tc := range []struct {
		name, url string
		fails     bool
	}{
		{"connection refused", "http://" + addr + "/", true},
		{"every answer 500", errSrv.URL + "/", true},
		{"answered", okSrv.URL + "/", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSpec()
			s.Target, err = ParseTarget(tc.url)
			require.NoError(t, err)
			s.Connections, s.Requests, s.Quiet, s.JSON = 2, 20, true, true
			s.Out = filepath.Join(t.TempDir(), "out")
			var stdout, stderr bytes.Buffer
			res, err := s.Run(context.Background(), &stdout, &stderr)
			require.NotNil(t, res)
			var sum Summary
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &sum), "the summary is printed either way")
			assert.FileExists(t, filepath.Join(s.Out, "summary.json"))
			assert.Empty(t, stderr.String())
			if !tc.fails {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrNoneSucceeded)
			assert.NotContains(t, err.Error(), "\n")
			assert.Positive(t, sum.Errors.Total())
		})
	}
}

func TestSpecRunInvalid(t *testing.T) {
	s := DefaultSpec()
	s.Out = filepath.Join(t.TempDir(), "never")
	_, err := s.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{})
	var fe *FieldError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "target", fe.Field)
	_, serr := os.Stat(s.Out)
	assert.True(t, os.IsNotExist(serr), "nothing is written for an invalid spec")
}

// TestCheckAllow: which addresses besides loopback load may go to, with
// and without the remote opt-in, and the flag each refusal names.
func TestCheckAllow(t *testing.T) {
	for _, tc := range []struct {
		addr   string // "" for none
		remote bool
		field  string // "" when accepted
		is     error
	}{
		{"", false, "", nil},
		{"169.254.3.1", false, "", nil},
		{"fe80::1", false, "", nil},
		{"10.0.0.2", false, "allow", ErrNotLoopback},
		{"192.0.2.7", false, "allow", ErrNotLoopback},
		{"2001:db8::2", false, "allow", ErrNotLoopback},
		{"", true, "allow-remote", nil},
		{"169.254.3.1", true, "", nil},
		{"10.0.0.2", true, "", nil},
		{"192.0.2.7", true, "", nil},
		{"2001:db8::2", true, "", nil},
		{"127.0.0.1", true, "allow", ErrRemote},
		{"::1", true, "allow", ErrRemote},
		{"0.0.0.0", true, "allow", ErrRemote},
		{"::", true, "allow", ErrRemote},
		{"224.0.0.1", true, "allow", ErrRemote},
		{"ff02::1", true, "allow", ErrRemote},
		{"255.255.255.255", true, "allow", ErrRemote},
	} {
		t.Run(fmt.Sprintf("%s remote=%v", tc.addr, tc.remote), func(t *testing.T) {
			var a netip.Addr
			if tc.addr != "" {
				a = netip.MustParseAddr(tc.addr)
			}
			err := CheckAllow(a, tc.remote)
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Field)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			if tc.field == "allow" && !tc.remote {
				assert.Contains(t, err.Error(), "-allow-remote", "the refusal says how to opt in")
			}
		})
	}
}

// TestRunAllowedOffLink: an allowed link-local address is dialled only
// where it is on a link of this network namespace; here (no veth with
// that address) the run is refused before it connects. The sweep's
// isolated runs (cmd/topobench's TestCompareBuiltin) cover the other side.
func TestRunAllowedOffLink(t *testing.T) {
	allow := netip.MustParseAddr("169.254.201.9")
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.Contains(net.IP(allow.AsSlice())) {
			t.Skipf("%s is on a link here (%s)", allow, n)
		}
	}
	tg, err := ParseTargetAllow("http://169.254.201.9:8080/", allow)
	require.NoError(t, err)
	s := DefaultSpec()
	s.Target, s.Allow, s.Requests = tg, allow, 1
	require.NoError(t, s.Validate(), "well-formed; where it may go is the run's question")
	var fe *FieldError
	_, err = s.Run(context.Background(), &bytes.Buffer{}, &bytes.Buffer{})
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "allow", fe.Field)
	assert.ErrorIs(t, err, ErrNotLoopback)
	_, err = Probe(context.Background(), ProbeOptions{Target: tg, Allow: allow, Requests: 1, Wait: time.Second})
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "allow", fe.Field)
}

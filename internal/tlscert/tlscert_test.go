package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGenerateAlso: the server end of a run's own namespace is a name of
// the certificate too, beside loopback.
func TestGenerateAlso(t *testing.T) {
	p, err := Generate(t.TempDir(), P256, netip.MustParseAddr("169.254.77.1"))
	require.NoError(t, err)
	cert := parseCert(t, p.Cert)
	for _, host := range []string{"127.0.0.1", "::1", "localhost", "169.254.77.1"} {
		assert.NoError(t, cert.VerifyHostname(host))
	}
	assert.Error(t, cert.VerifyHostname("169.254.77.2"))
}

func TestGenerate(t *testing.T) {
	for _, tc := range []struct {
		key  Key
		algo x509.PublicKeyAlgorithm
	}{
		{P256, x509.ECDSA},
		{RSA2048, x509.RSA},
	} {
		t.Run(tc.key.String(), func(t *testing.T) {
			dir := t.TempDir()
			before := time.Now()
			p, err := Generate(dir, tc.key)
			require.NoError(t, err)
			assert.Equal(t, Pair{filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)}, p)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Len(t, entries, 2, "writes nothing else")

			ki, err := os.Stat(p.Key)
			require.NoError(t, err)
			assert.Equal(t, os.FileMode(0o600), ki.Mode().Perm())
			ci, err := os.Stat(p.Cert)
			require.NoError(t, err)
			assert.Zero(t, ci.Mode().Perm()&0o022, "certificate writable by others: %v", ci.Mode())

			cert := parseCert(t, p.Cert)
			assert.Equal(t, tc.algo, cert.PublicKeyAlgorithm)
			assert.Equal(t, []string{"localhost"}, cert.DNSNames)
			require.Len(t, cert.IPAddresses, 2)
			assert.True(t, cert.IPAddresses[0].Equal(net.IPv4(127, 0, 0, 1)))
			assert.True(t, cert.IPAddresses[1].Equal(net.IPv6loopback))
			for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
				assert.NoError(t, cert.VerifyHostname(host))
			}
			assert.True(t, cert.NotBefore.Before(before))
			assert.WithinDuration(t, before.Add(Validity), cert.NotAfter, time.Minute)
			assert.Contains(t, cert.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
			require.NoError(t, cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature), "self-signed")

			pair, err := tls.LoadX509KeyPair(p.Cert, p.Key)
			require.NoError(t, err, "key matches certificate")
			switch k := pair.PrivateKey.(type) {
			case *ecdsa.PrivateKey:
				assert.Equal(t, P256, tc.key)
				assert.Equal(t, elliptic.P256(), k.Curve)
			case *rsa.PrivateKey:
				assert.Equal(t, RSA2048, tc.key)
				assert.Equal(t, 2048, k.N.BitLen())
			default:
				t.Fatalf("key of type %T", k)
			}
		})
	}
}

func parseCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	block, rest := pem.Decode(b)
	require.NotNil(t, block)
	assert.Empty(t, rest)
	assert.Equal(t, "CERTIFICATE", block.Type)
	cert, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	return cert
}

func TestGenerateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
		want string
	}{
		{"existing files", func(t *testing.T) string {
			dir := t.TempDir()
			_, err := Generate(dir, P256)
			require.NoError(t, err)
			return dir
		}, "already exists"},
		{"missing directory", func(t *testing.T) string {
			return filepath.Join(t.TempDir(), "nope")
		}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tc.dir(t), P256)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		key     Key
		version Version
		keyErr  bool
		verErr  bool
	}{
		{in: "p256", key: P256, verErr: true},
		{in: "P256", key: P256, verErr: true},
		{in: "rsa2048", key: RSA2048, verErr: true},
		{in: "1.3", version: TLS13, keyErr: true},
		{in: "1.2", version: TLS12, keyErr: true},
		{in: "", keyErr: true, verErr: true},
		{in: "ed25519", keyErr: true, verErr: true},
		{in: "1.1", keyErr: true, verErr: true},
		{in: "tls1.3", keyErr: true, verErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			k, err := ParseKey(tc.in)
			if tc.keyErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"`+tc.in+`"`)
				assert.Contains(t, err.Error(), "p256 or rsa2048")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.key, k)
			}
			v, err := ParseVersion(tc.in)
			if tc.verErr {
				require.Error(t, err)
				assert.Contains(t, err.Error(), `"`+tc.in+`"`)
				assert.Contains(t, err.Error(), "1.3 or 1.2")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tc.version, v)
			}
		})
	}
}

func TestSettingsNames(t *testing.T) {
	for _, tc := range []struct {
		s                      Settings
		goName, openssl, proto string
	}{
		{Settings{}, "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLSv1.3"},
		{Settings{Key: RSA2048}, "TLS_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256", "TLSv1.3"},
		{Settings{Version: TLS12}, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256", "TLSv1.2"},
		{Settings{Version: TLS12, Key: RSA2048}, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "TLSv1.2"},
	} {
		t.Run(tc.s.String(), func(t *testing.T) {
			assert.Equal(t, tc.goName, tc.s.GoCipher())
			assert.Equal(t, tc.openssl, tc.s.OpenSSLCipher())
			assert.Equal(t, tc.proto, tc.s.NginxProtocols())
			assert.Equal(t, "X25519", tc.s.OpenSSLGroup())
		})
	}
	assert.Equal(t, "TLS 1.3, p256, resume off", Settings{}.String())
	assert.Error(t, Settings{Key: 7}.Check())
	assert.Error(t, Settings{Version: 7}.Check())
}

// handshake runs one connection over a pipe: the server handshakes and
// writes a byte (after which a TLS 1.3 ticket has been sent), the client
// handshakes and reads it.
func handshake(t *testing.T, srv, cli *tls.Config) (tls.ConnectionState, error, error) {
	t.Helper()
	sc, cc := net.Pipe()
	deadline := time.Now().Add(10 * time.Second)
	sc.SetDeadline(deadline)
	cc.SetDeadline(deadline)
	serr := make(chan error, 1)
	go func() {
		s := tls.Server(sc, srv)
		defer sc.Close() // not s.Close: its close_notify would wait for a reader
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte("x"))
		}
		serr <- err
	}()
	c := tls.Client(cc, cli)
	err := c.Handshake()
	if err == nil {
		_, err = c.Read(make([]byte, 1))
	}
	cc.Close()
	return c.ConnectionState(), err, <-serr
}

func TestServerConfig(t *testing.T) {
	keys := map[Key]Pair{}
	for _, k := range []Key{P256, RSA2048} {
		p, err := Generate(t.TempDir(), k)
		require.NoError(t, err)
		keys[k] = p
	}
	for _, v := range []Version{TLS13, TLS12} {
		for _, k := range []Key{P256, RSA2048} {
			for _, resume := range []bool{false, true} {
				s := Settings{Key: k, Version: v, Resume: resume}
				t.Run(s.String(), func(t *testing.T) {
					srv, err := ServerConfig(keys[k].Cert, keys[k].Key, s)
					require.NoError(t, err)
					cli := &tls.Config{
						InsecureSkipVerify: true,
						NextProtos:         []string{"h2", "http/1.1"},
						ClientSessionCache: tls.NewLRUClientSessionCache(4),
					}
					for i, wantResumed := range []bool{false, resume} {
						cs, cerr, serr := handshake(t, srv, cli)
						require.NoError(t, cerr, "client, connection %d", i)
						require.NoError(t, serr, "server, connection %d", i)
						assert.Equal(t, s.GoVersion(), cs.Version)
						assert.Equal(t, s.Suite(), cs.CipherSuite, tls.CipherSuiteName(cs.CipherSuite))
						assert.Equal(t, "h2", cs.NegotiatedProtocol)
						assert.Equal(t, wantResumed, cs.DidResume, "connection %d resumed", i)
					}
				})
			}
		}
	}
}

func TestServerConfigRefuses(t *testing.T) {
	p, err := Generate(t.TempDir(), P256)
	require.NoError(t, err)
	srv, err := ServerConfig(p.Cert, p.Key, Settings{Version: TLS12})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		cli  *tls.Config
	}{
		{"version 1.3 only", &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}},
		{"another suite", &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS12,
			CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cerr, serr := handshake(t, srv, tc.cli)
			assert.Error(t, cerr)
			assert.Error(t, serr)
		})
	}

	t.Run("key of another type", func(t *testing.T) {
		_, err := ServerConfig(p.Cert, p.Key, Settings{Key: RSA2048})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "is p256, the settings want rsa2048")
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := ServerConfig(p.Cert+".no", p.Key, Settings{})
		require.Error(t, err)
		assert.True(t, errors.Is(err, os.ErrNotExist))
		assert.Contains(t, err.Error(), p.Cert+".no")
	})
}

func TestSettingsJSON(t *testing.T) {
	for _, s := range []Settings{{}, {Key: RSA2048, Version: TLS12, Resume: true}} {
		t.Run(s.String(), func(t *testing.T) {
			b, err := json.Marshal(s)
			require.NoError(t, err)
			var got Settings
			require.NoError(t, json.Unmarshal(b, &got))
			assert.Equal(t, s, got)
		})
	}
	b, err := json.Marshal(Settings{Key: RSA2048, Version: TLS12})
	require.NoError(t, err)
	assert.JSONEq(t, `{"key":"rsa2048","version":"1.2","resume":false}`, string(b))
	var s Settings
	assert.ErrorContains(t, json.Unmarshal([]byte(`{"key":"rsa4096"}`), &s), "rsa4096")
}

// TestClientConfig: the client trusts the run's certificate alone, ends on
// the settings' version and suite, and resumes only when they say so.
func TestClientConfig(t *testing.T) {
	for _, s := range []Settings{{}, {Key: RSA2048, Version: TLS12, Resume: true}, {Version: TLS12, Resume: true}} {
		t.Run(s.String(), func(t *testing.T) {
			p, err := Generate(t.TempDir(), s.Key)
			require.NoError(t, err)
			srv, err := ServerConfig(p.Cert, p.Key, s)
			require.NoError(t, err)
			cli, err := ClientConfig(p.Cert, s)
			require.NoError(t, err)
			cli.ServerName = "127.0.0.1"
			for i, wantResumed := range []bool{false, s.Resume} {
				cs, cerr, serr := handshake(t, srv, cli)
				require.NoError(t, cerr, "client, connection %d", i)
				require.NoError(t, serr, "server, connection %d", i)
				assert.Equal(t, s.Suite(), cs.CipherSuite)
				assert.Equal(t, wantResumed, cs.DidResume, "connection %d resumed", i)
			}
			other, err := Generate(t.TempDir(), s.Key)
			require.NoError(t, err)
			stranger, err := ClientConfig(other.Cert, s)
			require.NoError(t, err)
			stranger.ServerName = "127.0.0.1"
			_, cerr, _ := handshake(t, srv, stranger)
			assert.Error(t, cerr, "another run's certificate is not trusted")
		})
	}
	_, err := ClientConfig(filepath.Join(t.TempDir(), "none.pem"), Settings{})
	assert.ErrorContains(t, err, "reading tls certificate")
}

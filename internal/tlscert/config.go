package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ServerConfig loads certFile and keyFile and returns Go's server side of
// s: ALPN h2 then http/1.1, only s's version, only its cipher suite (a
// handshake that would end on another is refused), X25519, and session
// tickets only when s.Resume is on. The key must be of type s.Key.
func ServerConfig(certFile, keyFile string, s Settings) (*tls.Config, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("loading tls certificate %s and key %s: %w", certFile, keyFile, err)
	}
	if got := keyType(cert); got != s.Key.String() {
		return nil, fmt.Errorf("tls key %s is %s, the settings want %v", keyFile, got, s.Key)
	}
	suite := s.Suite()
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		NextProtos:   []string{"h2", "http/1.1"},
		MinVersion:   s.GoVersion(),
		MaxVersion:   s.GoVersion(),
		// Only TLS 1.2 heeds this list; VerifyConnection holds 1.3 to it.
		CipherSuites:           []uint16{suite},
		CurvePreferences:       []tls.CurveID{tls.X25519},
		SessionTicketsDisabled: !s.Resume,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.CipherSuite != suite {
				return fmt.Errorf("%w: %s, want %s", errSuite, tls.CipherSuiteName(cs.CipherSuite), tls.CipherSuiteName(suite))
			}
			return nil
		},
	}, nil
}

// keyType names the key of cert as Key.String does.
func keyType(cert tls.Certificate) string {
	switch k := cert.PrivateKey.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve == elliptic.P256() {
			return P256.String()
		}
		return "ECDSA " + k.Curve.Params().Name
	case *rsa.PrivateKey:
		if k.N.BitLen() == 2048 {
			return RSA2048.String()
		}
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	}
	return fmt.Sprintf("%T", cert.PrivateKey)
}

// Setup is what a run's servers terminate TLS with: the files Generate
// wrote and the settings both servers are configured from.
type Setup struct {
	Pair
	Settings Settings
}

// ClientConfig is a client's side of s that trusts only the certificate
// in certFile (the run's own, for 127.0.0.1, ::1 and localhost): s's
// version and cipher suite, X25519 (see CurvePreferences), no resumption unless s.Resume, and no
// ALPN (the caller sets NextProtos).
func ClientConfig(certFile string, s Settings) (*tls.Config, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	pem, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("reading tls certificate: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("reading tls certificate %s: no PEM certificate in it", certFile)
	}
	cfg := &tls.Config{
		RootCAs:      roots,
		MinVersion:   s.GoVersion(),
		MaxVersion:   s.GoVersion(),
		CipherSuites: []uint16{s.Suite()},
		// Both servers exchange keys on X25519 alone; P-256 is offered too
		// because OpenSSL serves a P-256 certificate over TLS 1.2 only to a
		// client that lists its curve.
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256},
	}
	if s.Resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	return cfg, nil
}

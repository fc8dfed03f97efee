package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/tls"
	"fmt"
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

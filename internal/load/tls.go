package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/topobench/topobench/internal/tlscert"
)

// TLS is the engine's TLS client, for an https:// target: it trusts the
// certificate in CA (the run's self-signed one) and speaks exactly the
// version and cipher suite of Settings (tlscert.Settings.Suite; a TLS 1.3
// suite is Go's own choice, which the servers hold to that one), X25519
// and ALPN http/1.1, with a session cache only when Settings.Resume is on.
// A connection's handshake is part of its connect: bounded by the
// timeout, a failure is a connect error.
//
// In a spec's JSON, as the load command's flags, it is
//
//	"tls-ca": "RUN/tls-cert.pem", "tls-server-name": "localhost",
//	"tls-version": "1.2", "tls-key-type": "rsa2048", "tls-resume": true
//
// where a key left out keeps the zero value: TLS 1.3, p256, no
// resumption, the server name the target's host.
type TLS struct {
	// CA is a PEM file of the certificates the server's must chain to.
	CA string
	// ServerName is checked against the server's certificate and sent
	// as SNI (default: the target's host).
	ServerName string
	// Settings are the run's: the version, the key type (which picks
	// the TLS 1.2 suite) and resumption.
	tlscert.Settings
}

// IsZero says no TLS is configured: a plain http:// target.
func (t TLS) IsZero() bool { return t == TLS{} }

// putTLS sets j's TLS keys from t (none when t is zero).
func (j *specJSON) putTLS(t TLS) {
	if t.IsZero() {
		return
	}
	str := func(v string) *string { return &v }
	j.TLSCA, j.TLSVersion, j.TLSKeyType = str(t.CA), str(t.Version.String()), str(t.Key.String())
	if t.ServerName != "" {
		j.TLSServerName = str(t.ServerName)
	}
	if t.Resume {
		j.TLSResume = &t.Resume
	}
}

// getTLS sets t from the TLS keys j read; errors name the key.
func (j *specJSON) getTLS(t *TLS) error {
	if j.TLSCA != nil {
		t.CA = *j.TLSCA
	}
	if j.TLSServerName != nil {
		t.ServerName = *j.TLSServerName
	}
	if j.TLSResume != nil {
		t.Resume = *j.TLSResume
	}
	var err error
	if j.TLSVersion != nil {
		if t.Version, err = tlscert.ParseVersion(*j.TLSVersion); err != nil {
			return &FieldError{"tls-version", err}
		}
	}
	if j.TLSKeyType != nil {
		if t.Key, err = tlscert.ParseKey(*j.TLSKeyType); err != nil {
			return &FieldError{"tls-key-type", err}
		}
	}
	return nil
}

// clientConfig checks t for target and builds its crypto/tls config.
// Errors are *FieldError naming a tls- key or the target.
func (t TLS) clientConfig(target Target) (*tls.Config, error) {
	if !target.TLS {
		if t.IsZero() {
			return nil, nil
		}
		return nil, fieldErr("tls-ca", "TLS applies to an https:// target only, not %s", target)
	}
	if t.CA == "" {
		return nil, fieldErr("tls-ca", "none given: an https:// target needs the CA file the server's certificate is checked against")
	}
	if err := (tlscert.Settings{Key: t.Key}).Check(); err != nil {
		return nil, &FieldError{"tls-key-type", err}
	}
	if err := t.Check(); err != nil {
		return nil, &FieldError{"tls-version", err}
	}
	caPEM, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fieldErr("tls-ca", "reading the CA file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fieldErr("tls-ca", "%s: no PEM certificate in it", t.CA)
	}
	name := t.ServerName
	if name == "" {
		if name, _, err = net.SplitHostPort(target.Address); err != nil {
			return nil, &FieldError{"target", err}
		}
	}
	cfg := &tls.Config{
		RootCAs:    roots,
		ServerName: name,
		MinVersion: t.GoVersion(),
		MaxVersion: t.GoVersion(),
		// Only TLS 1.2 heeds the list; Go picks the TLS 1.3 suites.
		CipherSuites: []uint16{t.Suite()},
		// The servers exchange keys on X25519 alone; P-256 is offered too
		// because OpenSSL (nginx) serves a P-256 certificate over TLS 1.2
		// only to a client that lists its curve.
		CurvePreferences: []tls.CurveID{tls.X25519, tls.CurveP256},
		NextProtos:       []string{"http/1.1"},
	}
	if t.Resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(0)
	}
	pinVerify(cfg, caPEM, roots, name)
	return cfg, nil
}

// pinVerify makes cfg accept a server certificate that is one of those in
// the CA file itself (the sweep's self-signed one) by comparing its bytes
// and checking its name, and any other only through roots: the same trust,
// without a chain to build and a signature to check a handshake, which
// under -close is client CPU the load spends on every request.
func pinVerify(cfg *tls.Config, pemData []byte, roots *x509.CertPool, name string) {
	var pinned [][]byte
	for rest := pemData; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			pinned = append(pinned, b.Bytes)
		}
	}
	cfg.InsecureSkipVerify = true // VerifyConnection verifies instead
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		leaf := cs.PeerCertificates[0]
		for _, raw := range pinned {
			if bytes.Equal(leaf.Raw, raw) {
				return leaf.VerifyHostname(name)
			}
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, DNSName: name})
		return err
	}
}

// handshake wraps the dialled nc in TLS and completes the handshake
// within the engine's timeout; nc is closed if it fails.
func (c *conn) handshake(nc net.Conn) (net.Conn, error) {
	e := c.e
	tc := tls.Client(nc, e.opt.tlsConfig)
	ctx, cancel := context.WithTimeout(e.ctx, e.opt.Timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("tls handshake: %w", err)
	}
	c.hsResumed = tc.ConnectionState().DidResume
	return tc, nil
}

// countHandshake counts the handshake of the connection's last dial, in
// the measured time.
func (c *conn) countHandshake() {
	if c.hsNs == 0 {
		return
	}
	c.handshakes.Add(1)
	c.handshakeNs.Add(c.hsNs)
	if c.hsResumed {
		c.resumed.Add(1)
	}
}

// netConn is the TCP (or unix) connection under nc, through TLS.
func netConn(nc net.Conn) net.Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return nc
}

// errTLSLoops: the event loops speak plain TCP on their raw descriptors.
var errTLSLoops = errors.New("an https:// target needs a goroutine per connection (goroutines) or open mode: the event loops speak plain TCP on raw descriptors, not TLS")

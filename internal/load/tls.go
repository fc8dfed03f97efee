package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
// In JSON (the spec's "tls" key) it is
//
//	{"ca": "RUN/tls-cert.pem", "server-name": "localhost",
//	 "version": "1.2", "key": "rsa2048", "resume": true}
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

type tlsJSON struct {
	CA         string `json:"ca"`
	ServerName string `json:"server-name,omitempty"`
	Version    string `json:"version,omitempty"`
	Key        string `json:"key,omitempty"`
	Resume     bool   `json:"resume,omitempty"`
}

// MarshalJSON writes t in the form described at TLS.
func (t TLS) MarshalJSON() ([]byte, error) {
	return json.Marshal(tlsJSON{CA: t.CA, ServerName: t.ServerName, Version: t.Version.String(), Key: t.Key.String(), Resume: t.Resume})
}

// UnmarshalJSON reads the form MarshalJSON writes; errors name the key
// (a *FieldError "tls.KEY").
func (t *TLS) UnmarshalJSON(b []byte) error {
	var j tlsJSON
	if err := strictJSON(b, &j); err != nil {
		return &FieldError{"tls", err}
	}
	v := TLS{CA: j.CA, ServerName: j.ServerName, Settings: tlscert.Settings{Resume: j.Resume}}
	var err error
	if j.Version != "" {
		if v.Version, err = tlscert.ParseVersion(j.Version); err != nil {
			return &FieldError{"tls.version", err}
		}
	}
	if j.Key != "" {
		if v.Key, err = tlscert.ParseKey(j.Key); err != nil {
			return &FieldError{"tls.key", err}
		}
	}
	*t = v
	return nil
}

// clientConfig checks t for target and builds its crypto/tls config.
// Errors are *FieldError naming "tls" or "target".
func (t TLS) clientConfig(target Target) (*tls.Config, error) {
	if !target.TLS {
		if t.IsZero() {
			return nil, nil
		}
		return nil, fieldErr("tls", "applies to an https:// target only, not %s", target)
	}
	if t.CA == "" {
		return nil, fieldErr("tls", "an https:// target needs the CA file the server's certificate is checked against (tls.ca)")
	}
	if err := t.Check(); err != nil {
		return nil, &FieldError{"tls", err}
	}
	pem, err := os.ReadFile(t.CA)
	if err != nil {
		return nil, fieldErr("tls.ca", "reading the CA file: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fieldErr("tls.ca", "%s: no PEM certificate in it", t.CA)
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
	return cfg, nil
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
var errTLSLoops = errors.New("the event loops speak plain TCP on raw descriptors: TLS needs a goroutine per connection (goroutines) or open mode")

// strictJSON decodes b into v, refusing unknown keys.
func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Package tlscert makes what a run needs to terminate TLS: a fresh
// self-signed server certificate and its key, and the TLS settings both
// servers (Go's crypto/tls in cmd/hello, OpenSSL in nginx) are configured
// from, so that a comparison of the two compares only who terminates.
//
// Generate writes, into the directory it is given (a run's directory; it
// writes nowhere else), CertFile and KeyFile as PEM: a certificate for
// 127.0.0.1, ::1 and localhost, valid from an hour ago for Validity, with a
// P-256 (the default) or RSA 2048 key. The key file is 0600 and neither
// file is overwritten: a run generates its own.
//
// Settings is one TLS configuration: the key type, the protocol version
// (1.3, the default, or 1.2, and only that version), session resumption
// (on or off) and, from those, the one cipher suite both sides use:
//
//	version  key    Go (IANA) name                           OpenSSL name
//	1.3      any    TLS_AES_128_GCM_SHA256                   TLS_AES_128_GCM_SHA256
//	1.2      p256   TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256  ECDHE-ECDSA-AES128-GCM-SHA256
//	1.2      rsa    TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256    ECDHE-RSA-AES128-GCM-SHA256
//
// The key exchange is X25519 on both sides (Go would otherwise prefer a
// post-quantum hybrid that not every OpenSSL has). ServerConfig gives Go's
// server side; nginx's side renders from the same Settings through
// NginxProtocols (ssl_protocols), OpenSSLCipher (ssl_ciphers for 1.2,
// ssl_conf_command Ciphersuites for 1.3), OpenSSLGroup (ssl_ecdh_curve) and
// Resume (ssl_session_tickets and ssl_session_cache). Go's server has no
// session cache: with Resume on it resumes by tickets only.
//
// Go's crypto/tls does not let a TLS 1.3 server restrict its suites; on a
// CPU with AES instructions it prefers TLS_AES_128_GCM_SHA256 when the
// client leads with an AES-GCM suite (OpenSSL's clients do), and
// ServerConfig refuses any handshake that would end on another suite, so a
// measurement never runs on a different one unnoticed.
//
// ParseKey and ParseVersion read flag values (Key and Version are also
// flag.Values); a bad value is one error naming it.
package tlscert

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
)

// Key is the type of the server's key.
type Key int

const (
	// P256 is ECDSA on NIST P-256, the default.
	P256 Key = iota
	// RSA2048 is RSA with a 2048-bit modulus.
	RSA2048
)

// String is the flag value of k: p256 or rsa2048.
func (k Key) String() string {
	switch k {
	case P256:
		return "p256"
	case RSA2048:
		return "rsa2048"
	}
	return fmt.Sprintf("Key(%d)", int(k))
}

// ParseKey reads a key type: p256 or rsa2048.
func ParseKey(s string) (Key, error) {
	switch strings.ToLower(s) {
	case "p256":
		return P256, nil
	case "rsa2048":
		return RSA2048, nil
	}
	return 0, fmt.Errorf("unknown TLS key type %q (want p256 or rsa2048)", s)
}

// Set makes *Key a flag.Value.
func (k *Key) Set(s string) error {
	v, err := ParseKey(s)
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// MarshalText records k by its flag value, as env.json names it.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (k *Key) UnmarshalText(b []byte) error { return k.Set(string(b)) }

// Version is the one TLS protocol version a server speaks.
type Version int

const (
	// TLS13 is TLS 1.3, the default.
	TLS13 Version = iota
	// TLS12 is TLS 1.2.
	TLS12
)

// String is the flag value of v: 1.3 or 1.2.
func (v Version) String() string {
	switch v {
	case TLS13:
		return "1.3"
	case TLS12:
		return "1.2"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// ParseVersion reads a TLS version: 1.3 or 1.2.
func ParseVersion(s string) (Version, error) {
	switch s {
	case "1.3":
		return TLS13, nil
	case "1.2":
		return TLS12, nil
	}
	return 0, fmt.Errorf("unknown TLS version %q (want 1.3 or 1.2)", s)
}

// Set makes *Version a flag.Value.
func (v *Version) Set(s string) error {
	p, err := ParseVersion(s)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// MarshalText records v by its flag value, as env.json names it.
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads what MarshalText wrote.
func (v *Version) UnmarshalText(b []byte) error { return v.Set(string(b)) }

// Settings is the TLS configuration of one run, the same for both servers.
// The zero value is TLS 1.3 with a P-256 key and no resumption.
type Settings struct {
	Key     Key     `json:"key"`
	Version Version `json:"version"`
	// Resume turns session resumption on: tickets (both servers) and
	// nginx's shared session cache.
	Resume bool `json:"resume"`
}

// Check reports settings no server can use.
func (s Settings) Check() error {
	if s.Key != P256 && s.Key != RSA2048 {
		return fmt.Errorf("tls settings: unknown key type %v", s.Key)
	}
	if s.Version != TLS13 && s.Version != TLS12 {
		return fmt.Errorf("tls settings: unknown version %v", s.Version)
	}
	return nil
}

// String describes s in flag values, e.g. "TLS 1.3, p256, resume off".
func (s Settings) String() string {
	r := "off"
	if s.Resume {
		r = "on"
	}
	return fmt.Sprintf("TLS %v, %v, resume %s", s.Version, s.Key, r)
}

// GoVersion is crypto/tls's constant for the version.
func (s Settings) GoVersion() uint16 {
	if s.Version == TLS12 {
		return tls.VersionTLS12
	}
	return tls.VersionTLS13
}

// NginxProtocols is the value of nginx's ssl_protocols: TLSv1.3 or TLSv1.2.
func (s Settings) NginxProtocols() string {
	if s.Version == TLS12 {
		return "TLSv1.2"
	}
	return "TLSv1.3"
}

// Suite is crypto/tls's id of the cipher suite.
func (s Settings) Suite() uint16 {
	switch {
	case s.Version == TLS13:
		return tls.TLS_AES_128_GCM_SHA256
	case s.Key == RSA2048:
		return tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
	}
	return tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
}

// GoCipher is Go's (the IANA) name of the cipher suite.
func (s Settings) GoCipher() string { return tls.CipherSuiteName(s.Suite()) }

// OpenSSLCipher is OpenSSL's name of the cipher suite: for TLS 1.3 the
// value of Ciphersuites (ssl_conf_command), for TLS 1.2 of ssl_ciphers.
func (s Settings) OpenSSLCipher() string {
	switch {
	case s.Version == TLS13:
		return "TLS_AES_128_GCM_SHA256"
	case s.Key == RSA2048:
		return "ECDHE-RSA-AES128-GCM-SHA256"
	}
	return "ECDHE-ECDSA-AES128-GCM-SHA256"
}

// OpenSSLGroup is OpenSSL's name of the key exchange group (ssl_ecdh_curve).
func (s Settings) OpenSSLGroup() string { return "X25519" }

// errSuite marks a handshake refused for ending on another suite.
var errSuite = errors.New("cipher suite not the configured one")

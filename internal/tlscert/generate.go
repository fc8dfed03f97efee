package tlscert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"time"
)

// File names Generate writes in its directory.
const (
	CertFile = "tls-cert.pem"
	KeyFile  = "tls-key.pem"
)

// Validity is how long a generated certificate stays valid: far longer
// than a run, short enough that a leftover one is useless.
const Validity = 7 * 24 * time.Hour

// Pair is the paths of a generated certificate and its key.
type Pair struct {
	Cert, Key string
}

// Generate writes a new self-signed certificate for 127.0.0.1, ::1,
// localhost and the addresses also given (the server end of a run's own
// network namespace) and its private key (PKCS #8, mode 0600) into dir,
// as CertFile and KeyFile. It refuses to overwrite either.
func Generate(dir string, k Key, also ...netip.Addr) (Pair, error) {
	priv, err := newKey(k)
	if err != nil {
		return Pair{}, err
	}
	der, err := selfSign(priv, time.Now(), also)
	if err != nil {
		return Pair{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return Pair{}, fmt.Errorf("encoding tls key: %w", err)
	}
	p := Pair{Cert: filepath.Join(dir, CertFile), Key: filepath.Join(dir, KeyFile)}
	if err := writePEM(p.Key, 0o600, "PRIVATE KEY", keyDER); err != nil {
		return Pair{}, err
	}
	if err := writePEM(p.Cert, 0o644, "CERTIFICATE", der); err != nil {
		os.Remove(p.Key) // ours: created just above
		return Pair{}, err
	}
	return p, nil
}

func newKey(k Key) (crypto.Signer, error) {
	var (
		priv crypto.Signer
		err  error
	)
	switch k {
	case P256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	default:
		return nil, fmt.Errorf("generating tls key: unknown key type %v", k)
	}
	if err != nil {
		return nil, fmt.Errorf("generating %v tls key: %w", k, err)
	}
	return priv, nil
}

func selfSign(priv crypto.Signer, now time.Time, also []netip.Addr) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("tls certificate serial: %w", err)
	}
	usage := x509.KeyUsageDigitalSignature
	if _, ok := priv.(*rsa.PrivateKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"topobench"}},
		NotBefore:             now.Add(-time.Hour), // a skewed peer clock
		NotAfter:              now.Add(Validity),
		KeyUsage:              usage,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, a := range also {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.IP(a.AsSlice()))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, priv.Public(), priv)
	if err != nil {
		return nil, fmt.Errorf("signing tls certificate: %w", err)
	}
	return der, nil
}

// writePEM creates path with mode perm (never replacing a file) and writes
// one PEM block into it.
func writePEM(path string, perm fs.FileMode, typ string, der []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("writing %s: already exists (a run generates its own)", path)
	}
	if err != nil {
		return fmt.Errorf("writing tls file: %w", err)
	}
	err = pem.Encode(f, &pem.Block{Type: typ, Bytes: der})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

package nginxconf

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/topobench/topobench/internal/tlscert"
)

// TLS is what the TLS vhosts are rendered with: the run's certificate
// (tlscert.Generate) and the Settings Go's HTTPS listener is given too,
// so that both servers offer one protocol, one cipher suite, one key
// exchange group and the same resumption.
type TLS struct {
	// Cert and Key are the PEM files of the run's certificate, absolute
	// or relative to the prefix; empty is tlscert.CertFile and
	// tlscert.KeyFile in the prefix, where Generate(prefix) writes them.
	Cert, Key string
	// Settings are the run's; the zero value is TLS 1.3 without
	// resumption.
	Settings tlscert.Settings
}

// tlsVhost is what nginx/tls.tmpl sees.
type tlsVhost struct {
	// Settings says it for people ("TLS 1.3, p256, resume off").
	Settings string
	// Protocol is ssl_protocols' value; Cert and Key absolute paths.
	Protocol, Cert, Key string
	// TLS13 puts Suite in ssl_conf_command Ciphersuites rather than
	// ssl_ciphers; Suite is OpenSSL's name of the one cipher suite,
	// Group of the key exchange group.
	TLS13        bool
	Suite, Group string
	Resume       bool
	// Zone names the vhost's session cache.
	Zone string
}

// opensslName is what an OpenSSL cipher, suite or group name is made of;
// it also keeps a name from ending the directive it is written into.
var opensslName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func (c TLS) vhost(prefix, name string) (tlsVhost, error) {
	s := c.Settings
	if err := s.Check(); err != nil {
		return tlsVhost{}, err
	}
	v := tlsVhost{
		Settings: s.String(), Protocol: s.NginxProtocols(), TLS13: s.Version == tlscert.TLS13,
		Suite: s.OpenSSLCipher(), Group: s.OpenSSLGroup(), Resume: s.Resume,
		Zone: strings.NewReplacer(".", "_", "-", "_").Replace(name),
	}
	for _, n := range []string{v.Suite, v.Group} {
		if !opensslName.MatchString(n) {
			return tlsVhost{}, fmt.Errorf("TLS name %q is not an OpenSSL name", n)
		}
	}
	for _, f := range []struct {
		dst       *string
		path, def string
	}{{&v.Cert, c.Cert, tlscert.CertFile}, {&v.Key, c.Key, tlscert.KeyFile}} {
		p := f.path
		if p == "" {
			p = f.def
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(prefix, p)
		}
		if strings.ContainsAny(p, " \t\r\n;{}\"'$#") {
			return tlsVhost{}, fmt.Errorf("TLS file %q: want a path without spaces, quotes or ;{}$#", p)
		}
		*f.dst = p
	}
	return v, nil
}

// Package nginxfiles holds the nginx configuration that fronts cmd/hello:
// nginx.conf, one vhost file per topology (named as topology.Vhost),
// tls.tmpl (the TLS half the go.tls.* vhosts share), fastcgi_params, and
// the body the nginx-static reference serves. The files
// are Go text/template sources; internal/nginxconf renders them, and the
// harness runs exactly what it renders, so this directory is the single
// source of truth for what nginx does during a run.
package nginxfiles

import "embed"

// FS holds the template files, at the root of the file system.
//
//go:embed nginx.conf fastcgi_params hello go.http go.http.unix go.fcgi.tcp go.fcgi.unix go.fcgi.fast.tcp go.fcgi.fast.unix nginx.return nginx.static go.tls.http go.tls.http.unix tls.tmpl
var FS embed.FS

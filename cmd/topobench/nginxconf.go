package main

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/internal/topology"
)

// runNginxConf writes the nginx configuration the harness runs, rendered for
// the reference layout (HTTP :8080, FastCGI :9001, /tmp/go.sock, vhosts on
// 8081 and up), so it can be read or installed. With nginx present the
// result is checked with nginx -t.
func runNginxConf(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nginx-conf", stderr)
	out := fs.String("out", "nginx-conf", "directory to write into (created; becomes nginx's prefix)")
	sockDir := fs.String("sockdir", "/tmp", "directory of cmd/hello's unix sockets")
	host := fs.String("host", "", "address clients dial (a cluster's server node): the vhosts then listen on every address, as in a namespace of the run's own; default loopback only")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: topobench nginx-conf [-out DIR] [-sockdir DIR] [-host ADDR]")
		fmt.Fprintln(stderr, "\nWrites nginx.conf, one vhost file per topology, fastcgi_params and the\nstatic body into DIR, then checks them with nginx -t when nginx is installed.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return usageError("nginx-conf: -out must name a directory")
	}
	dir, err := filepath.Abs(*out)
	if err != nil {
		return fmt.Errorf("nginx-conf: -out %s: %w", *out, err)
	}
	l := topology.DefaultLayout(*sockDir)
	if *host != "" {
		if _, err := netip.ParseAddr(*host); err != nil {
			return usageError("nginx-conf: -host %q: not an IP address", *host)
		}
		l.Host = *host
	}
	p, err := nginxconf.DefaultParams(l)
	if err != nil {
		return fmt.Errorf("nginx-conf: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("nginx-conf: -out %s: %w", *out, err)
	}
	if err := nginxconf.Render(dir, p); err != nil {
		return fmt.Errorf("nginx-conf: %w", err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", dir)
	fmt.Fprintf(stdout, "run:  nginx -p %s -c %s -g 'daemon off;'\n", dir, filepath.Join(dir, "nginx.conf"))
	bin, err := nginx.Find()
	if err != nil {
		fmt.Fprintf(stdout, "not checked: %v\n", err)
		return nil
	}
	if err := nginx.Test(ctx, bin, dir); err != nil {
		return fmt.Errorf("nginx-conf: %w", err)
	}
	fmt.Fprintf(stdout, "checked: %s -t accepts it\n", bin)
	return nil
}

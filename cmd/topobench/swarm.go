package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cluster"
	"github.com/topobench/topobench/internal/cluster/swarm"
	"github.com/topobench/topobench/internal/hellorun"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/sweep"
)

// swarmFlags are compare's flags for a sweep on a Docker Swarm.
type swarmFlags struct {
	on        *bool
	engines   *string
	image     *string
	base      *string
	lead      *time.Duration
	tolerance *time.Duration
	allow     *string
	// cfg and allowAddr are -swarm-engines and -swarm-allow, parsed.
	cfg       swarm.Config
	allowAddr netip.Addr
}

func addSwarmFlags(fs *flag.FlagSet) *swarmFlags {
	return &swarmFlags{
		on:        fs.Bool("swarm", false, "run on the Docker Swarm whose manager this engine is: the servers on the node labelled topobench.role=server, the load (-load builtin) from every node labelled topobench.role=load (docs/cluster.md)"),
		engines:   fs.String("swarm-engines", "", "comma-separated NODE=ENGINE pairs, how to reach each other node's Docker engine (ssh://user@host, tcp://, unix://) to place the image and read its clock; NODE is its ID or hostname"),
		image:     fs.String("swarm-image", "", "an image already on the manager's engine holding hello, procd, topobench and nginx (default: built from this checkout on -swarm-base)"),
		base:      fs.String("swarm-base", swarm.DefaultBase, "the Debian image the servers' image is built on (compose/base-images.sh makes the default)"),
		lead:      fs.Duration("swarm-lead", 0, "how far ahead of the load jobs' creation their common start lies (default "+cluster.DefaultLead.String()+")"),
		tolerance: fs.Duration("swarm-tolerance", 0, "how much later than the common start a load node may begin before its run fails (default "+cluster.DefaultTolerance.String()+")"),
		allow:     fs.String("swarm-allow", "", "the server node's address, which must equal the one the swarm reports for it (docker node inspect: Status.Addr): needed when that address is routable (real machines), and then the only address besides loopback the load jobs may send to (load -allow-remote)"),
	}
}

// set reports whether any -swarm-* flag was given without -swarm.
func (f *swarmFlags) stray(fs *flag.FlagSet) string {
	var bad string
	fs.Visit(func(fl *flag.Flag) {
		if strings.HasPrefix(fl.Name, "swarm-") && !*f.on && bad == "" {
			bad = "-" + fl.Name
		}
	})
	return bad
}

// parse reads -swarm-allow and -swarm-engines, before the plan is
// checked: a typo is named before the rules of a cluster.
func (f *swarmFlags) parse() error {
	if *f.allow != "" {
		a, err := netip.ParseAddr(*f.allow)
		if err != nil {
			return usageError("-swarm-allow %q: not an IP address (the server node's, as docker node inspect shows it)", *f.allow)
		}
		f.allowAddr = a
	}
	f.cfg = swarm.Config{Engines: map[string]string{}}
	for _, pair := range plan.ParseList(*f.engines) {
		node, addr, ok := strings.Cut(pair, "=")
		if !ok || node == "" || addr == "" {
			return usageError("-swarm-engines: %q is not NODE=ENGINE", pair)
		}
		f.cfg.Engines[node] = addr
	}
	return nil
}

// open opens the swarm (parse first), refusing in one line when this
// engine is no manager, and builds the image unless one is given. The
// caller removes what the run created with the sweep's own cleanup
// (sweep.Cluster).
func (f *swarmFlags) open(ctx context.Context, log io.Writer) (*sweep.Cluster, error) {
	cfg, allow := f.cfg, f.allowAddr
	sw, err := swarm.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("-swarm: %w", err)
	}
	cl := &sweep.Cluster{C: sw, Backend: "swarm", Lead: *f.lead, Tolerance: *f.tolerance, Allow: allow}
	// Where the load would go, before an image is built or placed.
	if err := cl.Check(ctx); err != nil {
		if errors.Is(err, plan.ErrPlan) {
			return nil, usageError("%v", err)
		}
		return nil, err
	}
	image := *f.image
	if image == "" {
		root, err := hellorun.ModuleRoot(ctx)
		if err != nil {
			return nil, fmt.Errorf("-swarm: building the image: %w (or give -swarm-image)", err)
		}
		fmt.Fprintf(log, "building the cluster's image from %s on %s\n", root, *f.base)
		t0 := time.Now()
		if image, err = swarm.BuildServerImage(ctx, cfg, root, "topobench/cluster", *f.base); err != nil {
			return nil, fmt.Errorf("-swarm: %w", err)
		}
		fmt.Fprintf(log, "built %s in %s\n", image, time.Since(t0).Round(100*time.Millisecond))
	}
	cl.Image = image
	return cl, nil
}

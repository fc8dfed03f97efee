package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cluster/swarm"
	"github.com/topobench/topobench/internal/hellorun"
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
}

func addSwarmFlags(fs *flag.FlagSet) *swarmFlags {
	return &swarmFlags{
		on:        fs.Bool("swarm", false, "run on the Docker Swarm whose manager this engine is: the servers on the node labelled topobench.role=server, the load (-load builtin) from every node labelled topobench.role=load (README: Several machines)"),
		engines:   fs.String("swarm-engines", "", "with -swarm: comma-separated NODE=ENGINE pairs, how to reach each other node's Docker engine (ssh://user@host, tcp://, unix://) to place the image and read its clock; NODE is its ID or hostname"),
		image:     fs.String("swarm-image", "", "with -swarm: an image already on the manager's engine holding hello, procd, topobench and nginx (default: built from this checkout on -swarm-base)"),
		base:      fs.String("swarm-base", swarm.DefaultBase, "with -swarm: the Debian image the servers' image is built on (compose/base-images.sh makes the default)"),
		lead:      fs.Duration("swarm-lead", 0, "with -swarm: how far ahead of the load jobs' creation their common start lies (default 3s)"),
		tolerance: fs.Duration("swarm-tolerance", 0, "with -swarm: how much later than the common start a load node may begin before its run fails (default 50ms)"),
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

// open opens the swarm, refusing in one line when this engine is no
// manager, and builds the image unless one is given. The caller removes
// what the run created with the sweep's own cleanup (sweep.Cluster).
func (f *swarmFlags) open(ctx context.Context, log io.Writer) (*sweep.Cluster, error) {
	cfg := swarm.Config{Engines: map[string]string{}}
	for _, pair := range sweep.ParseList(*f.engines) {
		node, addr, ok := strings.Cut(pair, "=")
		if !ok || node == "" || addr == "" {
			return nil, usageError("-swarm-engines: %q is not NODE=ENGINE", pair)
		}
		cfg.Engines[node] = addr
	}
	sw, err := swarm.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("-swarm: %w", err)
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
	return &sweep.Cluster{C: sw, Backend: "swarm", Image: image, Lead: *f.lead, Tolerance: *f.tolerance}, nil
}

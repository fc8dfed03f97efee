package rig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/netns"
	"github.com/topobench/topobench/internal/plan"
	"github.com/topobench/topobench/internal/preflight"
	"github.com/topobench/topobench/internal/proc"
)

// CreateNetns removes the namespaces dead runs left behind, creates this
// run's pair, each packet delayed by delay on each end, and gives both
// namespaces the network settings sysctls (NamespaceSysctls); the sweep
// points the layout's load-facing address at the veth (LoadTarget) and
// closes the pair whatever happens (CloseNetns).
func (r *Rig) CreateNetns(ctx context.Context, delay time.Duration, sysctls map[string]string) error {
	removed, err := netns.Cleanup(ctx)
	if len(removed) > 0 {
		fmt.Fprintf(r.Log, "removed network namespaces left by runs that died: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		r.Warn("cleaning up old network namespaces: %v", err)
	}
	p, err := netns.Create(ctx, netns.Options{Delay: delay})
	if errors.Is(err, netns.ErrNoNetem) {
		return plan.Errorf(plan.LinkDelay, "%s: %w (run without -link-delay)", delay, err)
	}
	if err != nil {
		return fmt.Errorf("creating network namespaces (-isolate none avoids them): %w", err)
	}
	r.pair, r.nsSysctls = p, sysctls
	for _, ns := range []string{p.Server, p.Client} {
		if err := copySysctls(ctx, ns, sysctls); err != nil {
			r.Warn("%v", err)
		}
	}
	note := ""
	if p.Delay > 0 {
		note = " delaying each packet " + p.Delay.String() + " on each end"
	}
	fmt.Fprintf(r.Progress, "isolation: servers in network namespace %s (%s), load generator in %s (%s), over a veth%s\n",
		p.Server, p.ServerAddr, p.Client, p.ClientAddr, note)
	return nil
}

// NamespaceSysctls is what the run's namespaces get: they are the run's
// own, so they take the reference tuning (sysctl.conf's network settings)
// whatever the host has, where a new namespace would start at the
// kernel's defaults. Two settings go further: net.core.somaxconn holds
// nginx's listen backlog (the kernel caps every backlog at it), and
// net.ipv4.tcp_tw_reuse is 1, since the veth is not loopback, the only
// traffic whose TIME_WAIT ports 2 reuses. Settings sysctl.conf does not
// name keep the host's value.
func NamespaceSysctls(host map[string]string, wanted []preflight.Setting, backlog int) map[string]string {
	out := maps.Clone(host)
	if out == nil {
		out = map[string]string{}
	}
	for _, w := range wanted {
		if strings.HasPrefix(w.Name(), "net.") {
			out[w.Name()] = w.Value
		}
	}
	if v, err := strconv.Atoi(out["net.core.somaxconn"]); err != nil || v < backlog {
		out["net.core.somaxconn"] = strconv.Itoa(backlog)
	}
	out["net.ipv4.tcp_tw_reuse"] = "1"
	return out
}

// copySysctls writes the harness's per-namespace network settings (backlog,
// port range, TIME_WAIT reuse...) into a new namespace, which starts with
// the kernel's defaults; preflight checked the harness's. Settings that are
// not per namespace are absent inside one and skipped (sysctl -e).
func copySysctls(ctx context.Context, ns string, sysctls map[string]string) error {
	var args []string
	for k, v := range sysctls {
		if strings.HasPrefix(k, "net.") && v != "unavailable" && v != "" {
			args = append(args, k+"="+v)
		}
	}
	if len(args) == 0 {
		return nil
	}
	sort.Strings(args)
	if _, err := exec.LookPath("sysctl"); err != nil {
		return fmt.Errorf("copying network settings into namespace %s: sysctl not found in PATH (procps: .ci/install-tools)", ns)
	}
	p, err := proc.Start(ctx, "sysctl", append([]string{"-q", "-e", "-w"}, args...), proc.Options{NetNS: ns, Grace: 2 * time.Second})
	if err == nil {
		err = p.Wait()
	}
	if err != nil {
		return fmt.Errorf("copying network settings into namespace %s: %w", ns, err)
	}
	return nil
}

// NetnsSysctls are the network settings the run's namespaces were given;
// nil without them.
func (r *Rig) NetnsSysctls() map[string]string {
	if r == nil {
		return nil
	}
	return r.nsSysctls
}

// CloseNetns removes the run's namespaces; anything still inside is
// killed and reported.
func (r *Rig) CloseNetns() {
	if r == nil || r.pair == nil {
		return
	}
	if err := r.pair.Close(); err != nil {
		fmt.Fprintf(r.Log, "warning: %v\n", err)
	}
}

// Isolated reports whether the servers have a network namespace of the
// run's own (-isolate netns).
func (r *Rig) Isolated() bool { return r != nil && r.pair != nil }

// ServerNS and ClientNS are the namespaces of the servers and of the load
// generator; empty without isolation.
func (r *Rig) ServerNS() string {
	if !r.Isolated() {
		return ""
	}
	return r.pair.Server
}

func (r *Rig) ClientNS() string {
	if !r.Isolated() {
		return ""
	}
	return r.pair.Client
}

// LoadTarget is the one non-loopback address the load may go to: the
// server end of the run's own veth; invalid without isolation.
func (r *Rig) LoadTarget() netip.Addr {
	if !r.Isolated() {
		return netip.Addr{}
	}
	return r.pair.ServerAddr
}

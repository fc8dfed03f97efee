package sweep

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
	"github.com/topobench/topobench/internal/results"
)

// chooseIsolation settles -isolate before anything is created: network
// namespaces where the harness may create them, loopback elsewhere, with
// agents (the servers run in other containers), and for a resumed sweep
// begun before isolation was recorded.
func (s *sweep) chooseIsolation() error {
	iso := s.plan.Isolation
	can, why := netns.Possible()
	switch {
	case iso == "" && s.Resume:
		iso = results.IsolateNone // recorded before isolation existed: loopback
	case iso == "" && s.HelloAgent != "":
		iso = results.IsolateNone
	case iso == "" && !can:
		iso = results.IsolateNone
		fmt.Fprintf(s.Log, "note: -isolate none: %s; the load generator and the servers share loopback\n", why)
	case iso == "":
		iso = results.IsolateNetns
	case iso == results.IsolateNetns && !can:
		return plan.Errorf(plan.Isolate, "netns: %s (-isolate none shares loopback)", why)
	}
	if iso == results.IsolateNone && s.plan.LinkDelay > 0 {
		return plan.Errorf(plan.LinkDelay, "needs -isolate netns, and this run shares loopback (-isolate none)")
	}
	s.plan.Isolation = iso
	s.env.Plan.Isolation = iso
	return nil
}

// createNetns removes the namespaces dead runs left behind, creates this
// run's pair and gives both namespaces the harness's network settings;
// prepare points the layout's load-facing address at the veth. Run closes the
// pair whatever happens.
func (s *sweep) createNetns(ctx context.Context, sysctls map[string]string) error {
	removed, err := netns.Cleanup(ctx)
	if len(removed) > 0 {
		fmt.Fprintf(s.Log, "removed network namespaces left by runs that died: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		s.warn("cleaning up old network namespaces: %v", err)
	}
	p, err := netns.Create(ctx, netns.Options{Delay: s.plan.LinkDelay})
	if errors.Is(err, netns.ErrNoNetem) {
		return plan.Errorf(plan.LinkDelay, "%s: %w (run without -link-delay)", s.plan.LinkDelay, err)
	}
	if err != nil {
		return fmt.Errorf("creating network namespaces (-isolate none avoids them): %w", err)
	}
	s.pair = p
	for _, ns := range []string{p.Server, p.Client} {
		if err := copySysctls(ctx, ns, sysctls); err != nil {
			s.warn("%v", err)
		}
	}
	delay := ""
	if p.Delay > 0 {
		delay = " delaying each packet " + p.Delay.String() + " on each end"
	}
	fmt.Fprintf(s.Progress, "isolation: servers in network namespace %s (%s), load generator in %s (%s), over a veth%s\n",
		p.Server, p.ServerAddr, p.Client, p.ClientAddr, delay)
	return nil
}

// namespaceSysctls is what the run's namespaces get: they are the run's
// own, so they take the reference tuning (sysctl.conf's network settings)
// whatever the host has, where a new namespace would start at the
// kernel's defaults. Two settings go further: net.core.somaxconn holds
// nginx's listen backlog (the kernel caps every backlog at it), and
// net.ipv4.tcp_tw_reuse is 1, since the veth is not loopback, the only
// traffic whose TIME_WAIT ports 2 reuses. Settings sysctl.conf does not
// name keep the host's value.
func namespaceSysctls(host map[string]string, wanted []preflight.Setting, backlog int) map[string]string {
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

// closeNetns removes the run's namespaces; anything still inside is killed
// and reported.
func (s *sweep) closeNetns() {
	if s.pair == nil {
		return
	}
	if err := s.pair.Close(); err != nil {
		fmt.Fprintf(s.Log, "warning: %v\n", err)
	}
}

// serverNS and clientNS are the namespaces of the servers and of the load
// generator; empty without isolation.
func (s *sweep) serverNS() string {
	if s.pair == nil {
		return ""
	}
	return s.pair.Server
}

func (s *sweep) clientNS() string {
	if s.pair == nil {
		return ""
	}
	return s.pair.Client
}

// loadTarget is the one non-loopback address the load may go to: the
// server end of the run's own veth; invalid without isolation.
func (s *sweep) loadTarget() netip.Addr {
	if s.pair == nil {
		return netip.Addr{}
	}
	return s.pair.ServerAddr
}

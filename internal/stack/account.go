package stack

import (
	"context"
	"errors"
	"fmt"
	"github.com/topobench/topobench/internal/cgroup"
	"time"
)

// ErrNoAccount is ServersCPU's error for a stack started without a
// control group to count its servers' CPU time (Config.Account).
var ErrNoAccount = errors.New("the servers are in no accounting group")

// join moves every process of srv (its root and what it has forked by
// now: nginx's workers once nginx answers) into the accounting group and
// the weighted one; what they fork later is born there. Nothing without
// a group.
func (s *Stack) join(srv Server) error {
	if srv == nil || srv.Pid() == 0 || notOurs(srv) {
		return nil
	}
	var groups []*cgroup.Group
	for _, g := range []*cgroup.Group{s.accountOf(srv), s.cfg.Weight} {
		if g != nil && (len(groups) == 0 || groups[0].Dir != g.Dir) {
			groups = append(groups, g)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	t, err := procfs.Tree(srv.Pid())
	if err != nil {
		return fmt.Errorf("placing %s in its control group: %w", srv.Name(), err)
	}
	for _, g := range groups {
		for _, p := range t.Procs {
			if err := g.Join(p.Pid); err != nil {
				return fmt.Errorf("placing %s in its control group: %w", srv.Name(), err)
			}
		}
	}
	return nil
}

// accountOf is the accounting group srv joins: its part of Account where
// the servers' time is split, else Account.
func (s *Stack) accountOf(srv Server) *cgroup.Group {
	part := s.cfg.ServerPart
	if s.nginx != nil && srv == s.nginx {
		part = s.cfg.NginxPart
	}
	if part != nil && s.cfg.Account != nil {
		return part
	}
	return s.cfg.Account
}

// ServersCPU is the CPU time every server process started here has used
// since it joined the accounting group, from the group's own counter
// (scheduler time, not ticks); ErrNoAccount without a group.
func (s *Stack) ServersCPU(context.Context) (time.Duration, error) {
	if s.cfg.Account == nil {
		return 0, ErrNoAccount
	}
	return s.cfg.Account.Usage()
}

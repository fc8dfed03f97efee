package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Weights. Groups that share CPUs split them, when both want more than
// their share, in proportion to their weights, whatever the count of
// threads in each: two groups of the default weight get half each. A
// duet (two servers measured at once) puts each side in a group of its
// own so that neither gets more of the CPUs by running more threads.

// DefaultSharesV1 and DefaultWeightV2 are the kernel's default CPU weight: cgroup v1's
// cpu.shares of 1024, v2's cpu.weight of 100.
const (
	DefaultSharesV1 = 1024
	DefaultWeightV2 = 100
)

// NewWeighted creates the group name at the root of h (the cpu
// controller's hierarchy, Find), with no quota and the default CPU
// weight written explicitly, so that siblings made here weigh alike. An
// empty group of that name left behind is removed first. Where h is also
// the accounting hierarchy (cpu and cpuacct mounted together, or cgroup
// v2), a group made there by NewAccount may be given its weight instead
// (SetDefaultWeight). The caller removes it.
func NewWeighted(h Hierarchy, name string) (*Group, error) {
	g, err := NewAccount(h, name)
	if err != nil {
		return nil, err
	}
	if err := g.SetDefaultWeight(); err != nil {
		_ = g.Remove(time.Second)
		return nil, err
	}
	return g, nil
}

// SetDefaultWeight writes the default CPU weight into the group. On
// cgroup v2 it first enables the cpu controller for the root's children.
func (g *Group) SetDefaultWeight() error {
	file, v := "cpu.shares", DefaultSharesV1
	if g.V2 {
		if err := write(filepath.Join(filepath.Dir(g.Dir), "cgroup.subtree_control"), "+cpu"); err != nil {
			return fmt.Errorf("enabling the cpu controller: %w", err)
		}
		file, v = "cpu.weight", DefaultWeightV2
	}
	if err := write(filepath.Join(g.Dir, file), strconv.Itoa(v)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("weighting cgroup %s: no %s: the cpu controller is not in this hierarchy", g.Dir, file)
		}
		return fmt.Errorf("weighting cgroup %s: %w", g.Dir, err)
	}
	return nil
}

// Weight reads the group's CPU weight (cpu.shares or cpu.weight).
func (g *Group) Weight() (int, error) {
	file := "cpu.shares"
	if g.V2 {
		file = "cpu.weight"
	}
	b, err := os.ReadFile(filepath.Join(g.Dir, file))
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("%s/%s: %q is not a weight", g.Dir, file, b)
	}
	return n, nil
}

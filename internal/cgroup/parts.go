package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Parts. An accounting group may hold child groups, one for each part of
// what it runs (nginx, and the backend behind it), each counting its own
// members' time in scheduler nanoseconds while the parent still counts
// them all. That splits the servers' time without changing how the
// scheduler shares the CPU, so only where the accounting hierarchy holds
// no cpu controller (cgroup v1 with cpuacct mounted on its own): in a
// hierarchy that also schedules, a child group would get a weight of its
// own.

// AccountsOnly reports whether h counts time and schedules nothing: a v1
// hierarchy without the cpu controller's files, where child groups do not
// change how the CPU is shared.
func (h Hierarchy) AccountsOnly() bool {
	if h.V2 || h.Root == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(h.Root, "cpu.shares"))
	return errors.Is(err, os.ErrNotExist)
}

// NewPart creates the child group name of an accounting group; the parent
// still counts its members' time. Remove on the parent removes it too.
func (g *Group) NewPart(name string) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup part name %q: want one path element", name)
	}
	c := &Group{Dir: filepath.Join(g.Dir, name), V2: g.V2}
	if err := os.Mkdir(c.Dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("creating cgroup part: %w", err)
	}
	return c, nil
}

// UserFile and SystemFile hold a v1 accounting group's user and system
// time in nanoseconds (ParseUsage reads either), which the kernel keeps
// from its ticks: they divide UsageFile's exact total, and need not add
// up to it. Empty on v2, whose cpu.stat holds both in one file.
func (g *Group) UserFile() string { return g.v1File("cpuacct.usage_user") }

func (g *Group) SystemFile() string { return g.v1File("cpuacct.usage_sys") }

func (g *Group) v1File(name string) string {
	if g.V2 {
		return ""
	}
	return filepath.Join(g.Dir, name)
}

// removeParts removes the child groups of dir, deepest first, waiting up
// to wait for each to empty.
func removeParts(dir string, wait time.Duration) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() {
			errs = append(errs, (&Group{Dir: filepath.Join(dir, e.Name())}).Remove(wait))
		}
	}
	return errors.Join(errs...)
}

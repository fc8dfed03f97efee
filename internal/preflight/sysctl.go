package preflight

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Setting is one "key = value" line of a sysctl.conf file.
type Setting struct {
	// Key as written, in dotted (net.core.somaxconn) or slashed
	// (net/core/somaxconn) form.
	Key string
	// Value with runs of blanks collapsed to one space.
	Value string
	// Line is the 1-based line number in the file.
	Line int
	// Comment is the comment block right above the line, without "# ".
	Comment string
	// IgnoreErrors is set by a leading "-": failing to apply it is fine.
	IgnoreErrors bool
}

// ProcPath is the setting's path under /proc/sys. As in sysctl.d(5), a key
// whose first separator is "/" is a path already; otherwise dots separate
// the components.
func (s Setting) ProcPath() string {
	i := strings.IndexAny(s.Key, "./")
	if i >= 0 && s.Key[i] == '/' {
		return s.Key
	}
	return strings.ReplaceAll(s.Key, ".", "/")
}

// Name is the key in dotted form, as sysctl(8) prints it.
func (s Setting) Name() string {
	return strings.ReplaceAll(s.ProcPath(), "/", ".")
}

// ParseSysctl reads a sysctl.conf file: "key = value" lines, blank lines
// and comment lines starting with "#" or ";". name prefixes errors
// ("sysctl.conf:12: ...").
func ParseSysctl(r io.Reader, name string) ([]Setting, error) {
	var out []Setting
	seen := map[string]int{}
	var comment []string
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
			comment = nil
			continue
		case line[0] == '#' || line[0] == ';':
			comment = append(comment, strings.TrimSpace(line[1:]))
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want key = value, got %q", name, n, line)
		}
		key, value = strings.TrimSpace(key), strings.Join(strings.Fields(value), " ")
		s := Setting{Line: n, Comment: strings.Join(comment, " ")}
		comment = nil
		if strings.HasPrefix(key, "-") {
			s.IgnoreErrors, key = true, strings.TrimSpace(key[1:])
		}
		switch {
		case key == "":
			return nil, fmt.Errorf("%s:%d: no key before =", name, n)
		case strings.ContainsAny(key, " \t*"):
			return nil, fmt.Errorf("%s:%d: key %q has blanks or a glob", name, n, key)
		case strings.Contains(key, ".."), strings.Contains(key, "//"),
			strings.HasPrefix(key, "."), strings.HasPrefix(key, "/"),
			strings.HasSuffix(key, "."), strings.HasSuffix(key, "/"):
			return nil, fmt.Errorf("%s:%d: malformed key %q", name, n, key)
		case value == "":
			return nil, fmt.Errorf("%s:%d: %s has no value", name, n, key)
		}
		s.Key, s.Value = key, value
		if prev, dup := seen[s.Name()]; dup {
			return nil, fmt.Errorf("%s:%d: %s already set on line %d", name, n, key, prev)
		}
		seen[s.Name()] = n
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
